"""grep: ripgrep and the Python fallback give the same, bounded,
.gitignore-aware output."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from rein.harness.errors import SandboxError, ToolError
from rein.tools import GrepTool, grep
from rein.tools.grep import GrepBackend, find_ripgrep
from tests.fakes.tools import ToolCallRecorder

pytestmark = pytest.mark.usefixtures("ignore_tree")

#: Both backends run everywhere: the dev extra installs ripgrep (the
#: ``ripgrep`` package ships the rg binary into the venv), so no test skips.
BACKENDS: list[GrepBackend] = ["python", "rg"]

NEEDLE_EVERYWHERE = [
    ".hidden/h.py:1: needle hidden",
    "README.md:1: A needle in the readme",
    "a/b.py:1: def needle():",
    "a.py:2: needle = 1",
    "crlf.txt:1: needle",
    "keep.log:1: needle kept",
    "sub/deep/z.py:3: needle lower",
    "sub/root_only.txt:1: needle sub root",
    "sub/special.log:1: needle special",
    "[9 matches in 9 files]",
]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_gitignore_binary_git_and_protected_files_are_skipped(
    calls: ToolCallRecorder, backend: GrepBackend
) -> None:
    result = await calls.run(GrepTool(backend), pattern="needle")
    assert result.content.splitlines() == NEEDLE_EVERYWHERE
    assert result.details["backend"] == backend


@pytest.mark.parametrize("backend", BACKENDS)
async def test_output_is_bounded_and_says_so(calls: ToolCallRecorder, backend: GrepBackend) -> None:
    result = await calls.run(GrepTool(backend, max_matches=3), pattern="needle")
    assert result.content.splitlines() == [
        *NEEDLE_EVERYWHERE[:3],
        "[Output cut at 3 matches; there are more. Narrow the pattern, the path or the glob.]",
    ]
    assert result.details["truncated"] is True


@pytest.mark.parametrize("backend", BACKENDS)
async def test_invalid_regex_is_a_clear_error(
    calls: ToolCallRecorder, backend: GrepBackend
) -> None:
    with pytest.raises(ToolError, match=r"Invalid regular expression 'needle\(': .*literal=true"):
        await calls.run(GrepTool(backend), pattern="needle(")


QUERIES: list[dict[str, Any]] = [
    {"pattern": "needle"},
    {"pattern": "needle", "path": "sub", "case_insensitive": True},
    {"pattern": "needle", "path": "sub/deep"},
    {"pattern": "needle", "glob": "*.py"},
    {"pattern": "needle", "glob": "sub/**"},
    {"pattern": r"^def \w+\(\):$"},
    {"pattern": "needle(", "literal": True},
    {"pattern": "needle", "path": "a/b.py"},
    {"pattern": "needle", "path": "build"},
    {"pattern": "needle (?=lower)"},  # look-ahead: rg refuses, Python searches
    {"pattern": "zzz-no-match"},
    {"pattern": "^", "path": "a"},  # every line, and no phantom one after the last
    {"pattern": "^(x|foo)$", "path": "."},
]


def test_ripgrep_is_installed() -> None:
    rg = find_ripgrep()
    assert rg is not None, "rg not found: `make setup` installs the ripgrep package"
    version = subprocess.run([rg, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("ripgrep ")


@pytest.mark.parametrize("query", QUERIES, ids=[str(i) for i in range(len(QUERIES))])
async def test_ripgrep_and_python_give_identical_output(
    calls: ToolCallRecorder, query: dict[str, Any]
) -> None:
    from_rg = await calls.run(GrepTool("rg", max_matches=50), **query)
    from_python = await calls.run(GrepTool("python", max_matches=50), **query)
    assert from_rg.content == from_python.content
    assert {k: v for k, v in from_rg.details.items() if k != "backend"} == {
        k: v for k, v in from_python.details.items() if k != "backend"
    }


async def test_specific_results(calls: ToolCallRecorder) -> None:
    tool = GrepTool("python")
    upper = await calls.run(tool, pattern="needle", path="sub/deep", case_insensitive=True)
    assert upper.content.splitlines()[:2] == [
        "sub/deep/z.py:2: NEEDLE upper",
        "sub/deep/z.py:3: needle lower",
    ]
    by_glob = await calls.run(tool, pattern="needle", glob="*.py")
    assert [line.split(":")[0] for line in by_glob.content.splitlines()[:-1]] == [
        ".hidden/h.py",
        "a/b.py",
        "a.py",
        "sub/deep/z.py",
    ]
    lookahead = await calls.run(GrepTool("auto"), pattern="needle (?=lower)")
    assert lookahead.content.splitlines()[0] == "sub/deep/z.py:3: needle lower"
    none = await calls.run(tool, pattern="zzz", path="sub", glob="*.py")
    assert none.content == "No matches for 'zzz' in sub (files matching '*.py')."


async def test_long_matching_lines_are_cut(calls: ToolCallRecorder, write_files: Any) -> None:
    write_files({"min.js": "x" * 1000 + "needle" + "y" * 1000 + "\n"})
    result = await calls.run(GrepTool("python"), pattern="needle", path="min.js")
    line = result.content.splitlines()[0]
    assert line.startswith("min.js:1: xxx")
    assert line.endswith("... [1706 more chars]")


async def test_refusals(calls: ToolCallRecorder) -> None:
    with pytest.raises(ToolError, match=r"\.env is a secret file \(tools\.secretFiles"):
        await calls.run(GrepTool("python"), pattern="needle", path=".env")
    with pytest.raises(SandboxError):
        await calls.run(GrepTool("python"), pattern="root", path="/etc")
    with pytest.raises(ToolError, match="Path not found: nope"):
        await calls.run(GrepTool("python"), pattern="x", path="nope")


async def test_forced_rg_without_rg_is_an_error(
    calls: ToolCallRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep, "find_ripgrep", lambda: None)
    with pytest.raises(ToolError, match="rg is not on PATH"):
        await calls.run(GrepTool("rg"), pattern="needle")
    fallback = await calls.run(GrepTool("auto"), pattern="needle")
    assert fallback.details["backend"] == "python"
    assert fallback.content.splitlines() == NEEDLE_EVERYWHERE


@pytest.mark.parametrize("backend", ["auto", "rg"])
async def test_a_pattern_rg_refuses_is_searched_by_python(
    calls: ToolCallRecorder, root: Path, backend: GrepBackend
) -> None:
    pattern = "(?<=needle )lower"  # look-behind: rg's default engine has none
    rg = find_ripgrep()
    assert rg is not None
    refused = await anyio.run_process(
        [rg, "--no-config", "-e", pattern, "--", "."], cwd=root, check=False
    )
    assert refused.returncode == 2, refused.stdout
    assert b"look-around" in refused.stderr

    result = await calls.run(GrepTool(backend), pattern=pattern)
    assert result.details["backend"] == "python"
    assert result.content.splitlines() == [
        "sub/deep/z.py:3: needle lower",
        "[1 match in 1 file]",
    ]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_symlinks_are_not_followed(
    calls: ToolCallRecorder, backend: GrepBackend, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.txt").write_text("needle outside\n")
    (root / "link_out.txt").symlink_to(outside / "s.txt")
    (root / "dir_out").symlink_to(outside, target_is_directory=True)
    (root / "link_in.py").symlink_to(root / "a.py")
    result = await calls.run(GrepTool(backend), pattern="needle outside|needle = 1")
    assert result.content.splitlines() == ["a.py:2: needle = 1", "[1 match in 1 file]"]


async def test_a_search_gives_way_to_steering(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 15: grep awaits steering_arrived; a steer stops the search."""
    from rein.disk.disk_workspace import DiskWorkspace
    from rein.harness.tools import ToolEnvironment
    from rein.tools.grep import GrepTool
    from tests.fakes.tools import ToolCallRecorder

    (tmp_path / "a.py").write_text("needle\n")
    run = ToolCallRecorder(ToolEnvironment(workspace=DiskWorkspace(tmp_path)))
    run.steering.set()  # steering arrived before the search could finish
    result = await run.run(GrepTool(), pattern="needle")
    assert result.details == {"stopped_for_steering": True}
    assert "the person sent a message" in result.content
