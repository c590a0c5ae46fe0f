"""What a changed path is to the analyzers
(rein.harness.gating.analyzer_inputs): a module, a file they read besides
(a setting, a stub marker, an environment's file: the reach is not known),
or one they never read (a backup, a log, data: it reaches nothing), and
the importer closure the pool computes from it (disk.file_checks)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from rein.analysis.run_texts import unread_by
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS, AnalyzerSpec
from rein.disk.analyzers import AnalyzerPool
from rein.disk.file_checks import importer_closure
from rein.disk.file_presence import FilePresence
from rein.disk.importers import ImportIndex
from rein.disk.python_environment import PythonEnvironment
from rein.disk.ruff_extends import SETTINGS_NAMES, RuffExtends
from rein.harness.analyzer_servers import PRESETS
from rein.harness.gating.analyzer_inputs import analyzer_input, custom_analyzers

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
    # review23 F6: what the other presets read that was taken for prose or data.
    "compile_flags.txt",
    "sub/compile_commands.json",
    ".clangd",
    ".clang-tidy",
    "src/table.inc",
    "go.sum",
    "go.work",
    "vendor/modules.txt",
    "mod/vendor/modules.txt",
    ".eslintignore",
    ".gitignore",  # biome's vcs.useIgnoreFile
    "tsconfig.build.json",
    "package.json",
    "foo-stubs",  # a stub-only package's folder moved or deleted whole
    "typings/foo-stubs",
    "typings/foo-stubs/METADATA.toml",
    "typings/lib/py.typed",
    "typings/lib",
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
    "docs/notes.txt",
    "modules.txt",  # not vendor's
    "setup.cfg",  # no preset reads it (a configured analyzer may: CUSTOM_READ)
    "mypy.ini",
    "uv.lock",
]


@pytest.mark.parametrize(
    ("paths", "kind"), [(MODULES, "module"), (READ, "read"), (UNREAD, "unread")]
)
def test_what_each_path_is_to_the_analyzers(paths: list[str], kind: str) -> None:
    assert {p: analyzer_input(p) for p in paths} == dict.fromkeys(paths, kind)


#: What a configured analyzer that is no preset may read (pylsp's flake8
#: and mypy, a mypy server): with one, every path but a module is read.
CUSTOM_READ = ["setup.cfg", "mypy.ini", ".mypy.ini", "tox.ini", ".flake8", "CHANGES.md", "x.bak"]


def test_with_an_analyzer_that_is_no_preset_every_file_but_a_module_is_read() -> None:
    assert {p: analyzer_input(p, custom=True) for p in CUSTOM_READ} == dict.fromkeys(
        CUSTOM_READ, "read"
    )
    assert analyzer_input("pkg/util.py", custom=True) == "module"
    assert not custom_analyzers(p.name for p in PRESETS)
    assert custom_analyzers(["ruff", "pylsp"])


def pool(root: Path, analyzers: tuple[str, ...] = ("ruff", "basedpyright")) -> SimpleNamespace:
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    index = ImportIndex(files, lambda path: (root / path).read_text())
    specs = [SimpleNamespace(name=name) for name in analyzers]

    def read(path: str) -> str | None:
        return (root / path).read_text() if (root / path).is_file() else None

    presence = FilePresence(root)
    return SimpleNamespace(
        imports=index,
        presence=presence,
        specs=specs,
        read=read,
        ruff_extends=RuffExtends(root, read, lambda: presence.named(SETTINGS_NAMES)),
        # No interpreter: no environment's folders.
        python_env=PythonEnvironment(root, read, lambda path: False, which=lambda name: None),
    )


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


async def test_a_file_a_configured_analyzer_may_read_makes_the_reach_not_known(
    tmp_path: Path,
) -> None:
    (tmp_path / "lib.py").write_text("def greet() -> str:\n    return 'hi'\n")
    (tmp_path / "a.py").write_text("from lib import greet\n")
    (tmp_path / "setup.cfg").write_text("[flake8]\nmax-line-length = 10\n")
    (tmp_path / "compile_flags.txt").write_text("-DGREETING=0\n")
    presets = pool(tmp_path)
    assert await importer_closure(presets, ["lib.py", "setup.cfg"]) == {"lib.py", "a.py"}  # type: ignore[arg-type]
    assert await importer_closure(presets, ["compile_flags.txt"]) is None  # type: ignore[arg-type]
    custom = pool(tmp_path, ("ruff", "basedpyright", "pylsp"))
    assert await importer_closure(custom, ["lib.py", "setup.cfg"]) is None  # type: ignore[arg-type]


def test_the_pool_and_the_reach_count_a_configured_analyzer_that_is_no_preset(
    tmp_path: Path,
) -> None:
    pylsp = AnalyzerSpec(name="pylsp", command=("pylsp",), extensions=frozenset({".py"}))
    presets = AnalyzerPool(tmp_path)
    custom = AnalyzerPool(tmp_path, [*DEFAULT_ANALYZERS, pylsp])
    assert presets.analyzer_input("tox.ini") == "unread"
    assert custom.analyzer_input("tox.ini") == "read"
    # What the partial-importers check asks (rein.analysis.reach).
    assert unread_by(presets, "tox.ini") and unread_by(object(), "tox.ini")
    assert not unread_by(custom, "tox.ini")
