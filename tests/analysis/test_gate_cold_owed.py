"""A cold write's importers owed a baseline (asked by the verdict that
needs them, :func:`~rein.analysis.cold_start.owed_baselines`): one whose
baseline is not had stays owed, is never passed, and is asked again; a
change announced while they are asked waits for the request."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence

from rein.analysis.gate import AnalyzerGate
from rein.harness.gating.gates import GateContext, GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import DiagnosticsSnapshot, Writes
from tests.analysis.test_gate_cold_start import OLD, A, B, C, D, cold_world, lines, resumed_gate
from tests.fakes.diagnostics import ColdFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace
from tests.harness.test_gates_truth import diag

#: a.py's body changed (no public name): b.py broken all the same.
BODY = A.replace("return 1", "return 2")
BROKEN_B = diag("pkg/b.py", 0, "b.py broken by the run's change of a.py", code="I")


def answers_late(source: ColdFakeDiagnostics) -> None:
    """The owed importers' baseline comes back stale (past the bound)."""
    inner = source.snapshot_files_with

    async def stale(
        texts: Mapping[str, str], paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot:
        return dataclasses.replace(await inner(texts, paths, timeout_s), stale=True)

    source.snapshot_files_with = stale  # type: ignore[method-assign]


async def test_an_owed_baseline_not_had_is_never_passed_and_asked_again() -> None:
    """Old: the owed ask of b.py's baseline timed out once; b.py was then
    never judged (put with the importers past maxImporters, "no public
    name changed"), and a later verdict passed with b.py broken."""
    workspace, source, gate = cold_world(settle_timeout_s=0.2)
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", BODY)
    source.diagnostics = [OLD, BROKEN_B]
    source.counterfactual = [OLD]
    inner = source.snapshot_files_with
    answers_late(source)
    ctx = GateContext(1, frozenset({"pkg/a.py"}), workspace)
    first = await gate.check(ctx)
    assert first.unverified is not None
    assert "1 importer(s) of the changed files not checked (the analyzers did not answer" in (
        first.unverified
    )
    assert "maxImporters" not in first.detail and "no public name" not in first.detail

    source.snapshot_files_with = inner  # type: ignore[method-assign]
    second = await gate.check(ctx)
    assert lines(second) == [("pkg/b.py", 0)], second.detail
    assert [e for e in source.log if e.startswith("snapshot_files_with")] == [
        "snapshot_files_with pkg/a.py -> pkg/b.py"
    ] * 2


async def test_the_whole_workspace_verdict_judges_an_owed_importer_not_had() -> None:
    """Old: the whole-workspace verdict had b.py's baseline as before the
    run (before_the_run) and still left b.py out: it passed."""
    workspace, source, gate = cold_world(settle_timeout_s=0.2)
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", BODY)
    source.diagnostics = [OLD, BROKEN_B]
    source.counterfactual = [OLD]
    answers_late(source)
    source.workspace_analysed.set()
    outcome = await gate.check(GateContext(1, frozenset({"pkg/a.py"}), workspace))
    assert lines(outcome) == [("pkg/b.py", 0)], outcome.detail
    assert gate.export_state()["owed"] == []  # settled by the whole snapshot


async def test_an_owed_importer_not_had_is_stored_and_judged_after_a_resume() -> None:
    """Old: b.py, its owed ask timed out, was in no stored set: resumed,
    the new run-start snapshot's b.py error was taken for an old one."""
    workspace, source, gate = cold_world(settle_timeout_s=0.2)
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", A.replace("helper", "helper2"))
    source.diagnostics = [OLD, BROKEN_B]
    source.counterfactual = [OLD]
    inner = source.snapshot_files_with
    answers_late(source)
    first = await gate.check(GateContext(1, frozenset({"pkg/a.py"}), workspace))
    assert first.unverified is not None and first.blockers == []
    stored = gate.export_state()
    assert stored["owed"] == ["pkg/b.py"]

    source.snapshot_files_with = inner  # type: ignore[method-assign]
    resumed = await resumed_gate(source, stored)
    outcome = await resumed.check(GateContext(2, frozenset({"pkg/a.py"}), workspace))
    assert lines(outcome) == [("pkg/b.py", 0)], outcome.detail


async def test_after_a_deletion_a_written_files_importers_are_baselined_before_the_write() -> None:
    """Old: d.py deleted, then a.py written: b.py's baseline was owed, and
    with d.py gone could never be had (a.py cannot be shown as it was while
    a file the run deleted is gone): every verdict was unverified, and the
    whole-workspace one left b.py's new error out."""
    workspace, source, gate = cold_world(settle_timeout_s=0.2)
    workspace.inner.files["pkg/script.py"] = "print('hi')\n"  # type: ignore[attr-defined]
    source.diagnostics = []  # no error anywhere (d.py's could not be judged: script.py is gone)
    await gate.on_run_start(0)
    await workspace.delete("pkg/script.py")
    await workspace.write_text("pkg/a.py", BODY)
    assert "snapshot pkg/a.py pkg/b.py" in source.log  # before the write, as before cold12
    assert gate.export_state()["owed"] == []
    source.workspace_analysed.set()
    ctx = GateContext(2, frozenset({"pkg/a.py", "pkg/script.py"}), workspace)
    assert (await gate.check(ctx)).unverified is None  # nothing broke: a pass

    source.diagnostics = [BROKEN_B]
    outcome = await gate.check(ctx)
    assert lines(outcome) == [("pkg/b.py", 0)], outcome.detail


async def test_a_write_announced_while_owed_importers_are_asked_waits_for_the_request() -> None:
    """A tool batch's writes run in parallel with its other tools: a
    deletion asks b.py's owed baseline with a.py shown as it was, and a
    write of a.py announced meanwhile must not reach the analyzers (the
    workspace) before that answer, else b.py's baseline holds its damage."""
    files = {"pkg/a.py": A, "pkg/b.py": B, "pkg/c.py": C, "pkg/d.py": D}
    workspace = TrackedWorkspace(FakeWorkspace(files), MutationLog())
    source = ColdFakeDiagnostics([OLD])
    source.importers = {"pkg/a.py": ["pkg/b.py"]}
    gate = AnalyzerGate(source)
    gates = GatePipeline([gate])
    write_announced = asyncio.Event()

    async def before_change(paths: tuple[str, ...]) -> None:
        if isinstance(paths, Writes) and "pkg/a.py" in gate.files:
            write_announced.set()
        await gates.before_change(paths, workspace)

    workspace.before_change(before_change)
    await gate.on_run_start(0)
    await workspace.write_text("pkg/a.py", BODY)
    assert gate.export_state()["owed"] == ["pkg/b.py"]

    asked = asyncio.Event()
    seen: list[str] = []
    inner = source.snapshot_files_with

    async def while_asked(
        texts: Mapping[str, str], paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot:
        asked.set()
        await asyncio.wait_for(write_announced.wait(), 5)
        seen.append(workspace.inner.files["pkg/a.py"])  # type: ignore[attr-defined]
        return await inner(texts, paths, timeout_s)

    source.snapshot_files_with = while_asked  # type: ignore[method-assign]
    deleting = asyncio.create_task(workspace.delete("pkg/d.py"))
    await asyncio.wait_for(asked.wait(), 5)
    writing = asyncio.create_task(workspace.write_text("pkg/a.py", A + "broken(\n"))
    await asyncio.wait_for(asyncio.gather(deleting, writing), 5)
    assert seen == [BODY]  # the parallel write waited for the answer
