"""Fixtures for the tool tests: a workspace on disk and a way to call tools."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.tools import ToolEnvironment
from tests.fakes.tools import ToolCallRecorder

WriteFiles = Callable[[dict[str, str | bytes]], None]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def write_files(root: Path) -> WriteFiles:
    def write(files: dict[str, str | bytes]) -> None:
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")

    return write


@pytest.fixture
def disk(root: Path) -> DiskWorkspace:
    return DiskWorkspace(root)


@pytest.fixture
def env(disk: DiskWorkspace) -> ToolEnvironment:
    return ToolEnvironment(workspace=disk)


@pytest.fixture
def calls(env: ToolEnvironment) -> ToolCallRecorder:
    return ToolCallRecorder(env)


#: A project with root and nested .gitignore files, hidden, binary and
#: protected files, for list_dir, glob and grep.
IGNORE_TREE: dict[str, str | bytes] = {
    ".gitignore": "build/\n*.log\n!keep.log\n/root_only.txt\n",
    ".git/config": "needle in git\n",
    ".hidden/h.py": "needle hidden\n",
    ".env": "needle=secret\n",
    "README.md": "A needle in the readme\n",
    "a.py": "import os\nneedle = 1\n",
    "a/b.py": "def needle():\n    pass\n",
    "build/out.py": "needle built\n",
    "debug.log": "needle log\n",
    "keep.log": "needle kept\n",
    "root_only.txt": "needle root\n",
    "crlf.txt": b"needle\r\nfoo\r\n",
    "bin.dat": b"needle\x00\x01\x02",
    "sub/.gitignore": "local.txt\n!special.log\n/deep/gen.txt\n",
    "sub/deep/gen.txt": "needle generated\n",
    "sub/deep/x.log": "needle deep log\n",
    "sub/root_only.txt": "needle sub root\n",
    "sub/local.txt": "needle local\n",
    "sub/special.log": "needle special\n",
    "sub/other.log": "needle other\n",
    "sub/deep/z.py": "x\nNEEDLE upper\nneedle lower\n",
}


@pytest.fixture
def ignore_tree(write_files: WriteFiles) -> None:
    write_files(IGNORE_TREE)
