"""The run-start baseline is taken in the background: the model is asked at
once, the first change waits for the baseline (so it predates every
change), and a wait on the analyzers past a second is a ``gate_waiting``
event."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence

import anyio
import pytest

from rein.analysis.background_snapshot import BackgroundSnapshot
from rein.analysis.gate import AnalyzerGate
from rein.harness.ports import DiagnosticsSnapshot, ModelDelta, ModelRequest
from rein.providers.replay import ReplayModel
from tests.fakes.clock import run_in_virtual_time
from tests.fakes.diagnostics import FakeDiagnostics, RecordingProgress
from tests.harness.test_gates_truth import World, command, write


class LoggingModel:
    """A replay model that logs each request and calls ``on_request``."""

    def __init__(self, inner: ReplayModel, log: list[str], on_request: asyncio.Event) -> None:
        self.inner = inner
        self.log = log
        self.on_request = on_request

    @property
    def name(self) -> str:
        return self.inner.name

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        self.log.append("model request")
        self.on_request.set()
        return self.inner.stream(request)


def slow_world(files: dict[str, str], release: asyncio.Event | None, delay_s: float = 0.0):
    world = World(files)
    source = world.source
    plain = type(source).wait_idle

    async def wait_idle(timeout_s: float) -> bool:
        source.log.append("wait_idle begins")
        if release is not None:
            await release.wait()  # the analyzers finish only once the model was asked
        if delay_s:
            await asyncio.sleep(delay_s)  # virtual time: the analyzers take this long
        return await plain(source, timeout_s)

    source.wait_idle = wait_idle  # type: ignore[method-assign]
    return world


async def test_the_model_is_asked_before_the_baseline_and_the_verdict_uses_it() -> None:
    asked = asyncio.Event()
    world = slow_world({"app.py": "a = 1\nERROR old\n"}, release=asked)
    gate = AnalyzerGate(world.source)
    agent, model, events = world.agent(
        [
            write("app.py", "a = 1\nERROR old\nERROR new\n"),
            {"text": "done"},
            write("app.py", "a = 2\nERROR old\n"),
            {"text": "fixed"},
        ],
        gates=[gate],
    )
    agent.model = LoggingModel(model, world.source.log, asked)
    with anyio.fail_after(30):  # a baseline awaited before the model deadlocks here
        result = await agent.prompt("edit app.py")
    assert result.status == "completed", result.error
    log = world.source.log
    # The model was asked while the run-start baseline was still being taken.
    assert log.index("wait_idle begins") < log.index("model request") < log.index("snapshot *")
    # The first change's baseline came after the run-start snapshot.
    assert log.index("snapshot *") < log.index("ensure_open app.py")
    first, second = events.of("gate_result")
    # The pre-existing error does not block; the new one does.
    assert [b.message for b in first.blockers] == ["bad token: ERROR new"]
    assert second.status == "passed"


async def test_a_command_waits_for_the_baseline_so_only_what_it_broke_blocks() -> None:
    """A command run while the run-start baseline is still being taken (a
    cold start: the model is asked at once) runs only once the baseline is
    there. Old: the baseline was taken after the command had changed the
    file, so it held nothing for it and its old error blocked too (in a real
    workspace, the importers' new errors were in the baseline: none blocked)."""
    asked = asyncio.Event()
    world = slow_world({"a.py": "ERROR old\n"}, release=asked)
    agent, model, events = world.agent(
        [command("a.py", "ERROR old\nERROR from sed\n"), {"text": "done"}, {"text": "hmm"}],
        gates=[AnalyzerGate(world.coordinator)],
        max_repair_attempts=0,
    )
    agent.model = LoggingModel(model, world.source.log, asked)
    with anyio.fail_after(30):
        result = await agent.prompt("run sed")
    assert [(m.origin, m.paths) for m in result.mutations] == [("command", ("a.py",))]
    assert [(b.line, b.message) for b in result.blockers] == [(1, "bad token: ERROR from sed")]


def test_a_wait_on_the_analyzers_past_a_second_is_reported() -> None:
    async def main() -> None:
        world = slow_world({"app.py": "a = 1\n"}, release=None, delay_s=5.0)
        agent, _, events = world.agent(
            [write("app.py", "a = 2\n"), {"text": "done"}], gates=[AnalyzerGate(world.source)]
        )
        result = await agent.prompt("edit app.py")
        assert result.status == "completed", result.error
        waits = events.of("gate_waiting")
        assert [(w.phase, w.message) for w in waits][:2] == [
            ("begin", "the analyzers: the workspace baseline"),
            ("end", "the analyzers: the workspace baseline"),
        ]
        types = events.types()
        # Reported while the first change waited, before the write ran.
        assert types.index("gate_waiting") < types.index("tool_call_end")

    run_in_virtual_time(main)


class _Gone(FakeDiagnostics):
    """Analyzers that cannot be asked."""

    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot:
        raise RuntimeError("the analyzers are gone")


async def test_a_failed_run_start_snapshot_is_reported_and_logged_as_the_gates(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Waiting for it never raises; the failure is reported, and logged
    under the gate's name (as before background_snapshot.py held it)."""
    gate = AnalyzerGate(_Gone())
    progress = RecordingProgress()
    gate.report_progress(progress)
    await gate.on_run_start(0)
    await asyncio.wait_for(gate.baseline_ready(), 5)
    assert gate.baseline is None
    assert progress.failures == [
        "gate analyzer could not take its baseline: the analyzers are gone"
    ]
    said = ("rein.analysis.gate", logging.ERROR, "the analyzer gate could not take its baseline")
    assert said in caplog.record_tuples


async def test_a_deferred_snapshot_is_taken_only_once_needed() -> None:
    """:class:`BackgroundSnapshot` started ``deferred``: nothing runs until
    :meth:`need` (or a wait for it); stopped before that, its coroutine is
    closed unrun."""
    ran: list[str] = []

    async def taking(name: str) -> None:
        ran.append(name)

    snapshot = BackgroundSnapshot()
    snapshot.start(taking("first"), deferred=True)
    for _ in range(5):
        await asyncio.sleep(0)  # let the task run as far as it can
    assert ran == [] and snapshot.task is not None and not snapshot.task.done()
    snapshot.stop()  # the run ended: never taken
    snapshot.start(taking("never"), deferred=True)
    snapshot.stop()  # stopped before it ran at all
    snapshot.start(taking("second"), deferred=True)
    await snapshot.ready(None)  # a wait for it needs it
    assert ran == ["second"]
