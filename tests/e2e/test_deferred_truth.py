"""The deferred whole-workspace analysis (``gates.analyzer.deferWorkspaceAnalysis``,
on by default) judged with the real ruff and basedpyright, where it was
found wrong (review24):

* a break in a module imported through a folder the import scan does not
  model (basedpyright's default stubPath ``typings/``, an ``extraPaths``
  folder) blocks: what the change reaches is not known, so the verdict
  waits for the whole workspace (F1);
* get_diagnostics waits for the analysis it starts: the first call of a
  session lists the workspace's error (F2);
* a change to the analyzers' settings waits for the run-start snapshot, so
  the errors the new settings add are the run's, not pre-existing (F4);
* the setting reaches the pool built by the hosts, off and on (F5).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.analysis.gate import AnalyzerGate
from rein.config import load_config
from rein.disk.analyzers import AnalyzerPool
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.gating.gate_types import GateContext, GateOutcome
from rein.harness.ports import Mutation, Writes
from rein.harness.tools import ToolEnvironment
from rein.hosting.workspace_host import WorkspaceHost
from rein.tools.diagnostics import GetDiagnosticsTool
from tests.fakes.tools import ToolCallRecorder

pytestmark = pytest.mark.e2e


def _write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def _pool(root: Path) -> tuple[AnalyzerPool, DiagnosticsCoordinator]:
    coordinator: DiagnosticsCoordinator
    pool = AnalyzerPool(
        root,
        on_diagnostics_changed=lambda paths: coordinator.notify_diagnostics_changed(paths),
        defer_workspace=True,
    )
    coordinator = DiagnosticsCoordinator(pool, max_wait_ms=60_000)
    return pool, coordinator


async def _change(root: Path, changed: str, new: str) -> GateOutcome:
    """The run writes ``new`` to ``changed`` in a deferred session; its
    first verdict."""
    pool, coordinator = _pool(root)
    gate = AnalyzerGate(coordinator, settle_timeout_s=60)
    workspace = DiskWorkspace(root)
    async with pool:
        await gate.on_run_start(0)
        await gate.before_change(Writes((changed,)), workspace)
        (root / changed).write_text(new)
        mutation = Mutation(1, (changed,), "agent")
        pool.on_mutation(mutation)
        coordinator.notify_mutation(mutation)
        outcome = await gate.check(GateContext(1, frozenset([changed]), workspace))
        gate.on_run_end()
        return outcome


@pytest.mark.parametrize(
    ("files", "changed"),
    [
        pytest.param(
            {
                "typings/fastlib.pyi": "def go(a: int) -> int: ...\n",
                "app/__init__.py": "",
                "app/main.py": "import fastlib\n\nx: int = fastlib.go(1)\n",
            },
            "typings/fastlib.pyi",
            id="stubPath",
        ),
        pytest.param(
            {
                "pyproject.toml": '[tool.basedpyright]\nextraPaths = ["lib"]\n',
                "lib/mylib.py": "def go(a: int) -> int:\n    return a\n",
                "app/__init__.py": "",
                "app/main.py": "from mylib import go\n\nprint(go(1))\n",
            },
            "lib/mylib.py",
            id="extraPaths",
        ),
        pytest.param(
            {
                "fastlib-stubs/__init__.pyi": "def go(a: int) -> int: ...\n",
                "app/__init__.py": "",
                "app/main.py": "import fastlib\n\nx: int = fastlib.go(1)\n",
            },
            "fastlib-stubs/__init__.pyi",
            id="stub-only package",
        ),
    ],
)
async def test_a_break_imported_past_the_scans_roots_blocks(
    tmp_path: Path, files: dict[str, str], changed: str
) -> None:
    _write(tmp_path, files)
    renamed = files[changed].replace("def go", "def go_renamed")
    outcome = await _change(tmp_path, changed, renamed)
    assert [b.path for b in outcome.blockers] == ["app/main.py"], outcome.detail
    assert "a folder the import scan does not follow" in outcome.detail, outcome.detail


async def test_a_settings_change_waits_for_the_run_start_snapshot(tmp_path: Path) -> None:
    """The run turns type checking on: a.py's old assignment is the run's
    error. The analyzers are told of the new settings as a watcher would
    (``environment_changed``). Without the snapshot taken before the write,
    the error is in the snapshot's "before the run" too, and passes."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[tool.basedpyright]\ntypeCheckingMode = 'off'\n",
            "pkg/__init__.py": "",
            "pkg/a.py": "X: int = 'no'\n",
            "pkg/b.py": "import os\n",  # ruff's F401, pre-existing
        },
    )
    pool, coordinator = _pool(tmp_path)
    gate = AnalyzerGate(coordinator, settle_timeout_s=60)
    workspace = DiskWorkspace(tmp_path)
    async with pool:
        await gate.on_run_start(0)
        await gate.before_change(Writes(("pyproject.toml",)), workspace)
        assert gate.baseline is not None  # taken before the write
        settings = "[tool.basedpyright]\ntypeCheckingMode = 'standard'\n"
        (tmp_path / "pyproject.toml").write_text(settings)
        # Not told to the coordinator: no analyzer publishes for a TOML file.
        pool.on_mutation(Mutation(1, ("pyproject.toml",), "agent"))
        await pool.environment_changed(["pyproject.toml"])
        outcome = await gate.check(GateContext(1, frozenset(["pyproject.toml"]), workspace))
        gate.on_run_end()
    assert [(b.path, b.code) for b in outcome.blockers] == [("pkg/a.py", "reportAssignmentType")], (
        outcome.detail
    )


async def test_get_diagnostics_waits_for_the_analysis_it_starts(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/broken.py": 'X: int = "no"\n',
            "pkg/fine.py": "Y: int = 1\n",
        },
    )
    pool, coordinator = _pool(tmp_path)
    async with pool:
        calls = ToolCallRecorder(
            ToolEnvironment(workspace=DiskWorkspace(tmp_path), diagnostics=coordinator)
        )
        result = await calls.run(GetDiagnosticsTool())
    assert "pkg/broken.py:1:10 error reportAssignmentType" in result.content, result.content
    assert result.details["stale"] is False


@pytest.mark.parametrize(
    ("settings", "defers"), [({}, True), ({"deferWorkspaceAnalysis": False}, False)]
)
def test_the_setting_reaches_the_hosts_pool(
    tmp_path: Path, settings: dict[str, bool], defers: bool
) -> None:
    config = load_config({"gates": {"analyzer": settings}})
    host = WorkspaceHost(tmp_path, config, lambda _config: None, analyzers=(), watch=False)  # type: ignore[arg-type,return-value]
    assert host.pool.defer_workspace is defers
