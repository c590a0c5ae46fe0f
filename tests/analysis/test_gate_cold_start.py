"""A cold session's first change is judged file by file; the whole-workspace
snapshot that completes after it was taken with the change in place
(issue 32). An error the change caused past its direct importers must not
be taken for a pre-existing one there."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from rein.analysis.cold_start import WHOLE_WORKSPACE
from rein.analysis.gate import AnalyzerGate
from rein.harness.events import GateResult
from rein.harness.gating import waiting
from rein.harness.gating.gates import GateContext, GatePipeline, build_repair_prompt
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import FileContent
from tests.fakes.diagnostics import ColdFakeDiagnostics, RecordingProgress
from tests.fakes.workspace import FakeWorkspace
from tests.harness.test_gates_truth import diag

A = "def helper() -> int:\n    return 1\n"
B = "from pkg.a import helper\n\n__all__ = ['helper']\n"
C = "from pkg.b import helper\n"
D = "x: int = 'old'\n"

#: c.py imports the name b.py re-exports from a.py: c is neither changed nor
#: a direct importer of a.py.
TRANSITIVE = diag("pkg/c.py", 0, '"helper" is unknown import symbol', code="I")
OLD = diag("pkg/d.py", 0, "str is not int", code="R")


def cold_world(
    settle_timeout_s: float = 120.0,
) -> tuple[TrackedWorkspace, ColdFakeDiagnostics, AnalyzerGate]:
    workspace = TrackedWorkspace(
        FakeWorkspace({"pkg/a.py": A, "pkg/b.py": B, "pkg/c.py": C, "pkg/d.py": D}),
        MutationLog(),
    )
    source = ColdFakeDiagnostics([OLD])
    source.importers = {"pkg/a.py": ["pkg/b.py"]}
    source.texts_now = lambda: workspace.inner.files  # type: ignore[attr-defined]
    gate = AnalyzerGate(source, settle_timeout_s=settle_timeout_s)
    gates = GatePipeline([gate])

    async def before_change(paths: tuple[str, ...]) -> None:
        # As a run's: what the gate raises is logged, the change goes ahead.
        await gates.before_change(paths, workspace)

    workspace.before_change(before_change)
    return workspace, source, gate


async def helper_renamed() -> tuple[
    TrackedWorkspace, ColdFakeDiagnostics, AnalyzerGate, GateContext
]:
    """A cold run renames a.py's ``helper``: b.py (a direct importer) and
    c.py (through b.py) break; with a.py shown as it was, the analyzers
    say d.py's old error only."""
    workspace, source, gate = cold_world()
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", A.replace("helper", "helper2"))
    broken_b = diag("pkg/b.py", 0, '"helper" is unknown import symbol', code="I")
    source.diagnostics = [OLD, broken_b, TRANSITIVE]
    source.counterfactual = [OLD]
    return workspace, source, gate, GateContext(1, frozenset({"pkg/a.py"}), workspace)


async def resumed_gate(source: ColdFakeDiagnostics, stored: dict) -> AnalyzerGate:
    """A new gate over ``source`` with a stored session's state, as a
    resumed run starts it (the workspace analysed, the baselines ready)."""
    resumed = AnalyzerGate(source)
    resumed.import_state(stored)
    source.workspace_analysed.set()
    await resumed.on_run_start(1)
    await resumed.baseline_ready()
    return resumed


def lines(outcome: object) -> list[tuple[str, int]]:
    return [(b.path, b.line) for b in outcome.blockers]  # type: ignore[attr-defined]


async def test_transitive_breakage_blocks_once_the_late_snapshot_is_corrected() -> None:
    """Old: the snapshot taken after the change held c.py's new error, which
    every later verdict took for pre-existing: it never blocked."""
    workspace, source, gate, ctx = await helper_renamed()
    first = await gate.check(ctx)
    assert "partial: judged on the changed files and their importers" in first.detail
    assert lines(first) == [("pkg/b.py", 0)]

    source.workspace_analysed.set()
    await gate.baseline_ready()
    assert gate.baseline is not None and TRANSITIVE in gate.baseline.diagnostics
    second = await gate.check(ctx)
    assert lines(second) == [("pkg/b.py", 0), ("pkg/c.py", 0)], second.detail
    assert "snapshot_with pkg/a.py -> pkg/c.py pkg/d.py" in source.log
    assert second.unverified is None


async def test_with_a_deleted_file_gone_the_late_snapshots_errors_are_not_checked() -> None:
    """A deleted file cannot be shown to the analyzers: the files with
    errors in the snapshot taken after the deletion are named not checked,
    never baselined with its damage (the verdict is not a pass)."""
    workspace, source, gate = cold_world()
    await gate.on_run_start(0)
    await workspace.delete("pkg/a.py")
    broken_b = diag("pkg/b.py", 0, 'Import "pkg.a" could not be resolved', code="I")
    source.diagnostics = [OLD, broken_b, TRANSITIVE]
    source.counterfactual = [OLD]
    ctx = GateContext(1, frozenset({"pkg/a.py"}), workspace)
    await gate.check(ctx)

    source.workspace_analysed.set()
    await gate.baseline_ready()
    second = await gate.check(ctx)
    assert lines(second) == [("pkg/b.py", 0)]
    assert second.unverified is not None
    assert "2 file(s) with errors not checked" in second.unverified
    assert "pkg/c.py" in second.unverified and "pkg/d.py" in second.unverified
    assert not any(line.startswith("snapshot_with") for line in source.log)

    # The file restored: the state before the run can be shown again, and
    # d.py's error is found to be an old one.
    await workspace.write_text("pkg/a.py", A)
    source.diagnostics = [OLD]
    third = await gate.check(GateContext(2, frozenset({"pkg/a.py"}), workspace))
    assert lines(third) == [] and third.unverified is None, third.detail


async def test_a_run_ended_before_the_workspace_snapshot_corrects_the_next_runs_snapshot() -> None:
    """The run ends with its cold change unvalidated before the snapshot
    completed (it is stopped); the next run's snapshot, taken with the
    change in place, is corrected the same way."""
    workspace, source, gate, ctx = await helper_renamed()
    await gate.check(ctx)
    gate.on_run_end()

    source.workspace_analysed.set()
    await gate.on_run_start(1)
    await gate.baseline_ready()
    assert gate.baseline is not None and TRANSITIVE in gate.baseline.diagnostics
    again = await gate.check(ctx)
    assert lines(again) == [("pkg/b.py", 0), ("pkg/c.py", 0)], again.detail


async def helper_retyped(
    settle_timeout_s: float = 120.0,
) -> tuple[ColdFakeDiagnostics, AnalyzerGate, GateContext]:
    """A cold run changes what a.py's ``helper`` returns: b.py only
    re-exports it (no error), c.py's use of it breaks, two imports away."""
    workspace, source, gate = cold_world(settle_timeout_s)
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", A.replace("int", "str"))
    source.diagnostics = [OLD, TRANSITIVE]
    source.counterfactual = [OLD]
    return source, gate, GateContext(1, frozenset({"pkg/a.py"}), workspace)


async def test_a_partial_verdict_without_blockers_waits_for_the_workspace_snapshot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Old: the partial verdict (a.py and b.py, both clean) passed and
    ended the run; c.py's break was never seen."""
    monkeypatch.setattr(waiting, "REPORT_AFTER_S", 0.0)  # every wait is reported
    source, gate, ctx = await helper_retyped()
    progress = RecordingProgress()
    gate.report_progress(progress)
    check = asyncio.create_task(gate.check(ctx))
    await asyncio.wait_for(progress.waits[WHOLE_WORKSPACE].wait(), 5)
    assert not check.done()  # no pass while the workspace analysis goes on
    source.workspace_analysed.set()
    outcome = await check
    assert lines(outcome) == [("pkg/c.py", 0)], outcome.detail
    assert "partial" not in outcome.detail and outcome.unverified is None


async def test_past_the_bound_a_partial_verdict_is_unverified_never_passed() -> None:
    source, gate, ctx = await helper_retyped(settle_timeout_s=0.05)
    outcome = await gate.check(ctx)
    assert outcome.blockers == []
    assert outcome.unverified is not None
    assert "files that use the changes through those importers were not" in outcome.unverified
    assert "0.05 s" in outcome.unverified
    assert "partial: judged on the changed files and their importers" in outcome.detail
    # The snapshot goes on: once taken, the next verdict judges with it.
    source.workspace_analysed.set()
    again = await gate.check(ctx)
    assert lines(again) == [("pkg/c.py", 0)] and again.unverified is None, again.detail


async def test_a_command_in_a_cold_session_is_judged_file_by_file() -> None:
    """Old: a command waited for the whole-workspace snapshot before it
    ran, and its verdict too. Now every file's text is read before it runs;
    the file it changed is baselined from its earlier text with its
    importer, the first verdict is partial, the snapshot serves the next."""
    workspace, source, gate = cold_world()
    await gate.on_run_start(0)
    await asyncio.wait_for(workspace.before_command(), 5)  # not the whole workspace's wait
    assert "read_texts" in source.log
    # The command (sed) renames helper on disk; nobody announced it.
    workspace.inner.files["pkg/a.py"] = A.replace("helper", "helper2")  # type: ignore[attr-defined]
    broken_b = diag("pkg/b.py", 0, '"helper" is unknown import symbol', code="I")
    source.diagnostics = [OLD, broken_b, TRANSITIVE]
    source.counterfactual = [OLD]
    # sed -i's own temporary file came and went.
    ctx = GateContext(1, frozenset({"pkg/a.py", "pkg/sedX1"}), workspace)
    first = await gate.check(ctx)
    # a.py as it was; a.py and b.py as they are; b.py (an error) as before.
    assert source.log[-3:] == [
        "snapshot_files_with pkg/a.py -> pkg/a.py",
        "snapshot pkg/a.py pkg/b.py pkg/sedX1",
        "snapshot_files_with pkg/a.py -> pkg/b.py",
    ]
    assert "partial: judged on the changed files and their importers" in first.detail
    assert lines(first) == [("pkg/b.py", 0)], first.detail

    source.workspace_analysed.set()
    await gate.baseline_ready()
    second = await gate.check(ctx)
    assert lines(second) == [("pkg/b.py", 0), ("pkg/c.py", 0)], second.detail
    assert second.unverified is None


async def test_a_command_whose_verdict_comes_after_the_snapshot_is_baselined_from_its_texts() -> (
    None
):
    """Old (found by the --cold bench): the command ran without waiting for
    the snapshot, which completed before its verdict; the changed file had
    no baseline (its old errors all blocked) and the snapshot's files with
    errors were all "not checked" (unverified, never blocked)."""
    workspace, source, gate = cold_world()
    await gate.on_run_start(0)
    await asyncio.wait_for(workspace.before_command(), 5)
    workspace.inner.files["pkg/a.py"] = A.replace("helper", "helper2")  # type: ignore[attr-defined]
    broken_b = diag("pkg/b.py", 0, '"helper" is unknown import symbol', code="I")
    source.diagnostics = [OLD, broken_b, TRANSITIVE]
    source.counterfactual = [OLD]
    source.workspace_analysed.set()
    await gate.baseline_ready()
    outcome = await gate.check(GateContext(1, frozenset({"pkg/a.py", "pkg/sedX1"}), workspace))
    assert lines(outcome) == [("pkg/b.py", 0), ("pkg/c.py", 0)], outcome.detail
    assert outcome.unverified is None, outcome.unverified


async def test_a_snapshot_taken_while_the_file_is_read_makes_the_change_no_cold_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run-start snapshot is taken while a.py's text is read before its
    first change: a.py is baselined from the settled analyzers like any
    change after the snapshot, not file by file with its importers, and
    its verdict needs no correction of that snapshot (old order: whether it
    is cold was decided before the read)."""
    workspace, source, gate = cold_world()
    read = workspace.inner.read_text

    async def read_while_the_snapshot_is_taken(path: str) -> FileContent:
        source.workspace_analysed.set()
        await gate.baseline_ready()
        return await read(path)

    monkeypatch.setattr(workspace.inner, "read_text", read_while_the_snapshot_is_taken)
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", A.replace("helper", "helper2"))
    # A fresh run's release of what the source noted before it, the
    # snapshot's wait and itself, then a.py's settled capture.
    capture = ["ensure_open pkg/a.py", "wait_idle", "snapshot pkg/a.py"]
    assert source.log == ["release_opened", "wait_idle", "snapshot *", *capture]
    assert gate.late == {}
    broken_b = diag("pkg/b.py", 0, '"helper" is unknown import symbol', code="I")
    source.diagnostics = [OLD, broken_b, TRANSITIVE]
    outcome = await gate.check(GateContext(1, frozenset({"pkg/a.py"}), workspace))
    assert lines(outcome) == [("pkg/b.py", 0), ("pkg/c.py", 0)], outcome.detail
    # Only the question of the new errors: no run-start snapshot corrected.
    asked = [line for line in source.log if line.startswith("snapshot_with")]
    assert asked == ["snapshot_with pkg/a.py -> pkg/b.py pkg/c.py"]


async def test_a_failed_cold_capture_leaves_the_change_a_cold_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The analyzers fail while a.py and its importers are opened before its
    first change; the change goes ahead. The snapshot taken after it still
    is not taken for the state before it: the files with errors there are
    named not checked, never passed. Old (the split): the change was marked
    cold only once captured, and c.py's breakage counted as pre-existing."""
    workspace, source, gate = cold_world()
    opened = source.open_with_importers
    crashes = [RuntimeError("the analyzer crashed")]

    async def crashes_once(paths: Sequence[str]) -> Sequence[str]:
        if crashes:
            raise crashes.pop()
        return await opened(paths)

    monkeypatch.setattr(source, "open_with_importers", crashes_once)
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", A.replace("helper", "helper2"))
    assert not crashes and "pkg/a.py" not in gate.files
    broken_b = diag("pkg/b.py", 0, '"helper" is unknown import symbol', code="I")
    source.diagnostics = [OLD, broken_b, TRANSITIVE]
    source.counterfactual = [OLD]
    source.workspace_analysed.set()
    await gate.baseline_ready()
    outcome = await gate.check(GateContext(1, frozenset({"pkg/a.py"}), workspace))
    assert outcome.unverified is not None, outcome.detail
    assert "3 file(s) with errors not checked" in outcome.unverified
    assert "pkg/b.py, pkg/c.py, pkg/d.py" in outcome.unverified


async def test_a_verdict_blocked_by_the_changed_files_own_errors_does_not_wait_for_importers() -> (
    None
):
    """Old: a cold verdict asked the changed file and all its importers and
    waited for every answer (each queued behind the workspace analysis)
    though the changed file's own new error blocked anyway. Now it asks the
    changed files first and blocks at once, naming the importers not
    checked yet; the next verdict asks them, and a pass needs them."""
    workspace, source, gate = cold_world()
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", A.replace("helper", "helper2") + "undefined_name\n")
    own = diag("pkg/a.py", 2, '"undefined_name" is not defined', code="U")
    broken_b = diag("pkg/b.py", 0, '"helper" is unknown import symbol', code="I")
    source.diagnostics = [OLD, own, broken_b, TRANSITIVE]
    asked_before = len(source.log)
    events: list[object] = []
    ctx = GateContext(1, frozenset({"pkg/a.py"}), workspace)
    verdict = await GatePipeline([gate]).check(ctx, events.append)
    assert source.log[asked_before:] == ["snapshot pkg/a.py"]  # b.py not asked
    assert [(b.path, b.line) for b in verdict.blockers] == [("pkg/a.py", 2)]
    (result,) = [e for e in events if isinstance(e, GateResult)]
    assert "not checked yet, checked once those errors are fixed: pkg/b.py" in result.detail
    assert "judged on the changed files and their importers" not in result.detail
    # The repair prompt says so too: the model is not told this is all.
    prompt = build_repair_prompt(verdict.blockers, 1, 3, verdict.not_checked)
    assert "Not everything was checked (partial: blocked on the changed files' own" in prompt
    assert "pkg/b.py" in prompt

    # The own error fixed: b.py is asked, and its new error blocks.
    await workspace.write_text("pkg/a.py", A.replace("helper", "helper2"))
    source.diagnostics = [OLD, broken_b, TRANSITIVE]
    second = await gate.check(GateContext(2, frozenset({"pkg/a.py"}), workspace))
    assert lines(second) == [("pkg/b.py", 0)], second.detail
    assert "snapshot pkg/a.py pkg/b.py" in source.log[asked_before:]
    assert "not checked yet" not in second.detail


B_OLD = diag("pkg/b.py", 2, "an error b.py had before the run", code="R")


async def test_a_written_files_importers_are_baselined_at_the_verdict_that_needs_them() -> None:
    """Old: before a cold write, the file and all its importers were asked
    for and waited on (each importer's answer queued behind the workspace
    analysis), though a verdict that blocks on the file's own error never
    looks at them. Now only the file is asked before the write; its
    importers' baseline is asked, with the analyzers shown the file as it
    was, by the verdict that needs it, after it asked b.py as it is (it
    has errors): b.py's old error does not block, its new one does."""
    workspace, source, gate = cold_world()
    source.diagnostics = [OLD, B_OLD]
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", A.replace("helper", "helper2"))
    assert [e for e in source.log if e.startswith("snapshot")] == ["snapshot pkg/a.py"]
    broken_b = diag("pkg/b.py", 0, '"helper" is unknown import symbol', code="I")
    source.diagnostics = [OLD, B_OLD, broken_b]
    source.counterfactual = [OLD, B_OLD]
    asked_before = len(source.log)
    outcome = await gate.check(GateContext(1, frozenset({"pkg/a.py"}), workspace))
    assert lines(outcome) == [("pkg/b.py", 0)], outcome.detail
    assert source.log[asked_before:] == [
        "snapshot pkg/a.py",  # its own errors first: none
        "snapshot pkg/a.py pkg/b.py",
        "snapshot_files_with pkg/a.py -> pkg/b.py",  # b.py (errors) as before the write
    ]
    assert gate.late == {"pkg/b.py": (B_OLD,)}


async def test_a_deleted_files_importers_are_still_baselined_before_the_deletion() -> None:
    """A deleted file cannot be shown to the analyzers as it was: its
    importers are asked before it goes, as before."""
    workspace, source, gate = cold_world()
    await gate.on_run_start(0)
    await workspace.delete("pkg/a.py")
    assert "snapshot pkg/a.py pkg/b.py" in source.log


async def test_owed_importers_stored_with_the_session_are_judged_as_before_the_run() -> None:
    """A session stored before its cold write's importers were baselined:
    the next run's snapshot, taken with the write in place, holds b.py's new
    error; it is asked as before the run, never taken for an old one."""
    workspace, source, gate = cold_world()
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", A.replace("helper", "helper2") + "undefined_name\n")
    own = diag("pkg/a.py", 2, '"undefined_name" is not defined', code="U")
    broken_b = diag("pkg/b.py", 0, '"helper" is unknown import symbol', code="I")
    source.diagnostics = [OLD, own, broken_b]
    source.counterfactual = [OLD]
    await gate.check(GateContext(1, frozenset({"pkg/a.py"}), workspace))
    stored = gate.export_state()

    resumed = await resumed_gate(source, stored)
    outcome = await resumed.check(GateContext(2, frozenset({"pkg/a.py"}), workspace))
    assert ("pkg/b.py", 0) in lines(outcome), outcome.detail


async def test_a_written_file_deleted_later_has_its_importers_baselined_before_it_goes() -> None:
    """The run writes a.py (b.py's baseline owed), then deletes it: b.py's
    baseline is asked before the deletion, while a.py can still be shown as
    it was, so the verdict blocks on b.py's new error. Asked only at the
    verdict, a.py gone, b.py could only be named not checked."""
    workspace, source, gate = cold_world()
    source.diagnostics = [OLD, B_OLD]
    source.counterfactual = [OLD, B_OLD]
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", A + "\n")
    assert "pkg/b.py" not in gate.late
    await workspace.delete("pkg/a.py")
    assert gate.late == {"pkg/b.py": (B_OLD,)}
    broken_b = diag("pkg/b.py", 0, 'Import "pkg.a" could not be resolved', code="I")
    source.diagnostics = [OLD, B_OLD, broken_b]
    outcome = await gate.check(GateContext(2, frozenset({"pkg/a.py"}), workspace))
    assert lines(outcome) == [("pkg/b.py", 0)], outcome.detail
