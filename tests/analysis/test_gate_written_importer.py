"""A file the run writes after it changed a file that file imports: its own
baseline is its state before the run, not its state with the earlier change
in place (an error that change caused in it would be taken for its own old
one, and the verdict would pass without looking)."""

from __future__ import annotations

from rein.analysis.gate import AnalyzerGate
from rein.harness.gating.gates import GateContext, GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from tests.analysis.test_gate_cold_owed import answers_late
from tests.analysis.test_gate_cold_start import OLD, A, B, C, D, cold_world, lines
from tests.fakes.diagnostics import SettlingFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace
from tests.harness.test_gates_truth import diag

BROKEN_B = diag("pkg/b.py", 0, "b.py broken by the run's change of a.py", code="I")
RENAMED = A.replace("helper", "helper2")
BOTH = frozenset({"pkg/a.py", "pkg/b.py"})


async def a_then_b(workspace: TrackedWorkspace, source: SettlingFakeDiagnostics) -> None:
    """a.py's helper renamed (b.py breaks), then b.py written (a line that
    changes nothing)."""
    await workspace.write_text("pkg/a.py", RENAMED)
    source.diagnostics = [OLD, BROKEN_B]
    source.counterfactual = [OLD]  # a.py shown as it was: b.py is fine
    await workspace.write_text("pkg/b.py", B + "# touched\n")


async def test_an_owed_importer_written_later_is_baselined_as_before_the_run() -> None:
    """Old (review13 F3): a cold write of a.py left b.py owed; b.py written
    next had its own baseline asked with a.py's change in place, and the
    error a.py's change caused in it never blocked."""
    workspace, source, gate = cold_world(settle_timeout_s=0.5)
    await gate.on_run_start(0)
    await a_then_b(workspace, source)
    outcome = await gate.check(GateContext(2, BOTH, workspace))
    assert lines(outcome) == [("pkg/b.py", 0)], outcome.detail
    assert gate.files["pkg/b.py"].diagnostics == ()


async def test_same_when_the_workspace_snapshot_is_had_by_the_verdict() -> None:
    """review13 F3b: the verdict judged on the whole workspace passed too."""
    workspace, source, gate = cold_world(settle_timeout_s=0.5)
    await gate.on_run_start(0)
    await a_then_b(workspace, source)
    source.workspace_analysed.set()
    outcome = await gate.check(GateContext(2, BOTH, workspace))
    assert lines(outcome) == [("pkg/b.py", 0)], outcome.detail


def warm_world(
    file_by_file: bool,
) -> tuple[TrackedWorkspace, SettlingFakeDiagnostics, AnalyzerGate]:
    workspace = TrackedWorkspace(
        FakeWorkspace({"pkg/a.py": A, "pkg/b.py": B, "pkg/c.py": C, "pkg/d.py": D}),
        MutationLog(),
    )
    source = SettlingFakeDiagnostics([OLD])
    source.file_by_file = file_by_file
    source.importers = {"pkg/a.py": ["pkg/b.py"]}
    source.opened = {"pkg/d.py"}
    gate = AnalyzerGate(source, settle_timeout_s=0.5)
    gates = GatePipeline([gate])

    async def before_change(paths: tuple[str, ...]) -> None:
        await gates.before_change(paths, workspace)

    workspace.before_change(before_change)
    return workspace, source, gate


async def test_a_written_importer_of_a_changed_file_is_asked_as_before_the_change() -> None:
    """Not cold, the whole workspace analysed at run start: b.py's own
    baseline is asked with a.py shown as it was, not with a.py changed."""
    workspace, source, gate = warm_world(file_by_file=False)
    await gate.on_run_start(0)
    await a_then_b(workspace, source)
    assert "snapshot_with pkg/a.py -> pkg/b.py" in source.log
    outcome = await gate.check(GateContext(2, BOTH, workspace))
    assert lines(outcome) == [("pkg/b.py", 0)], outcome.detail


async def test_its_own_old_error_stays_old_and_a_file_importing_none_is_not_asked() -> None:
    """b.py's error from before the run (there with a.py as it was too) does
    not block; d.py, which imports no changed file, keeps its capture (the
    analyzers are not asked about it again)."""
    workspace, source, gate = warm_world(file_by_file=False)
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", RENAMED)
    source.diagnostics = [OLD, BROKEN_B]
    source.counterfactual = [OLD, BROKEN_B]  # b.py was broken before the run
    await workspace.write_text("pkg/b.py", B + "# touched\n")
    await workspace.write_text("pkg/d.py", D + "# touched\n")
    assert not any(e.startswith("snapshot_with") and "pkg/d.py" in e for e in source.log)
    ctx = GateContext(3, frozenset({"pkg/a.py", "pkg/b.py", "pkg/d.py"}), workspace)
    outcome = await gate.check(ctx)
    assert lines(outcome) == [], outcome.detail


async def test_an_owed_baseline_not_had_when_written_never_passes() -> None:
    """The owed ask of b.py's baseline, at its write, comes back past the
    bound: b.py's errors are not taken for old ones (they block)."""
    workspace, source, gate = cold_world(settle_timeout_s=0.5)
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", RENAMED)
    source.diagnostics = [OLD, BROKEN_B]
    source.counterfactual = [OLD]
    answers_late(source)
    await workspace.write_text("pkg/b.py", B + "# touched\n")
    source.workspace_analysed.set()
    outcome = await gate.check(GateContext(2, BOTH, workspace))
    assert lines(outcome) == [("pkg/b.py", 0)], outcome.detail


async def test_a_written_importer_opened_before_the_change_keeps_that_baseline() -> None:
    """Not cold, file by file: b.py was opened with a.py before a.py's
    change (``late``); written next, that is its own baseline."""
    workspace, source, gate = warm_world(file_by_file=True)
    await gate.on_run_start(0)
    await a_then_b(workspace, source)
    assert "pkg/b.py" in gate.late
    outcome = await gate.check(GateContext(2, BOTH, workspace))
    assert lines(outcome) == [("pkg/b.py", 0)], outcome.detail
