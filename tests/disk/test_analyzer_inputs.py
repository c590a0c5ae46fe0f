"""What a changed path is to the analyzers
(rein.harness.gating.analyzer_inputs): a module, a file they read besides
(a setting, a stub marker, an environment's file: the reach is not known),
or one they never read (a backup, a log, data: it reaches nothing), and
the importer closure the pool computes from it (disk.file_checks)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from rein.disk.file_checks import importer_closure
from rein.disk.file_presence import FilePresence
from rein.disk.importers import ImportIndex
from rein.harness.gating.analyzer_inputs import analyzer_input

MODULES = ["pkg/util.py", "pkg/__init__.pyi", "typings/lib/__init__.pyi"]
#: What ruff and basedpyright read besides modules, and what another preset does.
READ = [
    "pyproject.toml",
    "sub/ruff.toml",
    ".ruff.toml",
    "configs/base.toml",  # an extend's
    "pyrightconfig.json",
    ".basedpyright/baseline.json",
    "pkg/py.typed",
    "venv/lib/python3.12/site-packages/_editable.pth",
    "venv/lib/python3.12/site-packages/lib-1.0.dist-info/RECORD",
    "venv/pyvenv.cfg",
    "pkg/_speedups.cpython-312-x86_64-linux-gnu.so",
    "pkg/_speedups.pyd",
    "nb.ipynb",
    "requirements.txt",
    "deps/constraints.in",
    "pkg",  # a folder moved as a whole: may be a package
    "UTIL.PY",
    "web/app.ts",
    "go.mod",
    ".eslintrc.yml",
]
#: What no analyzer reads.
UNREAD = [
    "pkg/util.py.bak",
    ".coverage",
    ".coverage.host.123.456",
    "build.log",
    "w.egg-info/PKG-INFO",
    "w.egg-info/SOURCES.txt",
    "pkg/__pycache__/util.cpython-312.pyc",
    "data/points.csv",
    "docs/logo.png",
    "CHANGES.md",
    "setup.cfg",
    ".gitignore",
    "uv.lock",
]


@pytest.mark.parametrize(
    ("paths", "kind"), [(MODULES, "module"), (READ, "read"), (UNREAD, "unread")]
)
def test_what_each_path_is_to_the_analyzers(paths: list[str], kind: str) -> None:
    assert {p: analyzer_input(p) for p in paths} == dict.fromkeys(paths, kind)


def pool(root: Path) -> SimpleNamespace:
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    index = ImportIndex(files, lambda path: (root / path).read_text())
    return SimpleNamespace(imports=index, presence=FilePresence(root))


async def test_a_file_no_analyzer_reads_reaches_nothing(tmp_path: Path) -> None:
    (tmp_path / "lib.py").write_text("def greet() -> str:\n    return 'hi'\n")
    (tmp_path / "a.py").write_text("from lib import greet\n")
    (tmp_path / "b.py").write_text("x = 1\n")
    for name in ("lib.py.bak", ".coverage", "build.log", "pyrightconfig.json"):
        (tmp_path / name).write_text("{}\n")
    found = pool(tmp_path)
    unread = ["lib.py", "lib.py.bak", ".coverage", "build.log"]
    assert await importer_closure(found, unread) == {"lib.py", "a.py"}  # type: ignore[arg-type]
    assert await importer_closure(found, ["build.log"]) == set()  # type: ignore[arg-type]
    # A setting basedpyright reads: any file's analysis may change.
    assert await importer_closure(found, [*unread, "pyrightconfig.json"]) is None  # type: ignore[arg-type]
