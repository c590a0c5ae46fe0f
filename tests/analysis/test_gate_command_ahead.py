"""A cold command's changes are baselined as soon as the command ends, while
the model takes its next turn, not at the verdict (issue 32 item 7: the
verdict on a ``sed`` edit asked the analyzers for the changed files as they
were, then as they are). Built on the cold-start world."""

from __future__ import annotations

import asyncio

import pytest

from rein.analysis.gate import AnalyzerGate
from rein.harness.gating.gates import GateContext, GatePipeline
from rein.harness.ports import Mutation
from tests.analysis.test_gate_cold_start import OLD, A, cold_world, lines
from tests.fakes.diagnostics import ColdFakeDiagnostics
from tests.harness.test_gates_truth import diag

BROKEN_B = diag("pkg/b.py", 0, '"helper" is unknown import symbol', code="I")
SEDDED = A.replace("helper", "helper2")


def _asked_event(source: ColdFakeDiagnostics) -> asyncio.Event:
    """Set when the analyzers are asked with files shown as they were."""
    asked = asyncio.Event()
    original = source.snapshot_files_with

    async def recorded(*args: object) -> object:
        asked.set()
        return await original(*args)  # type: ignore[arg-type]

    source.snapshot_files_with = recorded  # type: ignore[method-assign]
    return asked


async def _sed(gate: AnalyzerGate, workspace: object, source: ColdFakeDiagnostics) -> None:
    await gate.on_run_start(0)
    await asyncio.wait_for(workspace.before_command(), 5)  # type: ignore[attr-defined]
    workspace.inner.files["pkg/a.py"] = SEDDED  # type: ignore[attr-defined]
    source.diagnostics = [OLD, BROKEN_B]
    source.counterfactual = [OLD]


async def test_a_cold_commands_baseline_is_asked_when_it_ends_not_at_the_verdict() -> None:
    workspace, source, gate = cold_world()
    asked = _asked_event(source)
    await _sed(gate, workspace, source)
    # Told after the tool turn, through the gates.
    GatePipeline([gate]).on_mutation(Mutation(1, ("pkg/a.py",), "external"), lambda *_: None)
    await asyncio.wait_for(asked.wait(), 5)  # before any verdict
    outcome = await asyncio.wait_for(
        gate.check(GateContext(1, frozenset({"pkg/a.py"}), workspace)), 5
    )
    assert lines(outcome) == [("pkg/b.py", 0)], outcome.detail  # b.py's new error only
    shown = [line for line in source.log if line.startswith("snapshot_files_with")]
    # a.py as it was when the command ended; b.py (an error) after the verdict.
    assert shown == [
        "snapshot_files_with pkg/a.py -> pkg/a.py",
        "snapshot_files_with pkg/a.py -> pkg/b.py",
    ]


async def test_a_tools_change_or_a_warm_session_starts_nothing() -> None:
    workspace, source, gate = cold_world()
    asked = _asked_event(source)
    await gate.on_run_start(0)
    gate.on_change(Mutation(1, ("pkg/a.py",), "agent"))  # a tool's: baselined before it
    gate.on_change(Mutation(2, ("pkg/a.py",), "external"))  # no command ran
    source.workspace_analysed.set()
    await gate.baseline_ready()
    await asyncio.wait_for(workspace.before_command(), 5)  # warm now: the snapshot was taken
    workspace.inner.files["pkg/a.py"] = SEDDED  # type: ignore[attr-defined]
    gate.on_change(Mutation(3, ("pkg/a.py",), "external"))
    assert not asked.is_set()
    assert "read_texts" not in source.log


async def test_an_ahead_baseline_that_failed_is_logged_when_no_verdict_comes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Old (review14b): a failure was logged only by a verdict waiting for
    it; a run ending first left it to asyncio's "Task exception was never
    retrieved" at garbage collection."""
    workspace, source, gate = cold_world()

    async def fails(*_args: object) -> object:
        raise RuntimeError("analyzer gone")

    source.snapshot_files_with = fails  # type: ignore[method-assign]
    await _sed(gate, workspace, source)
    gate.on_change(Mutation(1, ("pkg/a.py",), "external"))
    task = gate.baselines.ahead.task
    assert task is not None
    await asyncio.wait({task}, timeout=5)
    assert task.done()
    gate.on_run_end()  # the run ends (aborted) before its verdict
    (record,) = [r for r in caplog.records if r.name.startswith("rein.")]
    assert record.getMessage().startswith("the baseline of a command's changes failed")
    assert record.exc_info is not None and "analyzer gone" in str(record.exc_info[1])


async def test_an_ahead_baseline_running_when_the_changes_are_validated_is_stopped() -> None:
    """review33: the baseline of a command's changes started after a passing
    verdict (a test of the tests gate wrote a file) went on past the
    validation and put its files' earlier texts in the next stretch's
    baselines. Now the validation stops it."""
    workspace, source, gate = cold_world()
    release = asyncio.Event()
    original = source.snapshot_files_with

    async def held(*args: object) -> object:
        await release.wait()
        return await original(*args)  # type: ignore[arg-type]

    source.snapshot_files_with = held  # type: ignore[method-assign]
    await _sed(gate, workspace, source)
    gate.on_change(Mutation(1, ("pkg/a.py",), "external"))
    task = gate.baselines.ahead.task
    assert task is not None and not task.done()
    gate.on_validated(1)
    release.set()
    await asyncio.wait({task}, timeout=5)
    assert task.cancelled()
    assert gate.files == {}
