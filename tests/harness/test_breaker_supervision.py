"""The tool-misuse breaker and stuck-tool supervision."""

from __future__ import annotations

import anyio

from rein.harness import (
    Agent,
    HarnessConfig,
    ToolContext,
    ToolResultMessage,
    UserMessage,
)
from rein.harness.events import Event
from rein.providers.replay import ReplayModel
from tests.fakes.clock import run_in_virtual_time
from tests.fakes.events import EventLog
from tests.fakes.tools import EchoArgs, EchoTool, FailTool, FunctionTool, SleepTool


def results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.messages if isinstance(m, ToolResultMessage)]


def noted_requests(model: ReplayModel) -> list[tuple[int, list[str]]]:
    """(index, notes) of every request that carried a breaker note."""
    out = []
    for i, request in enumerate(model.requests):
        notes = [
            m.content
            for m in request.messages
            if isinstance(m, UserMessage) and m.origin == "nudge"
        ]
        if notes:
            out.append((i, notes))
    return out


def stored_notes(agent: Agent) -> list[UserMessage]:
    return [m for m in agent.messages if isinstance(m, UserMessage) and m.origin == "nudge"]


def failing_turns(n: int) -> list[dict]:
    return [
        {"tool_calls": [{"name": "fail", "arguments": {"message": "no such file"}}]}
        for _ in range(n)
    ]


async def test_three_identical_rejections_add_a_corrective_note() -> None:
    model = ReplayModel(
        [
            *failing_turns(3),
            {"text": "ok", "expect": {"last_message_contains": "same fail call 3 times"}},
        ]
    )
    agent = Agent(model, tools=[FailTool()])
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    # The note came after the third failure, in that request only, last.
    [(index, [note])] = noted_requests(model)
    assert index == 3 and "no such file" in note
    assert model.requests[3].messages[-1].content == note
    # It lives in the request, not in the stored transcript.
    assert stored_notes(agent) == []


async def test_six_identical_rejections_stop_executing_that_call() -> None:
    fail = FailTool()
    model = ReplayModel(
        [
            *failing_turns(8),
            {"tool_calls": [{"name": "fail", "arguments": {"message": "other"}}]},
            {"text": "done"},
        ]
    )
    agent = Agent(model, tools=[fail])
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    # 6 real executions, 2 refused, then different arguments run again.
    assert fail.executed == 7
    contents = [r.content for r in results(agent)]
    assert contents[5] == "no such file"
    assert (
        "will not be executed again" in contents[6] and "will not be executed again" in contents[7]
    )
    assert contents[8] == "other"


async def test_a_success_resets_the_streak() -> None:
    turns = []
    for _ in range(3):
        turns += failing_turns(2)
        turns.append({"tool_calls": [{"name": "echo", "arguments": {"text": "fine"}}]})
    turns.append({"text": "done"})
    model = ReplayModel(turns)
    agent = Agent(model, tools=[FailTool(), EchoTool()])
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    assert noted_requests(model) == []


async def test_oscillation_is_nudged_then_stopped() -> None:
    turns = []
    for _ in range(5):
        turns.append({"tool_calls": [{"name": "echo", "arguments": {"text": "A"}}]})
        turns.append({"tool_calls": [{"name": "echo", "arguments": {"text": "B"}}]})
    turns.append({"text": "done"})
    model = ReplayModel(turns)
    agent = Agent(model, tools=[EchoTool()])
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    # The note lands in the request after 4 calls; after 8 the pair is refused.
    [(index, [note])] = noted_requests(model)
    assert index == 4 and "alternating" in note
    assert stored_notes(agent) == []
    contents = [r.content for r in results(agent)]
    assert contents[:8] == ["echo: A", "echo: B"] * 4
    assert all("will not be executed again" in c for c in contents[8:])


def test_a_slow_tool_emits_heartbeats() -> None:
    """On a fake clock: the tool runs until two heartbeats have arrived, so
    it finishes only if the harness emits them while it runs."""
    log = EventLog()
    two_beats = anyio.Event()

    def listener(event: Event) -> None:
        log(event)
        if len([e for e in log.of("tool_call_update") if e.kind == "heartbeat"]) >= 2:
            two_beats.set()

    async def slow(args: EchoArgs, ctx: ToolContext) -> str:
        await two_beats.wait()
        return "finished"

    async def main():
        model = ReplayModel(
            [{"tool_calls": [{"name": "slow", "arguments": {"text": "x"}}]}, {"text": "ok"}]
        )
        agent = Agent(
            model, tools=[FunctionTool("slow", slow)], config=HarnessConfig(tool_heartbeat_ms=50)
        )
        agent.subscribe(listener)
        with anyio.fail_after(5):
            result = await agent.prompt("go")
        return agent, result

    agent, result = run_in_virtual_time(main)
    assert result.status == "completed", result.error
    types = log.types()
    during = types[types.index("tool_call_start") : types.index("tool_call_end")]
    beats = [e for e in log.of("tool_call_update") if e.kind == "heartbeat"]
    assert during.count("tool_call_update") == 2
    assert len(beats) == 2 and all(b.name == "slow" for b in beats)
    assert results(agent)[0].content == "finished"


def test_a_stuck_tool_is_cancelled_and_the_run_goes_on() -> None:
    async def main():
        sleeper = SleepTool()
        model = ReplayModel(
            [
                {"tool_calls": [{"name": "sleep", "arguments": {"seconds": 60}}]},
                {
                    "text": "moving on",
                    "expect": {"last_message_contains": "did not finish within 0.1 s"},
                },
            ]
        )
        agent = Agent(model, tools=[sleeper], config=HarnessConfig(tool_timeout_ms=100))
        with anyio.fail_after(30):  # on the fake clock: half the sleep
            result = await agent.prompt("go")
        return sleeper, agent, result

    sleeper, agent, result = run_in_virtual_time(main)
    assert result.status == "completed", result.error
    assert sleeper.cancelled
    assert results(agent)[0].is_error
