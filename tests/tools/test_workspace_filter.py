"""One filter for every listing: virtual environments (any name, found by
their pyvenv.cfg), build output, installed libraries and caches are skipped
by list_dir, glob and both grep backends, as by the analyzer pool and the
watcher (tests/e2e/test_analyzer_pool*.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rein.tools import GlobTool, GrepTool, ListDirTool
from rein.tools.grep import GrepBackend
from rein.tools.ignore import WorkspaceFilter
from tests.fakes.tools import ToolCallRecorder

#: A project with its own code next to environments and build output.
TREE: dict[str, str] = {
    "app.py": "needle = 1\n",
    "pkg/env_tools.py": "needle = 2\n",
    "venv/pyvenv.cfg": "home = /usr/bin\n",
    "venv/lib/python3.11/site-packages/lib.py": "needle = 3\n",
    "myenv/pyvenv.cfg": "home = /usr/bin\n",
    "myenv/lib/mod.py": "needle = 4\n",
    "env/x.py": "needle = 5\n",
    "build/lib/app.py": "needle = 6\n",
    "dist/pkg.py": "needle = 7\n",
    "vendor/site-packages/v.py": "needle = 8\n",
    "web/node_modules/m/index.py": "needle = 9\n",
    "pkg/__pycache__/c.py": "needle = 10\n",
    "generated/out.py": "needle = 11\n",
    ".gitignore": "generated/\n",
}
KEPT = ["app.py", "pkg/env_tools.py"]


@pytest.fixture
def tree(write_files: Callable[[dict[str, str]], None]) -> None:
    write_files(TREE)


@pytest.mark.usefixtures("tree")
async def test_list_dir_leaves_out_environments_and_build_output(
    calls: ToolCallRecorder,
) -> None:
    result = await calls.run(ListDirTool())
    names = [line.split(" (")[0].strip() for line in result.content.splitlines()[1:-1]]
    assert names == [".gitignore", "app.py", "pkg/", "vendor/", "web/"]
    assert result.details["ignored"] == 6


@pytest.mark.usefixtures("tree")
async def test_glob_leaves_out_environments_and_build_output(calls: ToolCallRecorder) -> None:
    result = await calls.run(GlobTool(), pattern="**/*.py")
    assert result.content.splitlines() == KEPT


@pytest.mark.usefixtures("tree")
@pytest.mark.parametrize("backend", ["python", "rg"])
async def test_grep_leaves_out_environments_and_build_output(
    calls: ToolCallRecorder, backend: GrepBackend
) -> None:
    result = await calls.run(GrepTool(backend), pattern="needle")
    assert result.content.splitlines() == [
        "app.py:1: needle = 1",
        "pkg/env_tools.py:1: needle = 2",
        "[2 matches in 2 files]",
    ]


@pytest.mark.usefixtures("tree")
@pytest.mark.parametrize("backend", ["python", "rg"])
async def test_a_skipped_folder_named_on_purpose_is_searched(
    calls: ToolCallRecorder, backend: GrepBackend
) -> None:
    result = await calls.run(GrepTool(backend), pattern="needle", path="myenv")
    assert result.content.splitlines()[0] == "myenv/lib/mod.py:1: needle = 4"


@pytest.mark.usefixtures("tree")
def test_the_filter_answers_for_any_path(root: Path) -> None:
    skip = WorkspaceFilter(root)
    assert skip.walk_files({".py"}) == KEPT
    assert sorted(skip.skipped_dirs) == [
        "build",
        "dist",
        "env",
        "generated",
        "myenv",
        "pkg/__pycache__",
        "vendor/site-packages",
        "venv",
        "web/node_modules",
    ]
    assert skip.skipped("myenv/lib/new.py")
    assert skip.skipped("generated/later.py")
    assert not skip.skipped("pkg/new.py")
    assert not skip.skipped("myenv/lib/mod.py", below="myenv")
    assert "myenv" in skip.exclude_globs() and "**/venv" in skip.exclude_globs()
