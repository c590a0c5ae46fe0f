"""edit_file and write_file: exact replacements through the Workspace port,
generations and mutations recorded, clear failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.errors import ToolError
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import Mutation
from rein.harness.run.run_record import ReadStamp, RunMutation
from rein.harness.tools import ToolEnvironment
from rein.tools import EditFileTool, WriteFileTool
from tests.fakes.tools import ToolCallRecorder
from tests.fakes.workspace import FakeWorkspace
from tests.tools.conftest import WriteFiles


@pytest.fixture
def env(disk: DiskWorkspace) -> ToolEnvironment:
    """The disk workspace as hosts give it to tools: tracked, so the run's
    record counts the changes (the tools call no record function)."""
    return ToolEnvironment(workspace=TrackedWorkspace(disk, MutationLog()))


SOURCE = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


async def test_edit_applies_records_and_shows_a_diff(
    calls: ToolCallRecorder, root: Path, write_files: WriteFiles
) -> None:
    write_files({"calc.py": SOURCE})
    result = await calls.run(
        EditFileTool(), path="calc.py", old_string="return a - b", new_string="return a - b  # ok"
    )
    assert not result.is_error
    assert (root / "calc.py").read_text() == SOURCE.replace("a - b", "a - b  # ok")
    assert result.details["generation"] == 1
    assert result.content.splitlines() == [
        "Edited calc.py: replaced 1 occurrence (from line 6; generation 1).",
        "--- a/calc.py",
        "+++ b/calc.py",
        "@@ -4,3 +4,3 @@",
        " ",
        " def sub(a, b):",
        "-    return a - b",
        "+    return a - b  # ok",
    ]
    assert calls.record.mutations == [RunMutation(Mutation(1, ("calc.py",), "agent"), "tool")]
    assert calls.record.read_stamps["calc.py"] == ReadStamp(1, None)


async def test_absent_old_string_says_how_to_recover(
    calls: ToolCallRecorder, write_files: WriteFiles
) -> None:
    write_files({"calc.py": SOURCE})
    with pytest.raises(ToolError) as caught:
        await calls.run(
            EditFileTool(),
            path="calc.py",
            old_string="def sub(a, b):\n  return a - b",
            new_string="x",
        )
    message = str(caught.value)
    assert message.startswith("old_string was not found in calc.py. Read the file again")
    assert "including indentation and whitespace" in message
    assert "appears (ignoring leading and trailing whitespace) at line 5" in message
    assert calls.record.mutations == []


async def test_non_unique_old_string_gives_count_and_lines(
    calls: ToolCallRecorder, root: Path, write_files: WriteFiles
) -> None:
    write_files({"calc.py": SOURCE})
    with pytest.raises(
        ToolError, match=r"occurs 2 times in calc.py \(at lines 1, 5\).*replace_all"
    ):
        await calls.run(
            EditFileTool(), path="calc.py", old_string="(a, b):", new_string="(a, b, c):"
        )
    assert (root / "calc.py").read_text() == SOURCE
    result = await calls.run(
        EditFileTool(), path="calc.py", old_string="(a, b):", new_string="(x, y):", replace_all=True
    )
    assert result.details["replacements"] == 2
    assert "replaced 2 occurrences" in result.content
    assert (root / "calc.py").read_text().count("(x, y):") == 2


async def test_pointless_edits_are_refused(
    calls: ToolCallRecorder, write_files: WriteFiles
) -> None:
    write_files({"calc.py": SOURCE})
    with pytest.raises(ToolError, match="identical: there is nothing to change"):
        await calls.run(EditFileTool(), path="calc.py", old_string="add", new_string="add")
    with pytest.raises(ToolError, match=r"old_string is empty\..*write_file"):
        await calls.run(EditFileTool(), path="calc.py", old_string="", new_string="x")
    with pytest.raises(ToolError, match=r"File not found: missing\.py"):
        await calls.run(EditFileTool(), path="missing.py", old_string="a", new_string="b")


async def test_crlf_files_accept_lf_old_strings(
    calls: ToolCallRecorder, root: Path, write_files: WriteFiles
) -> None:
    write_files({"win.txt": b"one\r\ntwo\r\nthree\r\n"})
    await calls.run(EditFileTool(), path="win.txt", old_string="one\ntwo", new_string="1\n2")
    assert (root / "win.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_goes_to_the_open_buffer_with_the_version_read() -> None:
    workspace = FakeWorkspace({"a.py": "x = 1\n"})
    workspace.person_edits("a.py", "x = 1\ny = 2\n")  # unsaved, version 1
    calls = ToolCallRecorder(ToolEnvironment(workspace=workspace))
    result = await calls.run(EditFileTool(), path="a.py", old_string="y = 2", new_string="y = 3")
    assert workspace.buffers["a.py"] == ("x = 1\ny = 3\n", 2)
    assert result.details["generation"] == 2


async def test_refused_write_is_a_readable_error() -> None:
    workspace = FakeWorkspace({"a.py": "x = 1\n"})
    workspace.refuse_next = "the editor rejected the edit"
    calls = ToolCallRecorder(ToolEnvironment(workspace=TrackedWorkspace(workspace, MutationLog())))
    with pytest.raises(ToolError, match="the editor rejected the edit"):
        await calls.run(EditFileTool(), path="a.py", old_string="1", new_string="2")
    assert calls.record.mutations == []


async def test_long_diffs_are_cut(calls: ToolCallRecorder, write_files: WriteFiles) -> None:
    write_files({"many.txt": "a\n" * 300})
    result = await calls.run(
        EditFileTool(), path="many.txt", old_string="a", new_string="b", replace_all=True
    )
    assert result.content.splitlines()[-1].startswith("[diff cut: ")
    assert len(result.content.splitlines()) <= 82


async def test_write_creates_parents_then_overwrites(calls: ToolCallRecorder, root: Path) -> None:
    created = await calls.run(WriteFileTool(), path="pkg/new/mod.py", content="a = 1\nb = 2\n")
    assert created.content == "Created pkg/new/mod.py (2 lines; generation 1)."
    assert created.details == {"path": "pkg/new/mod.py", "generation": 1, "created": True}
    assert (root / "pkg/new/mod.py").read_text() == "a = 1\nb = 2\n"
    again = await calls.run(WriteFileTool(), path="pkg/new/mod.py", content="c = 3")
    assert again.content == "Overwrote pkg/new/mod.py (1 line; generation 2)."
    assert (root / "pkg/new/mod.py").read_text() == "c = 3"
    assert [m.generation for m in calls.record.mutations] == [1, 2]
