"""Names that stay names: a file named with a newline (or another control
character, or bytes that are not UTF-8) is one entry of list_dir, glob and
grep, shown escaped on one line; it cannot pose as other entries, and a hard
link so named is still refused by grep (real files, real rg)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rein.tools import GlobTool, GrepTool, ListDirTool
from rein.tools._names import shown_name
from rein.tools.grep import GrepBackend
from tests.fakes.tools import ToolCallRecorder

BACKENDS: list[GrepBackend] = ["python", "rg"]
#: The note under a listing that shows an escaped name.
NOTE = "[Names with control characters or bytes that are not UTF-8 are shown escaped.]"


def _tree(root: Path, outside: Path) -> None:
    """a.py; "y\\nz.py" posing as the two entries "y" and "z.py"; a name
    with an escape sequence and a carriage return; one that is not UTF-8;
    and "x\\nb.txt", a hard link to a secret outside the workspace."""
    (root / "a.py").write_text("needle = 1\n")
    (root / "y\nz.py").write_text("needle in y-z\n")
    (root / "\x1b[2Kfake\rz.txt").write_text("needle in fake\n")
    with open(os.fsencode(root) + b"/caf\xe9.py", "wb") as handle:
        handle.write(b"needle in caf\xc3\xa9\n")
    outside.mkdir()
    (outside / "secret.txt").write_text("needle secret\n")
    os.link(outside / "secret.txt", root / "x\nb.txt")


@pytest.fixture
def named(root: Path, tmp_path: Path) -> Path:
    _tree(root, tmp_path / "outside")
    return root


def test_a_name_is_shown_on_one_line_and_plain_names_are_unchanged() -> None:
    assert shown_name("src/a b/ü.py") == "src/a b/ü.py"
    assert shown_name("a\\b") == "a\\b"  # no control character: as it is
    assert shown_name("y\nz.py") == "y\\nz.py"
    assert shown_name("\x1b[2K\rz\t.txt") == "\\x1b[2K\\rz\\t.txt"
    assert shown_name("a\\b\n") == "a\\\\b\\n"  # escaped: its backslash too
    assert shown_name(os.fsdecode(b"caf\xe9.py")) == "caf\\xe9.py"
    assert shown_name("a\u2028b\u202ec") == "a\\u2028b\\u202ec"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_reports_each_name_whole_and_keeps_refusing_a_hard_link(
    calls: ToolCallRecorder, named: Path, backend: GrepBackend
) -> None:
    result = await calls.run(GrepTool(backend), pattern="needle")
    assert result.content.splitlines() == [
        "\\x1b[2Kfake\\rz.txt:1: needle in fake",
        "a.py:1: needle = 1",
        "caf\\xe9.py:1: needle in café",
        "y\\nz.py:1: needle in y-z",
        "[4 matches in 4 files]",
        NOTE,
    ]
    assert "secret" not in result.content
    assert result.details["backend"] == backend


async def test_grep_on_a_hard_link_named_with_a_newline_is_refused(
    calls: ToolCallRecorder, named: Path
) -> None:
    from rein.harness.errors import ToolError

    with pytest.raises(ToolError, match="is not searched: it is a hard link"):
        await calls.run(GrepTool("rg"), pattern="needle", path="x\nb.txt")


async def test_list_dir_shows_one_line_per_entry(calls: ToolCallRecorder, named: Path) -> None:
    result = await calls.run(ListDirTool())
    assert result.content.splitlines() == [
        ". (5 entries)",
        "  \\x1b[2Kfake\\rz.txt (15 B)",
        "  a.py (11 B)",
        "  caf\\xe9.py (16 B)",
        "  x\\nb.txt (14 B)",
        "  y\\nz.py (14 B)",
        NOTE,
    ]


async def test_glob_shows_one_line_per_file(calls: ToolCallRecorder, named: Path) -> None:
    result = await calls.run(GlobTool(), pattern="**/*")
    assert result.content.splitlines() == [
        "\\x1b[2Kfake\\rz.txt",
        "a.py",
        "caf\\xe9.py",
        "x\\nb.txt",
        "y\\nz.py",
        NOTE,
    ]
    assert result.details["count"] == 5
    only_py = await calls.run(GlobTool(), pattern="*.py")
    assert only_py.content.splitlines() == ["a.py", "caf\\xe9.py", "y\\nz.py", NOTE]
