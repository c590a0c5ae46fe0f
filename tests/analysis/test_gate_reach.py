"""A cold partial verdict without blockers is completed over what the change
can reach (its importers, transitively, from the real import scan), file by
file, instead of waiting for the whole-workspace analysis (issue 32 item 7);
past what the closure can say, it waits as before and says why."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence

import pytest

from rein.analysis import reach_verdict
from rein.analysis.cold_start import WHOLE_WORKSPACE
from rein.analysis.gate import AnalyzerGate
from rein.disk.importers import ImportIndex
from rein.harness.gating import waiting
from rein.harness.gating.gates import GateContext, GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from tests.fakes.diagnostics import ColdFakeDiagnostics, RecordingProgress
from tests.fakes.workspace import FakeWorkspace
from tests.harness.test_gates_truth import diag

A = "def f() -> int:\n    return 1\n"
#: b.py returns a.f()'s result; c.py uses b's (two imports from a.py).
CHAIN = {
    "pkg/a.py": A,
    "pkg/b.py": "from pkg.a import f\n\ndef g():\n    return f()\n",
    "pkg/c.py": "from pkg.b import g\n\nx: int = g()\n",
    "pkg/d.py": "y: int = 'old'\n",
}
#: b.py star-re-exports a.py; c.py uses ``f`` through b.py.
STAR = {
    "pkg/a.py": A,
    "pkg/b.py": "from pkg.a import *\n",
    "pkg/c.py": "from pkg.b import f\n\nx: int = f()\n",
    "pkg/d.py": "y: int = 'old'\n",
}
OLD = diag("pkg/d.py", 0, "str is not int", code="R")
BROKEN_C = diag("pkg/c.py", 2, '"str" is not assignable to "int"', code="R")


class _Reaching(ColdFakeDiagnostics):
    """Its closure is the real import scan's of the workspace's files now."""

    async def importer_closure(self, paths: Sequence[str]) -> Collection[str] | None:
        files = dict(self.texts_now())
        return ImportIndex(sorted(files), files.get).closure(paths)


async def _retyped(
    files: dict[str, str],
) -> tuple[_Reaching, AnalyzerGate, GateContext, RecordingProgress]:
    """A cold run makes a.py's ``f`` return str: c.py breaks, b.py (a.py's
    only direct importer) does not; d.py has an old error out of reach. The
    workspace analysis never finishes."""
    workspace = TrackedWorkspace(FakeWorkspace(dict(files)), MutationLog())
    source = _Reaching([OLD])
    source.importers = {"pkg/a.py": ["pkg/b.py"], "pkg/b.py": ["pkg/c.py"]}
    source.texts_now = lambda: workspace.inner.files  # type: ignore[attr-defined]
    gate = AnalyzerGate(source)
    progress = RecordingProgress()
    gate.report_progress(progress)
    gates = GatePipeline([gate])

    async def before_change(paths: tuple[str, ...]) -> None:
        await gates.before_change(paths, workspace)

    workspace.before_change(before_change)
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", A.replace("int", "str"))
    source.diagnostics = [OLD, BROKEN_C]
    source.counterfactual = [OLD]  # the analyzers shown a.py as it was
    return source, gate, GateContext(1, frozenset({"pkg/a.py"}), workspace), progress


@pytest.mark.parametrize("files", [CHAIN, STAR], ids=["return-type-chain", "star-re-export"])
async def test_a_break_past_the_direct_importers_blocks_without_the_workspace_analysis(
    files: dict[str, str],
) -> None:
    """Old: the verdict waited for the whole-workspace analysis (here, for
    ever). Now c.py, reached through b.py, is asked file by file, as it is
    and as it was, and blocks; d.py (out of reach) is never asked."""
    source, gate, ctx, progress = await _retyped(files)
    outcome = await asyncio.wait_for(gate.check(ctx), 5)
    assert [(b.path, b.line) for b in outcome.blockers] == [("pkg/c.py", 2)], outcome.detail
    assert "judged on the 3 files the change can reach" in outcome.detail
    assert WHOLE_WORKSPACE not in progress.waits
    asked = [line for line in source.log if line.startswith("snapshot_files_with")]
    # b.py (the written file's importer, owed) has no error: not asked as it was.
    assert asked == ["snapshot_files_with pkg/a.py -> pkg/c.py"], source.log
    assert not any("pkg/d.py" in line for line in source.log)


async def test_a_change_that_breaks_nothing_it_can_reach_passes_without_the_workspace() -> None:
    """c.py has no error now: it cannot have a new one, and is not asked
    again as it was; the verdict is a pass that says what it judged."""
    source, gate, ctx, progress = await _retyped(CHAIN)
    source.diagnostics = [OLD]
    outcome = await asyncio.wait_for(gate.check(ctx), 5)
    assert outcome.blockers == [] and outcome.unverified is None and not outcome.stale
    assert "judged on the 3 files the change can reach" in outcome.detail
    assert "partial" not in outcome.detail
    assert "snapshot pkg/c.py" in source.log  # asked as it is
    assert "snapshot_files_with pkg/a.py -> pkg/c.py" not in source.log, source.log


async def test_past_the_closure_bound_the_verdict_waits_for_the_workspace_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reach_verdict, "CLOSURE_BOUND", 2)
    monkeypatch.setattr(waiting, "REPORT_AFTER_S", 0.0)  # every wait is reported
    source, gate, ctx, progress = await _retyped(CHAIN)
    check = asyncio.create_task(gate.check(ctx))
    await asyncio.wait_for(progress.waits[WHOLE_WORKSPACE].wait(), 5)
    assert not check.done()
    source.workspace_analysed.set()
    outcome = await check
    assert [(b.path, b.line) for b in outcome.blockers] == [("pkg/c.py", 2)], outcome.detail
    assert "waited for the whole-workspace analysis: the change can reach 3 files" in (
        outcome.detail
    )


class _OpenFilesOnly(_Reaching):
    """A workspace past ``workspaceMaxFiles``: only the files opened are
    analysed (opening a file opens its ``importers``); never cold."""

    def analyses_open_files_only(self) -> bool:
        return True

    async def open_with_importers(self, paths: Sequence[str]) -> Sequence[str]:
        return [p for p in await self.ensure_open(paths) if p not in paths]


async def test_with_open_files_only_a_break_past_the_opened_importers_blocks() -> None:
    """Old: only a.py and its direct importer b.py were opened and judged:
    the verdict passed with c.py broken. Now c.py, which the change can
    reach, is opened and judged as it is and as it was."""
    workspace = TrackedWorkspace(FakeWorkspace(dict(CHAIN)), MutationLog())
    source = _OpenFilesOnly([OLD])
    source.file_by_file = True
    source.workspace_analysed.set()
    source.importers = {"pkg/a.py": ["pkg/b.py"], "pkg/b.py": ["pkg/c.py"]}
    source.texts_now = lambda: workspace.inner.files  # type: ignore[attr-defined]
    gate = AnalyzerGate(source)
    gates = GatePipeline([gate])

    async def before_change(paths: tuple[str, ...]) -> None:
        await gates.before_change(paths, workspace)

    workspace.before_change(before_change)
    await gate.on_run_start(0)
    await gate.baseline_ready()
    await workspace.write_text("pkg/a.py", A.replace("int", "str"))
    source.diagnostics = [OLD, BROKEN_C]
    source.counterfactual = [OLD]
    ctx = GateContext(1, frozenset({"pkg/a.py"}), workspace)
    outcome = await asyncio.wait_for(gate.check(ctx), 5)
    assert [(b.path, b.line) for b in outcome.blockers] == [("pkg/c.py", 2)], outcome.detail
    assert "judged on the 3 files the change can reach" in outcome.detail
    assert "pkg/d.py" not in source.opened
