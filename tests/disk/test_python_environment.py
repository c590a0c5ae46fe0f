"""The environment basedpyright resolves imports from
(:mod:`rein.disk.python_environment`): the folders in the workspace its
``.pth`` files name and setuptools' ``package-dir`` as the scan's roots,
not known when they cannot be read, and an install into it seen by its site
folders' state. Real venvs (``--without-pip``), no analyzer."""

from __future__ import annotations

import asyncio
import os
import select
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from rein.disk.importers import ImportIndex
from rein.disk.pool_files import environment_changed
from rein.disk.python_environment import PythonEnvironment, interpreter_of


def _reader(root: Path) -> Callable[[str], str | None]:
    return lambda path: (root / path).read_text() if (root / path).is_file() else None


def _venv(folder: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120
    )
    (site,) = folder.glob("lib/python3*/site-packages")
    return site


def _environment(root: Path, skipped: Callable[[str], bool] = lambda p: False) -> PythonEnvironment:
    return PythonEnvironment(root, _reader(root), skipped, which=lambda name: None)


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with ``.venv`` (its site-packages) and ``lib/pkg``."""
    root = tmp_path / "w"
    (root / "lib" / "pkg").mkdir(parents=True)
    (root / "lib" / "pkg" / "__init__.py").write_text("")
    (root / "lib" / "pkg" / "mod.py").write_text("def go() -> int:\n    return 1\n")
    (root / "app.py").write_text("from pkg.mod import go\n")
    return root, _venv(root / ".venv")


def test_a_pth_file_naming_a_workspace_folder_makes_it_a_root(project: tuple[Path, Path]) -> None:
    root, site = project
    (site / "__editable__.pkg-0.1.pth").write_text(
        f"# a comment\nimport os; os.getcwd()\n{root / 'lib'}\n{root}\n{root.parent}\n"
    )
    environment = _environment(root)
    roots = environment.roots()
    # The root itself is the scan's, a folder outside the workspace is nobody's.
    assert roots == (("lib", ""),)
    index = ImportIndex(["app.py", "lib/pkg/__init__.py", "lib/pkg/mod.py"], _reader(root))
    assert index.closure(["lib/pkg/mod.py"]) == {"lib/pkg/mod.py"}
    assert index.closure(["lib/pkg/mod.py"], roots) == {"lib/pkg/mod.py", "app.py"}
    assert index.importers("lib/pkg/mod.py", 10, roots) == ["app.py"]


def test_setuptools_package_dir_makes_roots(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools]\npackage-dir = {"" = "lib", "extra" = "vendor/extra", "bad-name" = "x"}\n'
    )
    (tmp_path / "setup.cfg").write_text("[options]\npackage_dir =\n    =src\n    other = ../out\n")
    assert _environment(tmp_path).roots() == (("lib", ""), ("vendor/extra", "extra"))


@pytest.mark.parametrize(
    "files",
    [
        pytest.param({"pyproject.toml": "[tool.setuptools\n"}, id="pyproject"),
        pytest.param({"setup.cfg": "no section\n"}, id="setup.cfg"),
    ],
)
def test_settings_that_cannot_be_read_make_the_roots_not_known(
    tmp_path: Path, files: dict[str, str]
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert _environment(tmp_path).roots() is None


def test_a_pth_folder_the_filter_skips_makes_the_roots_not_known(
    project: tuple[Path, Path],
) -> None:
    root, site = project
    linked = root / "build" / "__editable__.pkg-0.1"
    linked.mkdir(parents=True)
    (site / "__editable___pkg_0_1.pth").write_text(f"{linked}\n")
    assert _environment(root, lambda p: p.startswith("build/")).roots() is None


def test_an_interpreter_that_cannot_be_asked_makes_the_roots_not_known(tmp_path: Path) -> None:
    broken = tmp_path / "python3"
    broken.write_text("#!/bin/sh\nexit 1\n")
    broken.chmod(0o755)
    environment = PythonEnvironment(
        tmp_path, _reader(tmp_path), lambda p: False, which=lambda n: str(broken)
    )
    assert environment.roots() is None


def test_the_settings_venv_is_the_interpreter(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    _venv(tmp_path / "envs" / "one")
    _venv(root / ".venv")
    assert interpreter_of(root, _reader(root), lambda n: None) == root / ".venv" / "bin" / "python"
    (root / "pyproject.toml").write_text(
        f'[tool.basedpyright]\nvenvPath = "{tmp_path / "envs"}"\nvenv = "one"\n'
    )
    assert interpreter_of(root, _reader(root), lambda n: None) == (
        tmp_path / "envs" / "one" / "bin" / "python"
    )


def test_an_install_is_seen_once_and_the_roots_worked_out_again(
    project: tuple[Path, Path],
) -> None:
    root, site = project
    environment = _environment(root)
    environment.look()
    assert environment.roots() == ()
    assert environment.changed() == []
    (site / "fancylib").mkdir()  # what pip adds
    (site / "__editable__.pkg-0.1.pth").write_text(f"{root / 'lib'}\n")
    assert environment.changed() == [str(site)]
    assert environment.changed() == []  # seen
    assert environment.roots() == (("lib", ""),)


def test_watched_while_its_interpreter_is_the_one_looked_at(
    project: tuple[Path, Path], tmp_path: Path
) -> None:
    """What lets a verdict after a command take the baselines' tree
    (:mod:`rein.analysis.restored`): every change there is counted."""
    root, site = project
    environment = _environment(root)
    assert not environment.watched()  # not looked at yet
    environment.look()
    assert environment.watched()
    (site / "fancylib").mkdir()
    assert environment.watched()
    assert environment.changes() == 1  # counted, so still watched
    _venv(tmp_path / "envs" / "other")
    (root / "pyproject.toml").write_text(
        f'[tool.basedpyright]\nvenvPath = "{tmp_path / "envs"}"\nvenv = "other"\n'
    )
    assert not environment.watched()  # basedpyright now takes another one


def test_without_an_interpreter_nothing_is_watched(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    environment = _environment(root)
    environment.look()
    assert not environment.watched()
    _venv(root / ".venv")  # a command makes one
    assert not environment.watched()


def _marker_python(path: Path, marker: Path, answer: str) -> None:
    """An interpreter that notes it ran in ``marker`` and answers ``answer``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho ran >> {marker}\necho '{answer}'\n")
    path.chmod(0o755)


@pytest.mark.parametrize("site_there", [True, False], ids=["site-packages", "none"])
def test_an_interpreter_in_the_workspace_is_never_run(tmp_path: Path, site_there: bool) -> None:
    """A ``.venv/bin/python`` with no ``pyvenv.cfg`` (a command may have
    written it): its site folders are read from its tree, or not known;
    before, it was run with the server's rights."""
    root = tmp_path / "w"
    marker = tmp_path / "ran"
    _marker_python(root / ".venv" / "bin" / "python", marker, '["/x", []]')
    if site_there:
        site = root / ".venv" / "lib" / "python3.12" / "site-packages"
        site.mkdir(parents=True)
        (root / "lib").mkdir()
        (site / "e.pth").write_text(f"{root / 'lib'}\n")
    roots = _environment(root).roots()
    assert not marker.exists()
    assert roots == ((("lib", ""),) if site_there else None)


def test_an_interpreter_outside_the_workspace_is_asked_and_its_group_killed(
    tmp_path: Path,
) -> None:
    """One outside the workspace (on PATH) is asked, in its own session:
    what it leaves running is killed with it."""
    root = tmp_path / "w"
    root.mkdir()
    marker = tmp_path / "ran"
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    # It answers, and leaves a child behind that would note it outlived it.
    python.write_text(
        f"#!/bin/sh\necho ran >> {marker}\n"
        f"(sleep 30; echo outlived >> {marker}) >/dev/null &\n"
        "echo $! > " + str(tmp_path / "child") + "\n"
        f"echo '[\"{tmp_path}\", []]'\n"
    )
    python.chmod(0o755)
    environment = PythonEnvironment(
        root, _reader(root), lambda p: False, which=lambda n: str(python)
    )
    assert environment.roots() == ()
    assert marker.read_text() == "ran\n"
    child = int((tmp_path / "child").read_text())
    try:
        handle = os.pidfd_open(child)
    except ProcessLookupError:
        return  # gone already
    try:
        # Readable when it ends: killed, well before its 30 s sleep ends.
        assert select.select([handle], [], [], 20)[0] == [handle]
    finally:
        os.close(handle)


async def test_the_change_check_runs_off_the_event_loop(tmp_path: Path) -> None:
    """``environment_changed`` asks ``changed()`` in a worker thread: it
    waits while a slow interpreter is asked (up to 10 s), and the event
    loop goes on meanwhile. Here ``changed()`` waits for a callback the
    loop runs; on the loop itself it waited out its bound."""
    released = threading.Event()
    got: list[bool] = []

    class Environment:
        def changed(self) -> list[str]:
            got.append(released.wait(5))
            return []

    class Pool:
        root = tmp_path
        analyzers: list[object] = []
        python_env = Environment()

        async def started(self) -> None:
            asyncio.get_running_loop().call_soon(released.set)

    await environment_changed(Pool(), [])  # type: ignore[arg-type]
    assert got == [True]
