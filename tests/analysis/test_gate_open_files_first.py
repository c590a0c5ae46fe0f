"""A write in open-files mode (past ``workspaceMaxFiles``) asks the written
file first, as a cold write in workspace mode does
(:mod:`rein.analysis.open_files_first`): its importers are opened, not
asked, before the write; a verdict that blocks on the file's own new errors
never asks them; one that does not asks their baseline with the file shown
as it was, and without it is never a pass."""

from __future__ import annotations

import asyncio

from rein.analysis.gate import AnalyzerGate
from rein.harness.gating.gates import GateContext, GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from tests.analysis.test_gate_cold_owed import answers_late
from tests.fakes.diagnostics import ColdFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace
from tests.harness.test_gates_truth import diag

A = "def f() -> int:\n    return 1\n"
FILES = {"pkg/a.py": A, "pkg/b.py": "from pkg.a import f\n\nx: int = f()\n", "pkg/d.py": "y = 1\n"}
OLD_B = diag("pkg/b.py", 0, "an error b.py had before the run", code="O")
OWN = diag("pkg/a.py", 2, "a.py's own new error", code="N")
BROKEN_B = diag("pkg/b.py", 2, '"str" is not assignable to "int"', code="R")
CTX_PATHS = frozenset({"pkg/a.py"})


class _OpenFilesOnly(ColdFakeDiagnostics):
    """Only the files opened are analysed (opening a file opens its
    importers), and the run-start analysis is done."""

    def analyses_open_files_only(self) -> bool:
        return True


async def _world() -> tuple[TrackedWorkspace, _OpenFilesOnly, AnalyzerGate]:
    workspace = TrackedWorkspace(FakeWorkspace(dict(FILES)), MutationLog())
    source = _OpenFilesOnly([OLD_B])
    source.file_by_file = True
    source.workspace_analysed.set()
    source.importers = {"pkg/a.py": ["pkg/b.py"]}
    source.texts_now = lambda: workspace.inner.files  # type: ignore[attr-defined]
    gate = AnalyzerGate(source, settle_timeout_s=0.5)
    gates = GatePipeline([gate])

    async def before_change(paths: tuple[str, ...]) -> None:
        await gates.before_change(paths, workspace)

    workspace.before_change(before_change)
    await gate.on_run_start(0)
    await gate.baseline_ready()
    source.log.clear()
    return workspace, source, gate


def _asked_b(log: list[str]) -> list[str]:
    return [e for e in log if e.startswith(("snapshot ", "snapshot_files")) and "pkg/b.py" in e]


async def test_a_write_with_its_own_error_blocks_without_asking_its_importers() -> None:
    """Old: b.py was asked (and waited for) before the write and again at
    the verdict: on sympy 22.6 s and 40.9 s for printing/latex.py's 30."""
    workspace, source, gate = await _world()
    await workspace.write_text("pkg/a.py", A + "z: int = 'x'\n")
    assert source.log == ["ensure_open pkg/a.py", "snapshot pkg/a.py"]
    assert "pkg/b.py" in source.opened  # opened with it, not asked
    source.diagnostics = [OLD_B, OWN]
    outcome = await asyncio.wait_for(gate.check(GateContext(1, CTX_PATHS, workspace)), 5)
    assert [(b.path, b.line) for b in outcome.blockers] == [("pkg/a.py", 2)], outcome.detail
    assert "1 importer(s) of them not checked yet" in outcome.detail
    assert _asked_b(source.log) == [], source.log
    assert "wait_idle" not in source.log


async def test_without_its_own_error_its_importers_are_judged_against_their_state_before() -> None:
    """b.py's baseline is asked at the verdict with a.py shown as it was:
    its old error does not block, the one the write caused does."""
    workspace, source, gate = await _world()
    await workspace.write_text("pkg/a.py", A.replace("int", "str"))
    source.diagnostics = [OLD_B, BROKEN_B]
    source.counterfactual = [OLD_B]
    outcome = await asyncio.wait_for(gate.check(GateContext(1, CTX_PATHS, workspace)), 5)
    assert [(b.path, b.line) for b in outcome.blockers] == [("pkg/b.py", 2)], outcome.detail
    assert "snapshot_files_with pkg/a.py -> pkg/b.py" in source.log


async def test_an_importer_whose_state_before_is_not_had_is_never_passed() -> None:
    """The owed ask of b.py's baseline comes back stale: the verdict is
    unverified, naming b.py, not a pass (its error may be the write's)."""
    workspace, source, gate = await _world()
    await workspace.write_text("pkg/a.py", A.replace("return 1", "return 2"))
    answers_late(source)
    source.counterfactual = [OLD_B]
    outcome = await asyncio.wait_for(gate.check(GateContext(1, CTX_PATHS, workspace)), 5)
    assert outcome.blockers == []
    assert outcome.unverified is not None and "pkg/b.py" in outcome.unverified, outcome.detail
