"""The whole-workspace analysis deferred until a verdict needs it (issue 32
item 7, ``gates.analyzer.deferWorkspaceAnalysis``), with the real ruff and
basedpyright: a cold session's first change is baselined and judged file
by file while basedpyright checks only the files opened for it (nothing of
the rest of the package is analysed, so the verdict waits for none of it);
the run-start snapshot, once a verdict needs it, is taken after the change
and still judges against the state before it (the change's breakage past
its importers blocks, the files' old errors do not)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.analysis.gate import AnalyzerGate
from rein.disk.analyzers import AnalyzerPool
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.gating.gate_types import GateContext
from rein.harness.ports import Mutation, Writes
from tests.e2e.test_cold_baselines import FILLERS, UTIL, lines_of, package

pytestmark = pytest.mark.e2e

__all__ = ["package"]  # the fixture, shared with test_cold_baselines.py


async def test_the_verdict_does_not_wait_for_the_deferred_workspace_analysis(
    package: Path,
) -> None:
    coordinator: DiagnosticsCoordinator
    pool = AnalyzerPool(
        package,
        on_diagnostics_changed=lambda paths: coordinator.notify_diagnostics_changed(paths),
        defer_workspace=True,
    )
    coordinator = DiagnosticsCoordinator(pool, max_wait_ms=60_000)
    gate = AnalyzerGate(coordinator, settle_timeout_s=60)
    workspace = DiskWorkspace(package)
    fillers = {f"pkg/filler_{i}.py" for i in range(FILLERS)}

    async with pool:
        await gate.on_run_start(0)
        await gate.before_change(Writes(("pkg/util.py",)), workspace)
        (package / "pkg/util.py").write_text(UTIL.replace("def helper", "def helper_renamed"))
        mutation = Mutation(1, ("pkg/util.py",), "agent")
        pool.on_mutation(mutation)
        coordinator.notify_mutation(mutation)
        ctx = GateContext(1, frozenset(["pkg/util.py"]), workspace)

        first = await gate.check(ctx)
        assert lines_of(first) == [("pkg/app.py", 0)], first.detail
        assert "partial" in first.detail
        # Nothing past the change's files was analysed: no filler (each has
        # an error) was published, and the run-start snapshot was not taken.
        assert gate.baseline is None
        assert pool.workspace_deferred()
        published = {d.path for d in (await pool.snapshot()).diagnostics}
        assert not published & fillers, sorted(published & fillers)

        # A verdict that needs it takes it: the whole workspace is analysed
        # now, after the change, and judged against before it: uses.py's
        # new error (past the importers) blocks; the fillers' and util.py's
        # old errors do not.
        await gate.baseline_ready()
        assert not pool.workspace_deferred()
        assert gate.baseline is not None
        assert fillers <= {d.path for d in gate.baseline.diagnostics}
        second = await gate.check(ctx)
        assert "partial" not in second.detail
        assert lines_of(second) == [("pkg/app.py", 0), ("pkg/uses.py", 0)], second.detail
        assert second.unverified is None and not second.stale
