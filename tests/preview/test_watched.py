"""A start watched like the gates watch it (the editor's ``rein/preview``
start and restart), by which rule the program came up, a start cancelled
before it is up, and the restart (not a hot reload) after a manifest change;
with the fake preview process."""

from __future__ import annotations

import signal
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import pytest

from rein.harness.gating.gates import GateContext
from rein.harness.ports import Mutation
from rein.preview.coordinator import PreviewCoordinator
from rein.preview.gates import PreviewLoadGate, RuntimeObservationGate
from rein.preview.watch import start_watched
from rein.preview.writes import is_manifest
from tests.fakes.events import EventLog
from tests.fakes.preview import FakePreviewFactory, FakePreviewProcess
from tests.fakes.workspace import FakeWorkspace
from tests.preview.coordinators import running as running_coordinator

CRASH = [
    "Traceback (most recent call last):",
    '  File "/proj/app.py", line 3, in <module>',
    "    raise RuntimeError('lost the database')",
    "RuntimeError: lost the database",
]


def running(
    factory: FakePreviewFactory, events: Callable[[Any], None] | None = None, **values: Any
) -> AbstractAsyncContextManager[PreviewCoordinator]:
    """The coordinator, observing for 300 ms."""
    return running_coordinator(factory, events, observationWindowMs=300, **values)


def _ctx(generation: int, path: str) -> GateContext:
    return GateContext(generation, frozenset({path}), FakeWorkspace(root="/proj"))


# --------------------------------------------------- the editor's start


async def test_a_program_that_crashes_after_it_came_up_is_reported_by_the_start() -> None:
    """Up by the quiet rule, then a crash inside the observation window: the
    watched start is not up, with the error line and the exit code."""
    factory = FakePreviewFactory(on_start=lambda p: p.print("booting"))
    events = EventLog()

    def crash_once_up(event: Any) -> None:
        events(event)
        if event.type == "preview_started":  # up: now it crashes
            factory.processes[0].print(*CRASH)
            factory.processes[0].exit(1)

    async with running(factory, crash_once_up) as preview:
        with anyio.fail_after(5):
            watched = await start_watched(preview, 1)
    assert [e.type for e in events.of("preview_started")] == ["preview_started"]
    assert watched.outcome.action == "started" and watched.outcome.ready_by == "quiet"
    assert not watched.up
    observation = watched.observation
    assert observation is not None
    assert observation.matches == (CRASH[0], CRASH[-1])
    assert observation.exit_code == 1
    assert watched.message == (
        "the preview printed a runtime error: RuntimeError: lost the database; "
        "the preview exited with code 1"
    )


async def test_a_quiet_program_that_stays_up_is_up_by_the_quiet_rule() -> None:
    factory = FakePreviewFactory(on_start=lambda p: p.print("booting"))
    async with running(factory) as preview:
        watched = await start_watched(preview, 1)
        assert watched.up and watched.outcome.ready_by == "quiet" and watched.message == ""
        assert watched.observation is not None and watched.observation.ok
        again = await start_watched(preview, 2)  # it runs: nothing started, nothing observed
        assert again.outcome.action == "unchanged" and again.observation is None


async def test_the_rule_that_found_it_up_is_named() -> None:
    def listens(process: FakePreviewProcess) -> None:
        process.ports.add(8000)

    async with running(FakePreviewFactory(on_start=listens), readiness={"quietMs": 5000}) as p:
        assert (await start_watched(p, 1)).outcome.ready_by == "port"
    ready = FakePreviewFactory(on_start=lambda p: p.print("ready"))
    async with running(ready, readiness={"line": "^ready$"}) as p:
        assert (await start_watched(p, 1)).outcome.ready_by == "line"
    async with running(FakePreviewFactory(), readiness={"url": "http://127.0.0.1:8000/"}) as p:
        assert (await start_watched(p, 1)).outcome.ready_by == "url"
    done = FakePreviewFactory(on_start=lambda p: (p.print("done"), p.exit(0)))
    async with running(done, readiness={"quietMs": 5000}) as p:
        watched = await start_watched(p, 1)
        assert watched.outcome.ready_by == "ended" and not watched.up
    broken = FakePreviewFactory(on_start=lambda p: p.print(*CRASH))
    async with running(broken, readiness={"quietMs": 5000}) as p:
        watched = await start_watched(p, 1)
        assert watched.outcome.ready_by == "error output" and not watched.up
        assert watched.observation is not None
        assert watched.observation.matches == (CRASH[0], CRASH[-1])


async def test_a_failed_start_reports_its_output_tail_and_its_exit_code() -> None:
    def crashes(process: FakePreviewProcess) -> None:
        process.print("booting", "cannot bind port 8000")
        process.exit(3)

    async with running(FakePreviewFactory(on_start=crashes), readiness={"line": "^ready"}) as p:
        watched = await start_watched(p, 1, restart=True)
    assert watched.outcome.action == "failed" and not watched.up
    assert watched.observation is not None
    assert watched.observation.excerpt == ("booting", "cannot bind port 8000")
    assert watched.observation.exit_code == 3
    assert "exited with code 3 before it was ready (restart)" in watched.message


async def test_a_start_cancelled_before_it_is_up_stops_the_program() -> None:
    events = EventLog()
    factory = FakePreviewFactory(on_start=lambda p: p.print("booting"))
    async with running(factory, events, readiness={"line": "^ready", "timeoutMs": 60_000}) as p:
        with anyio.move_on_after(0.2) as scope:
            await start_watched(p, 1)
        assert scope.cancelled_caught
        assert factory.processes[0].exit_code == -15
        assert p.state == "stopped" and not p.running
        assert [e.reason for e in events.of("preview_stopped")] == ["the start was cancelled"]
        assert not p.busy  # the next operation is not kept waiting


# ------------------------------------------ a manifest change restarts it


@pytest.mark.parametrize("path", ["pyproject.toml", "web/package.json", "requirements-dev.txt"])
def test_manifests(path: str) -> None:
    assert is_manifest(path)


@pytest.mark.parametrize("path", ["app.py", "pyproject.toml.bak", "docs/requirements.md"])
def test_not_manifests(path: str) -> None:
    assert not is_manifest(path)


@pytest.mark.parametrize("reload", ["self", "signal"])
async def test_a_load_after_a_manifest_change_restarts_the_program(reload: str) -> None:
    """A program that reloads itself (or on a signal) reloaded when the file
    was written, before the install: after a manifest change the load is a
    full restart, then observed from it."""
    events = EventLog()
    factory = FakePreviewFactory(
        on_start=lambda p: p.print("ready"), on_signal=lambda p, _: p.print("ready")
    )
    async with running(
        factory, events, reload=reload, readiness={"line": "^ready$", "timeoutMs": 1000}
    ) as preview:
        load = PreviewLoadGate(preview)
        observe = RuntimeObservationGate(preview, load)
        await preview.start(0)

        # A change of code alone: the strategy as configured, no new process.
        preview.on_mutation(Mutation(1, ("app.py",)))
        if reload == "self":
            factory.processes[0].print("ready")
        loaded = await load.check(_ctx(1, "app.py"))
        assert loaded.detail == f"loaded generation 1 ({reload})"
        assert len(factory.processes) == 1

        preview.on_mutation(Mutation(2, ("pyproject.toml",)))
        loaded = await load.check(_ctx(2, "pyproject.toml"))
        assert not loaded.blockers
        assert loaded.detail == "loaded generation 2 (restart: a dependency manifest changed)"
        assert len(factory.processes) == 2 and factory.processes[0].exit_code == -15
        assert [e.strategy for e in events.of("preview_reloaded")] == [reload, "restart"]
        assert not (await observe.check(_ctx(2, "pyproject.toml"))).blockers
        if reload == "signal":
            assert factory.processes[0].signals == [signal.SIGHUP]
            assert factory.processes[1].signals == []

        # Loaded: the next change of code is a hot reload again.
        preview.on_mutation(Mutation(3, ("app.py",)))
        if reload == "self":
            factory.processes[1].print("ready")
        loaded = await load.check(_ctx(3, "app.py"))
        assert loaded.detail == f"loaded generation 3 ({reload})"
        assert len(factory.processes) == 2
