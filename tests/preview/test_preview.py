"""The preview coordinator and its gates, with the fake preview process."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from rein.harness import Agent, HarnessConfig, UserMessage
from rein.harness.config import PreviewGateConfig
from rein.harness.gating.gates import GateContext, GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import Mutation
from rein.harness.tools import ToolEnvironment
from rein.preview.coordinator import is_preview_output
from rein.preview.gates import (
    PreviewLoadGate,
    PreviewStartGate,
    RuntimeObservationGate,
    preview_gates,
)
from rein.preview.output_log import find_errors
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog, WaitingEventLog, assert_well_formed
from tests.fakes.preview import FakePreviewFactory, FakePreviewProcess
from tests.fakes.tools import FakeWriteTool
from tests.fakes.workspace import FakeWorkspace
from tests.preview.coordinators import config, running

ROOT = "/proj"
TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/proj/app.py", line 14, in load',
    "    check(settings.THRESHOLD)",
    '  File "/proj/app.py", line 9, in check',
    '    raise ValueError(f"threshold must not be negative, got {value}")',
    "ValueError: threshold must not be negative, got -1",
]


def ready(process: FakePreviewProcess) -> None:
    process.print("booting", "ready on :8000")


def gate_ctx(generation: int, emit: Callable[[Any], None] | None = None) -> GateContext:
    return GateContext(generation, frozenset({"settings.py"}), FakeWorkspace(root=ROOT), emit)


# ------------------------------------------------------------- start / stop


async def test_start_waits_for_readiness_and_is_idempotent() -> None:
    events = EventLog()
    factory = FakePreviewFactory(on_start=ready)
    async with running(factory, events, readiness={"line": "ready on"}) as preview:
        outcome = await preview.start(3)
        assert outcome.action == "started" and outcome.ok
        assert preview.state == "running" and preview.pid == 4000
        assert [(e.pid, e.generation) for e in events.of("preview_started")] == [(4000, 3)]
        again = await preview.start(4)
        assert again.action == "unchanged"
        assert len(factory.ops("start")) == 1
        status = preview.status()
        assert status.state == "running" and status.pid == 4000 and "ready on :8000" in status.lines
        stopped = await preview.stop()
        assert stopped.action == "stopped" and preview.state == "stopped" and preview.pid is None
        assert factory.processes[0].exit_code == -15
        assert events.of("preview_stopped")[0].state == "stopped"


async def test_an_http_readiness_probe_is_polled_until_it_answers() -> None:
    factory = FakePreviewFactory()
    factory.http_fails = 2
    async with running(factory, readiness={"url": "http://127.0.0.1:8000/health"}) as preview:
        outcome = await preview.start(1)
        assert outcome.action == "started"
        assert factory.http_calls == ["http://127.0.0.1:8000/health"] * 3


async def test_a_preview_that_never_becomes_ready_fails_with_its_output() -> None:
    events = EventLog()
    factory = FakePreviewFactory(on_start=lambda p: p.print("booting", "still booting"))
    async with running(factory, events, readiness={"line": "^ready", "timeoutMs": 200}) as preview:
        outcome = await preview.start(1)
        assert not outcome.ok and outcome.action == "failed"
        assert "did not become ready within 0.2 s" in outcome.message
        assert "a line matching '^ready'" in outcome.message
        assert outcome.lines == ("booting", "still booting")
        assert factory.processes[0].exit_code == -15  # it was stopped
        assert preview.state == "failed" and not preview.running
        error = events.of("preview_error")[-1]
        assert error.state == "failed" and error.lines == ["booting", "still booting"]


async def test_a_preview_that_exits_before_it_is_ready_fails() -> None:
    def exits(process: FakePreviewProcess) -> None:
        process.print("cannot bind port 8000")
        process.exit(3)

    factory = FakePreviewFactory(on_start=exits)
    async with running(factory, readiness={"line": "ready"}) as preview:
        outcome = await preview.start(1)
        assert outcome.action == "failed"
        assert "exited with code 3 before it was ready" in outcome.message
        assert outcome.lines == ("cannot bind port 8000",)


# ------------------------------------------ up, without a readiness setting


async def test_without_readiness_the_start_waits_for_quiet_output() -> None:
    factory = FakePreviewFactory(on_start=lambda p: p.print("booting"))
    async with running(factory, readiness={"quietMs": 300}) as preview:
        began = anyio.current_time()
        outcome = await preview.start(1)
        waited = anyio.current_time() - began
        assert outcome.action == "started" and preview.state == "running"
        assert waited >= 0.3


async def test_without_readiness_a_listening_port_is_up_at_once() -> None:
    def listens(process: FakePreviewProcess) -> None:
        process.print("serving")
        process.ports.add(8000)

    factory = FakePreviewFactory(on_start=listens)
    async with running(factory, readiness={"quietMs": 5_000, "timeoutMs": 8_000}) as preview:
        began = anyio.current_time()
        outcome = await preview.start(1)
        assert outcome.action == "started"
        assert anyio.current_time() - began < 2.0


async def test_a_program_that_crashes_while_booting_is_a_start_blocker_by_default() -> None:
    """The default readiness rule: a program that prints, is quiet for less
    than readiness.quietMs and exits 1 never counts as started."""
    booted = anyio.Event()

    def boots(process: FakePreviewProcess) -> None:
        process.print("booting")
        booted.set()

    factory = FakePreviewFactory(on_start=boots)

    async def crash_while_booting() -> None:
        await booted.wait()
        await anyio.sleep(0.2)  # the program's own boot time, then its crash
        factory.processes[0].exit(1)

    async with anyio.create_task_group() as tg, running(factory, readiness={}) as preview:
        assert preview.config.readiness.quiet_ms == 2_000
        tg.start_soon(crash_while_booting)
        outcome = await PreviewStartGate(preview).check(gate_ctx(1))
    assert len(outcome.blockers) == 1
    blocker = outcome.blockers[0]
    assert blocker.gate == "preview_start"
    assert "exited with code 1 before it was up" in blocker.message
    assert preview.state == "failed"


async def test_a_program_that_never_comes_up_is_a_blocker_that_says_so() -> None:
    booted = anyio.Event()

    def boots(process: FakePreviewProcess) -> None:
        process.print("booting")
        booted.set()

    factory = FakePreviewFactory(on_start=boots)

    async def keep_printing() -> None:  # never quiet for 200 ms
        await booted.wait()
        process = factory.processes[0]
        while process.exit_code is None:
            process.print("still booting")
            await anyio.sleep(0.02)

    readiness = {"quietMs": 200, "timeoutMs": 400}
    async with anyio.create_task_group() as tg, running(factory, readiness=readiness) as preview:
        tg.start_soon(keep_printing)
        outcome = await PreviewStartGate(preview).check(gate_ctx(1))
    assert len(outcome.blockers) == 1
    message = outcome.blockers[0].message
    assert "did not come up within 0.4 s" in message
    assert "quiet for 0.2 s" in message
    assert preview.state == "failed"


async def test_a_program_that_ran_to_its_end_cleanly_is_not_waited_for() -> None:
    factory = FakePreviewFactory(on_start=lambda p: (p.print("done"), p.exit(0)))
    async with running(factory, readiness={"quietMs": 5_000}) as preview:
        with anyio.fail_after(2):
            outcome = await preview.start(1)
        assert outcome.ok and preview.state == "exited"


async def test_a_command_that_cannot_start_is_a_failure() -> None:
    factory = FakePreviewFactory()
    factory.fail_next = FileNotFoundError("bash")
    async with running(factory) as preview:
        outcome = await preview.start(1)
        assert outcome.action == "failed" and "could not start the preview" in outcome.message


async def test_an_exit_outside_an_operation_goes_to_the_host() -> None:
    host = WaitingEventLog()
    factory = FakePreviewFactory(on_start=ready)
    async with running(factory, host) as preview:
        await preview.start(1)
        factory.processes[0].print(*TRACEBACK)
        factory.processes[0].exit(1)
        await host.wait_for(lambda events: any(e.type == "preview_error" for e in events))
        error = host.of("preview_error")[0]
        assert error.message == "the preview exited with code 1" and error.state == "exited"
        assert error.exit_code == 1 and TRACEBACK[-1] in error.lines
        assert preview.state == "exited" and not preview.running
        output = "\n".join(e.text for e in host.of("preview_output"))
        assert "ready on :8000" in output and TRACEBACK[-1] in output


async def test_shutdown_stops_the_preview_for_good() -> None:
    factory = FakePreviewFactory(on_start=ready)
    async with running(factory) as preview:
        await preview.start(1)
        await preview.shutdown()
        assert factory.processes[0].exit_code == -15
        outcome = await preview.start(2)
        assert outcome.action == "failed" and "shut down" in outcome.message
        assert len(factory.processes) == 1


# --------------------------------------------------------------- serialising


async def test_reloads_never_overlap_and_each_generation_loads_once() -> None:
    factory = FakePreviewFactory(on_start=ready)
    async with running(factory, readiness={"line": "ready"}) as preview:
        await preview.start(0)
        factory.hold = anyio.Event()
        results: dict[int, Any] = {}

        async def reload(generation: int) -> None:
            results[generation] = await preview.reload(generation)

        async with anyio.create_task_group() as tg:
            tg.start_soon(reload, 1)
            with anyio.fail_after(5):
                await factory.holding.wait()
            tg.start_soon(reload, 2)
            await anyio.wait_all_tasks_blocked()
            factory.hold.set()
        assert [results[g].action for g in (1, 2)] == ["reloaded", "reloaded"]
        assert [results[g].generation for g in (1, 2)] == [1, 2]
        assert factory.max_active == 1
        starts, stops = factory.ops("start")[1:], factory.ops("stop")
        assert len(starts) == 2 and len(stops) == 2
        # The second reload began only after the first had finished.
        assert stops[1][2] >= starts[0][3]
        # The same generation again: nothing to do.
        again = await preview.reload(2)
        assert again.action == "unchanged" and len(factory.ops("start")) == 3


async def test_a_newer_generation_supersedes_a_queued_reload() -> None:
    events = EventLog()
    factory = FakePreviewFactory(on_start=ready)
    async with running(factory, events) as preview:
        await preview.start(0)
        factory.hold = anyio.Event()
        results: dict[int, Any] = {}

        async def reload(generation: int) -> None:
            results[generation] = await preview.reload(generation)

        async with anyio.create_task_group() as tg:
            tg.start_soon(reload, 1)
            with anyio.fail_after(5):
                await factory.holding.wait()
            tg.start_soon(reload, 2)
            tg.start_soon(reload, 3)
            await anyio.wait_all_tasks_blocked()
            factory.hold.set()
        # One reload for 1, one for the newest queued generation; none for 2.
        assert [e.generation for e in events.of("preview_reloaded")] == [1, 3]
        assert len(factory.ops("start")) == 3
        assert results[2].generation == 3 and results[3].generation == 3
        assert sorted(results[g].action for g in (2, 3)) == ["reloaded", "unchanged"]
        assert preview.loaded_generation == 3


async def test_an_operation_past_the_busy_bound_is_a_blocker_not_a_hang() -> None:
    factory = FakePreviewFactory(on_start=ready)
    factory.hold = anyio.Event()
    async with running(factory, busyTimeoutMs=300) as preview:
        async with anyio.create_task_group() as tg:
            tg.start_soon(preview.start, 0)
            with anyio.fail_after(5):
                await factory.holding.wait()
            began = anyio.current_time()
            with anyio.fail_after(5):
                outcome = await PreviewStartGate(preview).check(gate_ctx(1))
            waited = anyio.current_time() - began
            factory.hold.set()
        assert 0.3 <= waited < 2.0
        assert len(outcome.blockers) == 1
        blocker = outcome.blockers[0]
        assert blocker.gate == "preview_start"
        assert blocker.message.startswith("the preview is busy")
        assert "did not finish within 0.3 s" in blocker.message


# ---------------------------------------------------------------- observing


def find(lines: list[str]) -> tuple[list[str], list[str]]:
    import re

    return find_errors(lines, [re.compile(p) for p in config().error_patterns])


def test_find_errors_keeps_whole_tracebacks() -> None:
    lines = [
        "GET / 200",
        "Traceback (most recent call last):",
        '  File "/proj/app.py", line 3, in <module>',
        "    main()",
        "__main__.Boom: not an Error line",
        "GET / 200",
    ]
    matches, excerpt = find(lines)
    assert matches == ["Traceback (most recent call last):"]
    assert excerpt == lines[1:5]
    matches, excerpt = find(["ok", "Error: no config file", "ok"])
    assert matches == ["Error: no config file"] and excerpt == ["Error: no config file"]
    assert find(["INFO all good", "error-free"]) == ([], [])


def signal_app(workspace: FakeWorkspace) -> Callable[[FakePreviewProcess, int], None]:
    """On SIGHUP, like tests/workspaces/previewapp: a traceback while
    settings.py holds a negative threshold, else "ready"."""

    def on_signal(process: FakePreviewProcess, signum: int) -> None:
        if "-1" in workspace.files.get("settings.py", ""):
            process.print(*TRACEBACK)
        else:
            process.print("threshold is 5", "ready")

    return on_signal


async def test_observation_reports_new_error_output_with_the_traceback() -> None:
    workspace = FakeWorkspace({"settings.py": "THRESHOLD = 3\n"}, root=ROOT)
    factory = FakePreviewFactory(on_start=ready, on_signal=signal_app(workspace))
    host, run_events = WaitingEventLog(), EventLog()
    async with running(factory, host, reload="signal") as preview:
        load = PreviewLoadGate(preview)
        observe = RuntimeObservationGate(preview, load)
        await preview.start(0)
        factory.processes[0].print("Error: an old problem, before the load")
        await host.wait_for(
            lambda events: any("old problem" in getattr(e, "text", "") for e in events)
        )
        ctx = GateContext(1, frozenset({"settings.py"}), workspace, run_events)
        assert not (await load.check(ctx)).blockers
        clean = await observe.check(ctx)
        assert clean.blockers == [] and "no runtime error within 100 ms" in clean.detail
        assert factory.processes[0].signals == [signal.SIGHUP]

        workspace.files["settings.py"] = "THRESHOLD = -1\n"
        ctx = GateContext(2, frozenset({"settings.py"}), workspace, run_events)
        loaded = await load.check(ctx)
        assert not loaded.blockers and "loaded generation 2 (signal)" in loaded.detail
        outcome = await observe.check(ctx)
        assert len(outcome.blockers) == 1
        blocker = outcome.blockers[0]
        assert blocker.gate == "runtime_observation"
        assert blocker.message == (
            "the preview printed a runtime error: ValueError: threshold must not be negative, "
            "got -1"
        )
        assert blocker.context == "\n".join(TRACEBACK)
        assert "old problem" not in (blocker.context or "")
        # The innermost frame in the workspace, 0-based.
        assert (blocker.path, blocker.line) == ("app.py", 8)
        assert [e.generation for e in run_events.of("preview_reloaded")] == [1, 2]
        assert run_events.of("preview_error")[-1].lines == TRACEBACK
        # The same generation again: no second reload, the same verdict.
        assert "already loaded" in (await load.check(ctx)).detail
        assert (await observe.check(ctx)).blockers[0].message == blocker.message
        assert len(factory.processes[0].signals) == 2


async def test_a_crash_at_start_is_a_blocker_with_the_traceback_and_exit_code() -> None:
    def crashes(process: FakePreviewProcess) -> None:
        process.print(*TRACEBACK)
        process.exit(1)

    factory = FakePreviewFactory(on_start=crashes)
    async with running(factory, readiness={"line": "ready"}) as preview:
        outcome = await PreviewStartGate(preview).check(gate_ctx(1))
        assert len(outcome.blockers) == 1
        blocker = outcome.blockers[0]
        assert blocker.gate == "preview_start"
        assert "ValueError: threshold must not be negative" in blocker.message
        assert "the preview exited with code 1" in blocker.message
        assert "Traceback (most recent call last):" in (blocker.context or "")
        assert preview.state == "exited"


async def test_output_events_are_coalesced_and_bounded() -> None:
    events = WaitingEventLog()
    factory = FakePreviewFactory(on_start=lambda p: p.print("ready"))
    # One flush a second: reading the 1,000 lines takes far less, even on a
    # loaded machine (at 0.1 s a busy machine's reads spanned several flushes).
    async with running(factory, events, output_interval_s=1.0) as preview:
        await preview.start(0)
        factory.processes[0].print(*(f"line {i}" for i in range(1000)))

        def seen(events: list[Any]) -> int:
            outputs = [e for e in events if e.type == "preview_output"]
            return sum(len(e.text.splitlines()) + e.lines_dropped for e in outputs)

        await events.wait_for(lambda events: seen(events) == 1001)
        outputs = events.of("preview_output")
        assert len(outputs) <= 3
        assert all(len(e.text.splitlines()) <= 200 for e in outputs)
        assert outputs[-1].text.endswith("line 999")
        assert sum(e.lines_dropped for e in outputs) >= 800


async def test_gate_events_go_to_the_run_and_a_disabled_preview_passes() -> None:
    host, run = EventLog(), EventLog()
    factory = FakePreviewFactory(on_start=ready)
    async with running(factory, host) as preview:
        outcome = await PreviewStartGate(preview).check(gate_ctx(1, run))
        assert outcome.blockers == []
        assert run.of("preview_started") and not host.of("preview_started")
    async with running(FakePreviewFactory(), command=None) as off:
        assert off.state == "off"
        for gate in preview_gates(off):
            result = await gate.check(gate_ctx(1))
            assert result.blockers == []


# ----------------------------------------------------------- with the loop


def write(path: str, content: str, **extra: Any) -> dict[str, Any]:
    return {
        **extra,
        "tool_calls": [{"name": "write", "arguments": {"path": path, "content": content}}],
    }


@asynccontextmanager
async def preview_agent(
    script: list[dict[str, Any]], max_repair_attempts: int = 3
) -> AsyncIterator[tuple[Agent, ReplayModel, EventLog, FakePreviewFactory]]:
    workspace = FakeWorkspace({"settings.py": "THRESHOLD = 3\n", "app.py": "..."}, root=ROOT)
    factory = FakePreviewFactory(on_start=ready, on_signal=signal_app(workspace))
    async with running(factory, reload="signal") as preview:
        await preview.start(0)
        model = ReplayModel(script)
        agent = Agent(
            model,
            tools=[FakeWriteTool()],
            env=ToolEnvironment(workspace=TrackedWorkspace(workspace, MutationLog())),
            gates=GatePipeline(preview_gates(preview)),
            config=HarnessConfig(max_repair_attempts=max_repair_attempts),
        )
        events = EventLog()
        agent.subscribe(events)
        yield agent, model, events, factory


async def test_a_runtime_error_reaches_the_model_and_the_fix_is_observed_clean() -> None:
    script = [
        write("settings.py", "THRESHOLD = -1\n"),
        {"text": "done"},
        write(
            "settings.py",
            "THRESHOLD = 5\n",
            expect={"last_message_contains": "ValueError: threshold must not be negative"},
        ),
        {"text": "fixed the threshold"},
    ]
    async with preview_agent(script) as (agent, model, events, factory):
        result = await agent.prompt("lower the threshold")
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    repair = model.requests[2].messages[-1]
    assert isinstance(repair, UserMessage) and repair.origin == "repair"
    assert "[runtime_observation] app.py:9:1 error (preview)" in repair.content
    assert "    Traceback (most recent call last):" in repair.content
    gates = [(e.gate, e.passed) for e in events.of("gate_result")]
    assert gates == [
        ("preview_load", True),
        ("runtime_observation", False),
        ("preview_load", True),
        ("runtime_observation", True),
        ("preview_start", True),
    ]
    # The run saw the preview's events; one process the whole time.
    assert [e.generation for e in events.of("preview_reloaded")] == [1, 2]
    assert len(factory.processes) == 1
    assert_well_formed(events.types())


async def test_runtime_blockers_share_the_repair_budget() -> None:
    script = [write("settings.py", "THRESHOLD = -1\n"), {"text": "done"}, {"text": "still done"}]
    async with preview_agent(script, max_repair_attempts=1) as (agent, model, events, factory):
        result = await agent.prompt("lower the threshold")
    assert result.status == "failed"
    assert result.repair_attempts == 1
    assert [b.gate for b in result.blockers] == ["runtime_observation"]
    assert "remain after 1 repair attempt" in (result.error or "")


@pytest.mark.parametrize(
    ("values", "key"),
    [
        pytest.param(
            {"readiness": {"url": "http://example.com/"}}, "readiness.url", id="remote-url"
        ),
        pytest.param({"signal": "SIGNOPE"}, "signal", id="unknown-signal"),
        pytest.param({"errorPatterns": ["("]}, "errorPatterns", id="bad-regex"),
        pytest.param({"reload": "hot"}, "reload", id="unknown-strategy"),
        pytest.param({"busyPollMs": 0}, "busyPollMs", id="busy-poll"),
        pytest.param({"busyTimeoutMs": 10}, "busyTimeoutMs", id="busy-timeout"),
        pytest.param({"exitDrainMs": -1}, "exitDrainMs", id="exit-drain"),
        pytest.param({"settleQuietMs": -1}, "settleQuietMs", id="settle-quiet"),
        pytest.param({"settleMaxMs": 700_000}, "settleMaxMs", id="settle-max"),
        pytest.param({"readiness": {"quietMs": 1}}, "readiness.quietMs", id="ready-quiet"),
        pytest.param({"readiness": {"pollMs": 0}}, "readiness.pollMs", id="ready-poll"),
    ],
)
def test_invalid_preview_configuration_names_the_key(values: dict[str, Any], key: str) -> None:
    from rein.config import load_config
    from rein.harness.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        load_config({"gates": {"preview": {"command": "x", **values}}})
    assert f"rein.gates.preview.{key}" in str(info.value)


def test_preview_configuration_defaults() -> None:
    preview = PreviewGateConfig()
    assert not preview.enabled
    assert preview.reload == "restart" and preview.signal_number == signal.SIGHUP
    assert preview.observation_window_ms == 1000 and preview.error_on_exit
    assert config(signal="usr1").signal == "SIGUSR1"
    timings = (
        preview.busy_timeout_ms,
        preview.busy_poll_ms,
        preview.exit_drain_ms,
        preview.settle_quiet_ms,
        preview.settle_max_ms,
    )
    assert timings == (10_000, 100, 1_000, 100, 500)
    readiness = preview.readiness
    assert (readiness.timeout_ms, readiness.quiet_ms, readiness.poll_ms) == (10_000, 2_000, 100)
    assert readiness.line is None and readiness.url is None


# ------------------------------------------------ a program that reloads itself


async def test_a_self_reload_is_observed_from_the_write_that_triggered_it() -> None:
    """The program reloaded on the write (its traceback, then on the fix its
    "ready", came before the gates ran): the gates look from the write."""
    host = WaitingEventLog()
    factory = FakePreviewFactory(on_start=ready)
    async with running(
        factory,
        host,
        reload="self",
        outputs=["*.log"],
        readiness={"line": "^ready", "timeoutMs": 200},
    ) as preview:
        load = PreviewLoadGate(preview)
        observe = RuntimeObservationGate(preview, load)
        await preview.start(0)
        process = factory.processes[0]

        async def printed(text: str) -> None:
            await host.wait_for(lambda events: any(text in getattr(e, "text", "") for e in events))

        preview.on_mutation(Mutation(1, ("settings.py",)))
        process.print(*TRACEBACK)
        await printed(TRACEBACK[-1])
        ctx = gate_ctx(1)
        loaded = await load.check(ctx)
        assert not loaded.blockers and "loaded generation 1 (self)" in loaded.detail
        outcome = await observe.check(ctx)
        assert [b.message for b in outcome.blockers] == [
            "the preview printed a runtime error: ValueError: threshold must not be negative, "
            "got -1"
        ]

        preview.on_mutation(Mutation(2, ("settings.py",)))
        process.print("threshold is 5", "ready")
        await printed("threshold is 5")
        # The program's own log, written since, is no write that reloads it.
        preview.on_mutation(Mutation(3, ("app.log",), "external"))
        ctx = gate_ctx(3)
        assert not (await load.check(ctx)).blockers
        assert not (await observe.check(ctx)).blockers
        assert preview.loaded_generation == 3


async def test_a_self_reload_of_documentation_alone_does_not_wait_for_the_program() -> None:
    """A README change makes no program reload: no readiness line comes,
    and none is waited for (it would fail after the readiness timeout)."""
    factory = FakePreviewFactory(on_start=ready)
    async with running(
        factory, reload="self", readiness={"line": "^ready", "timeoutMs": 200}
    ) as preview:
        await preview.start(0)
        preview.on_mutation(Mutation(1, ("README.md",)))
        outcome = await preview.reload(1)
        assert outcome.action == "reloaded" and outcome.ok
        assert preview.loaded_generation == 1
        # Without the write noted (a host that does not report mutations),
        # the reload waits for the readiness line, as before.
        missed = await preview.reload(2)
        assert missed.action == "failed" and "did not become ready within 0.2 s" in missed.message


# -------------------------------------------------------- code and the start


@pytest.mark.parametrize(
    ("path", "code"),
    [
        pytest.param("app.py", True, id="python"),
        pytest.param("README.md", False, id="readme"),
        pytest.param("pkg/NOTES.rst", False, id="rst-any-depth"),
        pytest.param("docs/conf.py", False, id="docs-folder"),
        pytest.param("notes.txt", False, id="txt"),
        pytest.param("requirements.txt", True, id="requirements-is-a-manifest"),
        pytest.param("requirements/dev.txt", True, id="requirements-folder"),
        pytest.param("LICENSE", False, id="licence"),
        pytest.param("templates/index.html", True, id="template"),
        pytest.param("pyproject.toml", True, id="pyproject"),
    ],
)
def test_what_counts_as_code(path: str, code: bool) -> None:
    assert config().is_code(path) is code


def test_non_code_is_configurable_and_the_last_pattern_decides() -> None:
    custom = config(nonCode=["*.md", "!CHANGELOG.md", "content/"])
    assert not custom.is_code("README.md") and custom.is_code("CHANGELOG.md")
    assert not custom.is_code("content/post.html") and custom.is_code("notes.txt")


@pytest.mark.parametrize(
    ("path", "output"),
    [
        pytest.param("app.log", True, id="name-any-depth"),
        pytest.param("logs/web.log", True, id="nested-name"),
        pytest.param("out", True, id="the-folder"),
        pytest.param("out/a/b.json", True, id="under-the-folder"),
        pytest.param("src/out/b.json", False, id="anchored-at-the-root"),
        pytest.param("app.py", False, id="code"),
    ],
)
def test_preview_outputs_are_globs(path: str, output: bool) -> None:
    assert config(outputs=["*.log", "out/**"]).is_output(path) is output
    assert is_preview_output(path, ["*.log", "out/**"]) is output


async def test_a_run_that_changed_only_documentation_does_not_start_the_preview() -> None:
    factory = FakePreviewFactory(on_start=ready)
    async with running(factory) as preview:
        gate = PreviewStartGate(preview)
        docs = GateContext(1, frozenset({"README.md", "docs/usage.md"}), FakeWorkspace(root=ROOT))
        outcome = await gate.check(docs)
        assert outcome.blockers == []
        assert outcome.detail == "the run changed no code; the preview is not started"
        assert factory.processes == [] and preview.state == "stopped"
        code = GateContext(2, frozenset({"README.md", "settings.py"}), FakeWorkspace(root=ROOT))
        started = await gate.check(code)
        assert started.blockers == [] and started.detail.startswith("started generation 2")
        assert preview.running


# ------------------------------------------------------ what the preview writes


class WritingProcess(FakePreviewProcess):
    """A fake preview that holds files open for writing (``open``)."""

    open: set[str] = set()

    def files_open_for_writing(self) -> set[str]:
        self.factory.lookups += 1  # type: ignore[attr-defined]
        return set(self.open)


async def test_files_the_preview_writes_are_its_output() -> None:
    factory = FakePreviewFactory()
    factory.lookups = 0  # type: ignore[attr-defined]
    async with running(factory, outputs=["out/**"]) as preview:
        assert preview.without_outputs(("app.log", "out/x.json")) == ("app.log",)
        assert factory.lookups == 0  # type: ignore[attr-defined]  # nothing runs

        opens = [{"app.log"}, set()]

        async def start(command: str) -> FakePreviewProcess:
            process = WritingProcess(factory, 4000 + len(factory.processes), command)
            process.open = opens[len(factory.processes)]
            factory.processes.append(process)
            return process

        factory.start = start  # type: ignore[method-assign]
        await preview.start(1)
        assert preview.without_outputs(("app.log", "out/x.json", "settings.py")) == ("settings.py",)
        assert factory.lookups == 1  # type: ignore[attr-defined]
        # Known now: a batch of known outputs looks nothing up; the log stays
        # the preview's while it runs, also between its writes.
        factory.processes[0].open = set()  # type: ignore[attr-defined]
        assert preview.is_preview_output("app.log")
        assert factory.lookups == 1  # type: ignore[attr-defined]
        # Its last writes may reach the watcher after it stopped: still its.
        await preview.stop()
        assert preview.is_preview_output("app.log") and factory.lookups == 1  # type: ignore[attr-defined]
        # A new process (which writes no log) is looked at afresh.
        await preview.start(2)
        assert not preview.is_preview_output("app.log")
        assert factory.lookups == 2  # type: ignore[attr-defined]
        assert preview.is_preview_output("out/x.json")
