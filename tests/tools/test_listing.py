"""list_dir and glob: the tree on disk, .gitignore-aware and bounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.harness.errors import SandboxError, ToolError
from rein.tools import GlobTool, ListDirTool
from tests.fakes.tools import ToolCallRecorder

pytestmark = pytest.mark.usefixtures("ignore_tree")


async def test_list_dir_skips_ignored_entries_and_says_how_many(calls: ToolCallRecorder) -> None:
    result = await calls.run(ListDirTool())
    assert result.content.splitlines() == [
        ". (10 entries)",
        "  .env (14 B, secret)",
        "  .gitignore (38 B)",
        "  .hidden/",
        "  README.md (23 B)",
        "  a/",
        "  a.py (21 B)",
        "  bin.dat (9 B)",
        "  crlf.txt (13 B)",
        "  keep.log (12 B)",
        "  sub/",
        "[4 entries ignored by .gitignore (or .git) not shown.]",
    ]


async def test_list_dir_applies_nested_gitignore_with_negation(calls: ToolCallRecorder) -> None:
    result = await calls.run(ListDirTool(), path="sub")
    names = [line.split(" (")[0].strip() for line in result.content.splitlines()[1:-1]]
    assert names == [".gitignore", "deep/", "root_only.txt", "special.log"]
    assert result.details == {"path": "sub", "entries": 4, "ignored": 2}


async def test_list_dir_is_bounded(calls: ToolCallRecorder) -> None:
    result = await calls.run(ListDirTool(max_entries=3))
    lines = result.content.splitlines()
    assert lines[1:4] == ["  .env (14 B, secret)", "  .gitignore (38 B)", "  .hidden/"]
    assert "[Output cut: 7 more entries not shown." in lines[4]


async def test_list_dir_errors(calls: ToolCallRecorder) -> None:
    with pytest.raises(ToolError, match=r"a\.py is a file, not a directory"):
        await calls.run(ListDirTool(), path="a.py")
    with pytest.raises(ToolError, match="Directory not found: nope"):
        await calls.run(ListDirTool(), path="nope")
    with pytest.raises(SandboxError):
        await calls.run(ListDirTool(), path="..")


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        pytest.param(
            "**/*.py", ".", [".hidden/h.py", "a/b.py", "a.py", "sub/deep/z.py"], id="globstar"
        ),
        pytest.param("*.py", ".", ["a.py"], id="top-level-only"),
        pytest.param("sub/**/*.log", ".", ["sub/special.log"], id="nested-negation"),
        pytest.param(
            "**/*.{md,txt}", ".", ["README.md", "crlf.txt", "sub/root_only.txt"], id="braces"
        ),
        pytest.param("*.log", "sub", ["sub/special.log"], id="from-a-directory"),
        pytest.param("*/*.py", ".", [".hidden/h.py", "a/b.py"], id="one-level"),
    ],
)
async def test_glob_respects_gitignore(
    calls: ToolCallRecorder, pattern: str, path: str, expected: list[str]
) -> None:
    result = await calls.run(GlobTool(), pattern=pattern, path=path)
    assert result.content.splitlines() == expected
    assert result.details["count"] == len(expected)


async def test_glob_is_bounded_and_says_so(calls: ToolCallRecorder) -> None:
    result = await calls.run(GlobTool(max_entries=2), pattern="**/*")
    lines = result.content.splitlines()
    assert lines[:2] == [".env", ".gitignore"]
    assert lines[2].startswith("[Output cut at 2 files; more match.")
    assert result.details["truncated"] is True


async def test_glob_no_match_and_refusals(calls: ToolCallRecorder) -> None:
    none = await calls.run(GlobTool(), pattern="**/*.rs")
    assert none.content == "No files match '**/*.rs'."
    missing_dir = await calls.run(GlobTool(), pattern="nope/*.py")
    assert "no directory nope" in missing_dir.content
    with pytest.raises(SandboxError, match="absolute"):
        await calls.run(GlobTool(), pattern="/etc/*")
    with pytest.raises(SandboxError, match=r"'\.\.'"):
        await calls.run(GlobTool(), pattern="../*")


async def test_list_dir_marks_symlinks(calls: ToolCallRecorder, root: Path) -> None:
    (root / "sub" / "alias.py").symlink_to(root / "a.py")
    (root / "sub" / "up").symlink_to(root, target_is_directory=True)
    result = await calls.run(ListDirTool(), path="sub")
    assert "  alias.py (symlink)" in result.content.splitlines()
    assert "  up/ (symlink)" in result.content.splitlines()
