"""The environment basedpyright resolves imports from, as the gate sees it
(:mod:`rein.disk.python_environment`), with the real basedpyright and a
deferred session (:mod:`tests.e2e.test_deferred_truth`'s):

* an editable install's ``.pth`` file (``package-dir = {"" = "lib"}``)
  names ``lib/`` in the project's ``.venv`` or in a venv outside the
  workspace that the settings name: ``lib/pkg/mod.py`` is ``pkg.mod``, and
  a break in its importer blocks (before, the reach was the changed file
  alone: "judged on the 1 files the change can reach", passed);
* a command's ``pip install`` into a venv outside the workspace (the one
  the settings name) is seen before the verdict: the import it made
  resolvable does not block (before, ``Import "fancylib" could not be
  resolved`` blocked at every verdict);
* a command's ``pip install -U`` that breaks an unchanged importer of the
  package blocks: after an environment change the reach is not known and
  the counterfactual keeps the error (before: "judged on the 1 files the
  change can reach", passed).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from rein.analysis.gate import AnalyzerGate
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.gating.gate_types import GateContext
from rein.harness.ports import Mutation, Writes
from tests.e2e.test_analyzer_environment import fancylib_wheel
from tests.e2e.test_deferred_truth import _change, _pool, _write

pytestmark = pytest.mark.e2e

PACKAGE = {
    "pyproject.toml": (
        '[project]\nname = "pkg"\nversion = "0.1"\n\n'
        '[tool.setuptools]\npackage-dir = {"" = "lib"}\n'
    ),
    "lib/pkg/__init__.py": "",
    "lib/pkg/mod.py": "def go(a: int) -> int:\n    return a\n",
    "app/__init__.py": "",
    "app/main.py": "from pkg.mod import go\n\nprint(go(1))\n",
}


def _venv(folder: Path, *, pip: bool = False) -> Path:
    """A venv at ``folder``; its site-packages."""
    args = [] if pip else ["--without-pip"]
    subprocess.run([sys.executable, "-m", "venv", *args, str(folder)], check=True, timeout=120)
    (site,) = folder.glob("lib/python3*/site-packages")
    return site


@pytest.mark.parametrize(
    ("outside", "package_dir"),
    [
        pytest.param(False, False, id=".venv"),
        pytest.param(True, False, id="venvPath"),
        pytest.param(False, True, id="package-dir"),
    ],
)
async def test_a_break_in_an_editable_install_s_folder_blocks(
    tmp_path: Path, outside: bool, package_dir: bool
) -> None:
    root = tmp_path / "w"
    files = dict(PACKAGE)
    if not package_dir:
        files["pyproject.toml"] = files["pyproject.toml"].split("[tool.setuptools]")[0]
    if outside:
        files["pyproject.toml"] += f'\n[tool.basedpyright]\nvenvPath = "{tmp_path}"\nvenv = "env"\n'
    _write(root, files)
    site = _venv(tmp_path / "env" if outside else root / ".venv")
    # What `pip install -e .` writes for a package-dir (setuptools' static .pth).
    (site / "__editable__.pkg-0.1.pth").write_text(f"{root / 'lib'}\n")
    renamed = files["lib/pkg/mod.py"].replace("def go", "def go_renamed")
    outcome = await _change(root, "lib/pkg/mod.py", renamed)
    assert [b.path for b in outcome.blockers] == ["app/main.py"], outcome.detail


async def test_a_command_s_install_into_a_venv_outside_the_workspace_resolves(
    tmp_path: Path,
) -> None:
    root = tmp_path / "w"
    _write(
        root,
        {
            "pyproject.toml": f'[tool.basedpyright]\nvenvPath = "{tmp_path}"\nvenv = "env"\n',
            "app.py": "print('hello')\n",
        },
    )
    _venv(tmp_path / "env", pip=True)
    wheels = tmp_path / "wheels"
    fancylib_wheel(wheels)
    pool, coordinator = _pool(root)
    gate = AnalyzerGate(coordinator, settle_timeout_s=60)
    workspace = DiskWorkspace(root)
    async with pool:
        await gate.on_run_start(0)
        await gate.before_change(Writes(("app.py",)), workspace)
        (root / "app.py").write_text("import fancylib\n\nprint(fancylib.VALUE)\n")
        mutation = Mutation(1, ("app.py",), "agent")
        pool.on_mutation(mutation)
        coordinator.notify_mutation(mutation)
        first = await gate.check(GateContext(1, frozenset(["app.py"]), workspace))
        assert [b.code for b in first.blockers] == ["reportMissingImports"], first.detail
        # The model's command: nothing in the workspace changes.
        pip = [str(tmp_path / "env" / "bin" / "python"), "-m", "pip", "install", "-q"]
        await anyio.run_process([*pip, "--no-index", "--find-links", str(wheels), "fancylib"])
        second = await gate.check(GateContext(1, frozenset(["app.py"]), workspace))
        gate.on_run_end()
    assert second.blockers == [], second.detail


def _fancylib(site: Path, version: str, param: str) -> None:
    """What ``pip install fancylib==<version>`` leaves in ``site``: ``f``
    takes a ``param``."""
    for old in site.glob("fancylib*"):
        shutil.rmtree(old)
    (site / "fancylib").mkdir()
    (site / "fancylib" / "__init__.py").write_text(f"def f(x: {param}) -> None: ...\n")
    (site / "fancylib" / "py.typed").write_text("")
    info = site / f"fancylib-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fancylib\nVersion: {version}\n")


@pytest.mark.parametrize("outside", [False, True], ids=[".venv", "venvPath"])
async def test_an_install_that_breaks_an_unchanged_importer_blocks(
    tmp_path: Path, outside: bool
) -> None:
    root = tmp_path / "w"
    files = {
        "pyproject.toml": '[project]\nname = "w"\nversion = "0"\n',
        "use.py": "from fancylib import f\n\nf(1)\n",
        "app.py": "print('hello')\n",
    }
    if outside:
        files["pyproject.toml"] = f'[tool.basedpyright]\nvenvPath = "{tmp_path}"\nvenv = "env"\n'
    _write(root, files)
    site = _venv(tmp_path / "env" if outside else root / ".venv")
    _fancylib(site, "1.0", "int")
    pool, coordinator = _pool(root)
    gate = AnalyzerGate(coordinator, settle_timeout_s=60)
    workspace = DiskWorkspace(root)
    async with pool:
        await gate.on_run_start(0)
        await gate.before_change(Writes(("app.py",)), workspace)
        _fancylib(site, "2.0", "str")  # the command's `pip install -U fancylib`
        (root / "app.py").write_text("print('hello, world')\n")
        mutation = Mutation(1, ("app.py",), "agent")
        pool.on_mutation(mutation)
        coordinator.notify_mutation(mutation)
        outcome = await gate.check(GateContext(1, frozenset(["app.py"]), workspace))
        gate.on_run_end()
    assert [(b.path, b.code) for b in outcome.blockers] == [("use.py", "reportArgumentType")], (
        outcome.detail
    )
