"""The Agent API items of the pi-port reference (issue 15) for steering and
the run's lifecycle: steering from outside, the arrival signal, steers
never stranded, abort between runs, the cancel token, async listeners,
continue_run, reset, the watchdog's callbacks.
Each runs the real Agent with a scripted model. docs/agent-api.md names
these tests row by row."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from rein.harness import Agent, HarnessConfig
from rein.harness.events import Event
from rein.harness.messages import AssistantMessage, ToolResultMessage, UserMessage
from rein.harness.ports import ModelRequest
from rein.harness.tools import Tool, ToolContext, ToolResult
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog, assert_well_formed
from tests.fakes.flows import build_agent_flow
from tests.fakes.models import FunctionModel, assistant, call
from tests.fakes.persistence import MemoryPersistence
from tests.fakes.tools import EchoArgs, EchoTool, SleepTool


def steers(request: ModelRequest) -> list[str]:
    return [
        m.content for m in request.messages if isinstance(m, UserMessage) and m.origin == "steer"
    ]


def drain(mail: list[str]) -> Any:
    """An external steering source over ``mail``: returns and clears it."""

    async def source() -> list[str]:
        out = list(mail)
        mail.clear()
        return out

    return source


class WaitForSteeringTool(Tool[EchoArgs]):
    """Awaits ``ctx.steering_arrived`` (no polling), as long tools do."""

    name = "wait"
    description = "Wait until steering arrives."
    args_model = EchoArgs

    def __init__(self) -> None:
        self.started = anyio.Event()

    async def execute(self, args: EchoArgs, ctx: ToolContext) -> ToolResult:
        self.started.set()
        await ctx.steering_arrived.wait()
        return ToolResult("stopped: steering arrived")


# ------------------------------------------------------------------ steering


async def test_the_external_source_is_drained_at_every_boundary_before_the_queue() -> None:
    inbox: list[list[str]] = [["from the inbox"], [], []]
    asked = 0

    async def source() -> list[str]:
        nonlocal asked
        asked += 1
        return inbox.pop(0) if inbox else []

    agent: Agent

    def turn(request: ModelRequest) -> AssistantMessage:
        if len(model.requests) == 1:
            return assistant("", call("echo", "c1", text="x"))
        return assistant("done")

    model = FunctionModel(turn)
    agent, log = build_agent_flow(model, steering_mode="all")
    agent.steer("from the queue")  # queued before the run: delivered with the inbox
    agent.external_steering_source = source  # late wiring, after construction
    result = await agent.prompt("go")
    assert result.status == "completed"
    # Before the first turn: the inbox first, then the queue.
    assert steers(model.requests[0]) == ["from the inbox", "from the queue"]
    assert asked >= 2  # before the first turn and after the tool turn
    assert log.of("steering_applied")[0].texts == ["from the inbox", "from the queue"]


async def test_a_raising_external_source_is_reported_and_loses_nothing() -> None:
    async def source() -> list[str]:
        raise RuntimeError("inbox offline")

    model = ReplayModel([{"text": "done"}])
    agent, log = build_agent_flow(model)
    agent.external_steering_source = source
    agent.steer("kept")
    result = await agent.prompt("go")
    assert result.status == "completed"
    assert steers(model.requests[0]) == ["kept"]
    errors = [e for e in log.of("error") if e.where == "steering"]
    assert errors and "inbox offline" in errors[0].message


async def test_a_running_tool_can_await_steering_arrived() -> None:
    tool = WaitForSteeringTool()
    model = ReplayModel(
        [{"tool_calls": [{"name": "wait", "arguments": {"text": "x"}}]}, {"text": "ok"}]
    )
    agent, _ = build_agent_flow(model, tool)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await tool.started.wait()
        agent.steer("change of plan")
    results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert results[0].content == "stopped: steering arrived"
    assert steers(model.requests[1]) == ["change of plan"]


async def test_poke_wakes_the_tool_without_queueing_and_the_external_mail_lands_once() -> None:
    tool = WaitForSteeringTool()
    mail: list[str] = []

    source = drain(mail)

    model = ReplayModel(
        [{"tool_calls": [{"name": "wait", "arguments": {"text": "x"}}]}, {"text": "ok"}]
    )
    agent, _ = build_agent_flow(model, tool)
    agent.external_steering_source = source
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await tool.started.wait()
        mail.append("mail for the child")
        agent.poke_steering()
        assert not agent.has_steering  # a poke queues nothing
    assert steers(model.requests[1]) == ["mail for the child"]
    assert sum(m.content == "mail for the child" for m in agent.messages) == 1


async def test_the_external_probe_soft_yields_a_long_tool() -> None:
    tool = WaitForSteeringTool()
    mail: list[str] = []

    source = drain(mail)

    async def probe() -> bool:
        return bool(mail)

    model = ReplayModel(
        [{"tool_calls": [{"name": "wait", "arguments": {"text": "x"}}]}, {"text": "ok"}]
    )
    agent, _ = build_agent_flow(model, tool, external_steering_probe_ms=10)
    agent.external_steering_source = source
    agent.external_steering_probe = probe
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await tool.started.wait()
        mail.append("inbox mail")  # no poke: the probe finds it
    assert steers(model.requests[1]) == ["inbox mail"]


async def test_a_steer_during_the_final_turn_starts_another_turn() -> None:
    agent: Agent

    def turn(request: ModelRequest) -> AssistantMessage:
        if len(model.requests) == 1:
            agent.steer("one more thing")  # arrives while the final answer streams
            return assistant("all done")
        return assistant("did the one more thing")

    model = FunctionModel(turn)
    agent, _ = build_agent_flow(model)
    result = await agent.prompt("go")
    assert result.status == "completed"
    assert len(model.requests) == 2
    assert steers(model.requests[1]) == ["one more thing"]
    assert result.text == "did the one more thing"
    assert not agent.has_steering


async def test_one_at_a_time_delivers_each_remaining_steer_at_its_own_boundary() -> None:
    agent: Agent

    def turn(request: ModelRequest) -> AssistantMessage:
        if len(model.requests) == 1:
            agent.steer("a")
            agent.steer("b")
            agent.steer("c")
        return assistant(f"answer {len(model.requests)}")

    model = FunctionModel(turn)
    agent, log = build_agent_flow(model)
    assert agent.config.steering_mode == "one-at-a-time"  # the default
    result = await agent.prompt("go")
    assert result.status == "completed"
    assert [e.texts for e in log.of("steering_applied")] == [["a"], ["b"], ["c"]]
    assert len(model.requests) == 4


# --------------------------------------------------------------- the runs


async def test_abort_at_agent_start_stops_the_run_and_loses_nothing() -> None:
    model = ReplayModel([{"text": "should not run"}])
    agent = Agent(model, tools=[EchoTool()])

    def on_event(event: Event) -> None:
        if event.type == "agent_start":
            assert agent.abort("changed my mind")

    agent.subscribe(on_event)
    result = await agent.prompt("go")
    assert result.status == "aborted"
    assert model.requests == []
    assert [m.content for m in agent.messages if isinstance(m, UserMessage)] == ["go"]


async def test_abort_between_a_run_and_its_follow_up_keeps_the_follow_up_queued() -> None:
    model = ReplayModel([{"text": "first"}, {"text": "follow-up ran"}])
    agent = Agent(model, tools=[EchoTool()])
    agent.follow_up("then this")

    def on_event(event: Event) -> None:
        if event.type == "run_end":
            agent.abort("stop after this run")

    agent.subscribe(on_event)
    result = await agent.prompt("go")
    assert result.text == "first"
    assert (result.status, result.error) == ("aborted", "stop after this run")
    assert len(model.requests) == 1
    assert agent.has_queued_messages()  # not lost: the host decides


async def test_abort_while_the_store_commits_stops_the_follow_up() -> None:
    model = ReplayModel([{"text": "first"}, {"text": "follow-up ran"}])
    store = MemoryPersistence()
    agent = Agent(model, tools=[EchoTool()], persistence=store)
    agent.follow_up("then this")
    original = store.checkpoint

    async def checkpoint() -> None:
        if agent.last_result is None and agent.current_run_id and model.requests:
            agent.abort("stop now")
        await original()

    store.checkpoint = checkpoint  # type: ignore[method-assign]
    await agent.prompt("go")
    assert len(model.requests) == 1


async def test_continue_run_starts_from_queued_messages_after_an_answer() -> None:
    model = ReplayModel([{"text": "first answer"}, {"text": "continued"}])
    agent, _ = build_agent_flow(model)
    await agent.prompt("go")
    with pytest.raises(ValueError, match="nothing is queued"):
        await agent.continue_run()
    agent.follow_up("and then?")
    result = await agent.continue_run()
    assert result.text == "continued"
    assert model.requests[1].messages[-1].content == "and then?"  # type: ignore[union-attr]


async def test_reset_clears_waiting_for_and_the_per_run_seeds() -> None:
    model = ReplayModel([{"text": "x"}])
    agent = Agent(model, tools=[EchoTool()], waiting_for="call_9")
    agent.required_output = "submit"
    agent.follow_up("later")
    agent.reset()
    assert agent.waiting_for is None
    assert agent.required_output is None
    assert agent.last_result is None
    assert not agent.has_queued_messages()
    assert agent.state.status == "idle"


async def test_state_is_a_snapshot_mid_stream_and_mid_tool() -> None:
    seen: dict[str, Any] = {}
    tool_started = anyio.Event()
    release = anyio.Event()

    class Blocking(Tool[EchoArgs]):
        name = "block"
        description = "Block until released."
        args_model = EchoArgs

        async def execute(self, args: EchoArgs, ctx: ToolContext) -> ToolResult:
            tool_started.set()
            await release.wait()
            return ToolResult("released")

    agent: Agent

    def on_event(event: Event) -> None:
        if event.type == "message_delta" and "stream" not in seen:
            seen["stream"] = agent.state

    model = ReplayModel(
        [
            {
                "text": "thinking aloud",
                "tool_calls": [{"name": "block", "arguments": {"text": "x"}}],
            },
            {"text": "done"},
        ]
    )
    agent = Agent(model, tools=[Blocking()])
    agent.subscribe(on_event)
    agent.follow_up("queued")
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await tool_started.wait()
        mid_tool = agent.state
        release.set()
    streaming = seen["stream"]
    assert streaming.status == "running"
    assert streaming.streaming_message is not None
    assert "thinking" in streaming.streaming_message.text
    assert mid_tool.streaming_message is None
    assert len(mid_tool.pending_tool_calls) == 1
    assert mid_tool.queued_follow_ups == 1
    assert mid_tool.run_id is not None
    after = agent.state
    assert after.status == "idle" and after.pending_tool_calls == ()
    assert after.last_result is not None
    with pytest.raises(AttributeError):
        after.status = "running"  # type: ignore[misc]


async def test_a_host_task_linked_to_the_cancel_token_is_cancelled_by_abort() -> None:
    sleeper = SleepTool()
    side_cancelled = anyio.Event()
    model = ReplayModel([{"tool_calls": [{"name": "sleep", "arguments": {"seconds": 30}}]}])
    agent, _ = build_agent_flow(model, sleeper)
    assert agent.cancel_token is None

    async def side_work() -> None:
        token = agent.cancel_token
        assert token is not None
        with token.linked():
            await anyio.sleep_forever()
        side_cancelled.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await sleeper.started.wait()
        tg.start_soon(side_work)
        await anyio.lowlevel.checkpoint()
        agent.abort("stop everything")
        await side_cancelled.wait()
    assert agent.cancel_token is None


async def test_async_listeners_are_awaited_in_order_and_wait_for_idle_waits_for_them() -> None:
    handled: list[str] = []

    async def slow_listener(event: Event) -> None:
        await anyio.lowlevel.checkpoint()
        handled.append(event.type)

    model = ReplayModel([{"text": "hi"}])
    agent, log = build_agent_flow(model)
    agent.subscribe(slow_listener)
    await agent.prompt("go")
    await agent.wait_for_idle()
    assert handled == log.types()
    assert handled[-1] == "agent_end"
    assert_well_formed(handled)


async def test_the_watchdog_callbacks_report_pauses_and_fires() -> None:
    fired: list[BaseException] = []

    async def stall(request: ModelRequest) -> AssistantMessage:
        await anyio.sleep_forever()
        raise AssertionError

    agent = Agent(
        FunctionModel(stall),
        tools=[EchoTool()],
        config=HarnessConfig(run_idle_timeout_ms=50),
        on_run_idle_timeout=fired.append,
    )
    result = await agent.prompt("go")
    assert result.status == "aborted"
    assert len(fired) == 1 and isinstance(fired[0], TimeoutError)
    assert "idle timeout" in str(fired[0])
    assert HarnessConfig().run_idle_timeout_ms > 600_000  # longer than any default bound


def test_the_queue_modes_and_limits_read_under_the_reference_names() -> None:
    from datetime import timedelta

    agent = Agent(ReplayModel([]), config=HarnessConfig(max_empty_retries=2))
    assert (agent.steering_mode, agent.follow_up_mode) == ("one-at-a-time", "one-at-a-time")
    agent.steering_mode = "all"
    agent.follow_up_mode = "all"
    assert (agent.config.steering_mode, agent.config.follow_up_mode) == ("all", "all")
    assert agent.max_empty_retries == 2
    assert agent.run_idle_timeout == timedelta(seconds=900)


async def test_a_watchdog_pause_is_reported_to_the_host() -> None:
    from rein.harness.gating.gates import GatePipeline

    paused: list[str] = []
    model = ReplayModel([{"text": "done"}])
    agent = Agent(
        model,
        tools=[EchoTool()],
        gates=GatePipeline([]),
        on_run_watchdog_paused=lambda: paused.append("paused"),
    )
    log = EventLog()
    agent.subscribe(log)
    await agent.prompt("go")
    # Taking the gates' baselines is declared long work: one pause, reported.
    assert [e.reason for e in log.of("watchdog_paused")] == ["gate baselines"]
    assert paused == ["paused"]


class GappedModel:
    """Streams ``chunks``, waiting ``gap`` seconds (on the test's clock)
    before each: a slow provider that keeps talking."""

    name = "gapped"

    def __init__(self, chunks: list[str], gap: float) -> None:
        self.chunks = chunks
        self.gap = gap

    def stream(self, request: ModelRequest) -> Any:
        return self._stream()

    async def _stream(self) -> Any:
        from rein.harness.ports import TextDelta, TurnDone

        for chunk in self.chunks:
            await anyio.sleep(self.gap)
            yield TextDelta(chunk)
        yield TurnDone(assistant("".join(self.chunks)))


@pytest.mark.parametrize(("chunks", "gap", "fires"), [(list("abcde"), 0.6, 0), (["abcde"], 3.0, 1)])
def test_streaming_deltas_reset_the_idle_watchdog(
    chunks: list[str], gap: float, fires: int
) -> None:
    """Five deltas 0.6 limits apart (three limits in all) never trip a 1 s
    watchdog; one 3-limit silence does (the control)."""
    from tests.fakes.clock import run_in_virtual_time

    fired: list[BaseException] = []

    async def main() -> str:
        agent = Agent(
            GappedModel(chunks, gap),
            tools=[EchoTool()],
            config=HarnessConfig(run_idle_timeout_ms=1_000),
            on_run_idle_timeout=fired.append,
        )
        with anyio.fail_after(60):
            return (await agent.prompt("go")).status

    status = run_in_virtual_time(main)
    assert len(fired) == fires
    assert status == ("completed" if fires == 0 else "aborted")


def test_the_default_idle_timeout_exceeds_every_default_gate_and_tool_timeout() -> None:
    from rein.harness.config import GatesConfig

    def timeouts(model: Any, where: str = "") -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        for name in type(model).model_fields:
            value = getattr(model, name)
            if name.endswith("timeout_ms") and isinstance(value, int):
                out.append((where + name, value))
            elif hasattr(type(value), "model_fields"):
                out.extend(timeouts(value, f"{where}{name}."))
        return out

    others = [*timeouts(GatesConfig(), "gates."), *timeouts(HarnessConfig())]
    others = [(n, v) for n, v in others if n != "run_idle_timeout_ms"]
    assert any(name.startswith("gates.") for name, _ in others)
    assert all(HarnessConfig().run_idle_timeout_ms > value for _, value in others), others


async def test_a_steer_left_from_an_earlier_run_is_delivered_late_and_says_so() -> None:
    model = ReplayModel([{"text": "first"}, {"text": "second"}])
    agent, log = build_agent_flow(model)
    await agent.prompt("one")
    agent.steer("sent after the first run ended")
    assert agent.has_steering
    await agent.prompt("two")
    [applied] = log.of("steering_applied")
    assert applied.texts == ["sent after the first run ended"]
    assert applied.late is True


async def test_a_steer_at_the_turn_limit_stays_queued_instead_of_going_unanswered() -> None:
    agent: Agent

    def turn(request: ModelRequest) -> AssistantMessage:
        agent.steer("too late for this run")
        return assistant("", call("echo", f"c{len(model.requests)}", text="x"))

    model = FunctionModel(turn)
    agent, _ = build_agent_flow(model, max_model_turns_per_run=1)
    result = await agent.prompt("go")
    assert result.status == "failed" and "model turns" in (result.error or "")
    assert agent.has_steering
    assert not any(m.content == "too late for this run" for m in agent.messages)


async def test_a_steer_left_queued_in_one_at_a_time_mode_does_not_cut_later_tools_short() -> None:
    seen: list[bool] = []

    class Probe(Tool[EchoArgs]):
        name = "probe"
        description = "Report whether steering is waiting."
        args_model = EchoArgs

        async def execute(self, args: EchoArgs, ctx: ToolContext) -> ToolResult:
            seen.append(ctx.steering_arrived.is_set())
            return ToolResult("ok")

    agent: Agent

    def turn(request: ModelRequest) -> AssistantMessage:
        n = len(model.requests)
        if n == 1:
            agent.steer("a")
            agent.steer("b")
        if n <= 3:
            return assistant("", call("probe", f"c{n}", text="x"))
        return assistant("done")

    model = FunctionModel(turn)
    agent, _ = build_agent_flow(model, Probe())
    await agent.prompt("go")
    # The first phase is woken by the steers that arrived during its turn;
    # the later ones, with "b" still queued for its own boundary, are not.
    assert seen == [True, False, False]


async def test_mail_reaching_the_source_during_the_final_turn_starts_another_turn() -> None:
    inbox: list[str] = []

    source = drain(inbox)

    agent: Agent

    def turn(request: ModelRequest) -> AssistantMessage:
        if len(model.requests) == 1:
            inbox.append("mail during the answer")  # no probe, no poke
            return assistant("answer")
        return assistant("answered the mail")

    model = FunctionModel(turn)
    agent, _ = build_agent_flow(model)
    agent.external_steering_source = source
    result = await agent.prompt("go")
    assert len(model.requests) == 2
    assert steers(model.requests[1]) == ["mail during the answer"]
    assert result.text == "answered the mail"
