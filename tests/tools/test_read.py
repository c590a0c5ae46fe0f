"""read_file: the editor's view with line numbers, bounded, with clear
messages for what cannot be shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.harness.errors import ToolError
from rein.harness.run.run_record import ReadStamp
from rein.harness.tools import ToolEnvironment
from rein.tools import ReadFileTool
from rein.tools.settings import ToolSettings
from tests.fakes.tools import ToolCallRecorder
from tests.fakes.workspace import FakeWorkspace
from tests.tools.conftest import WriteFiles


async def test_unsaved_buffer_wins_over_the_disk_and_is_stamped() -> None:
    workspace = FakeWorkspace({"a.py": "on disk\n"})
    workspace.person_edits("a.py", "unsaved line 1\nunsaved line 2\n")
    calls = ToolCallRecorder(ToolEnvironment(workspace=workspace))
    result = await calls.run(ReadFileTool(), path="a.py")
    assert result.content == "     1\tunsaved line 1\n     2\tunsaved line 2"
    assert calls.record.read_stamps["a.py"] == ReadStamp(generation=1, version=1)
    assert result.details["version"] == 1


async def test_offset_and_limit_are_one_based_and_say_how_to_continue(
    calls: ToolCallRecorder, write_files: WriteFiles
) -> None:
    write_files({"n.txt": "".join(f"line {i}\n" for i in range(1, 11))})
    result = await calls.run(ReadFileTool(), path="n.txt", offset=3, limit=2)
    assert result.content.splitlines() == [
        "     3\tline 3",
        "     4\tline 4",
        "[Showing lines 3-4 of 10. Continue with offset=5.]",
    ]
    last = await calls.run(ReadFileTool(), path="n.txt", offset=9)
    assert last.content == "     9\tline 9\n    10\tline 10"


async def test_default_limit_is_2000_lines(
    calls: ToolCallRecorder, write_files: WriteFiles
) -> None:
    write_files({"long.txt": "x\n" * 2500})
    calls.env.settings = ToolSettings(max_tool_result_chars=1_000_000)
    result = await calls.run(ReadFileTool(), path="long.txt")
    assert result.details["end_line"] == 2000
    assert result.content.endswith("[Showing lines 1-2000 of 2500. Continue with offset=2001.]")


async def test_output_stops_at_the_result_budget(
    calls: ToolCallRecorder, write_files: WriteFiles
) -> None:
    write_files({"wide.txt": ("y" * 90 + "\n") * 100})
    calls.env.settings = ToolSettings(max_tool_result_chars=1_000)
    result = await calls.run(ReadFileTool(), path="wide.txt")
    end = result.details["end_line"]
    assert 1 <= end < 100
    assert len(result.content) <= 1_000
    assert f"Continue with offset={end + 1}." in result.content


async def test_long_lines_are_cut(calls: ToolCallRecorder, write_files: WriteFiles) -> None:
    write_files({"min.js": "a" * 5000 + "\nshort\n"})
    result = await calls.run(ReadFileTool(), path="min.js")
    first, second = result.content.splitlines()
    assert first == "     1\t" + "a" * 2000 + "... [3000 more characters on this line]"
    assert second == "     2\tshort"


async def test_crlf_is_not_shown(calls: ToolCallRecorder, write_files: WriteFiles) -> None:
    write_files({"win.txt": b"one\r\ntwo\r\n"})
    result = await calls.run(ReadFileTool(), path="win.txt")
    assert result.content == "     1\tone\n     2\ttwo"


async def test_binary_file_gets_a_message(calls: ToolCallRecorder, write_files: WriteFiles) -> None:
    write_files({"logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(100)})
    with pytest.raises(ToolError, match=r"logo\.png is a binary file \(1[0-9]{2} B\)"):
        await calls.run(ReadFileTool(), path="logo.png")


async def test_binary_text_from_an_open_buffer_gets_a_message() -> None:
    calls = ToolCallRecorder(ToolEnvironment(workspace=FakeWorkspace({"b.bin": "a\x00b"})))
    with pytest.raises(ToolError, match="binary file"):
        await calls.run(ReadFileTool(), path="b.bin")


async def test_huge_file_gets_a_message(calls: ToolCallRecorder, root: Path) -> None:
    (root / "big.log").write_bytes(b"0123456789abcde\n" * (3 * 1024 * 1024 // 16))
    with pytest.raises(ToolError, match=r"big\.log is 3\.0 MB, too large to read .* grep"):
        await calls.run(ReadFileTool(), path="big.log")


async def test_empty_missing_directory_and_past_the_end(
    calls: ToolCallRecorder, write_files: WriteFiles
) -> None:
    write_files({"empty.txt": "", "three.txt": "1\n2\n3\n", "pkg/x.py": ""})
    empty = await calls.run(ReadFileTool(), path="empty.txt")
    assert empty.content == "empty.txt is empty (0 lines)."
    with pytest.raises(ToolError, match=r"File not found: nope\.txt"):
        await calls.run(ReadFileTool(), path="nope.txt")
    with pytest.raises(ToolError, match=r"pkg is a directory.*list_dir"):
        await calls.run(ReadFileTool(), path="pkg")
    with pytest.raises(ToolError, match="offset 9 is past the end of the file: it has 3 lines"):
        await calls.run(ReadFileTool(), path="three.txt", offset=9)
