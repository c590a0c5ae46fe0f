"""A turn is bounded whatever the model sends (issue 30, item 6): tool-call
arguments nested hundreds of levels deep get the error result of invalid
JSON and the run goes on; calls past ``harness.maxToolCallsPerTurn`` are
not run, each with a result saying why; what a tool streams to the client
is bounded per event and per call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rein.harness import Agent, HarnessConfig, ToolContext, ToolResultMessage
from rein.harness.calls.arguments import MAX_ARGUMENT_DEPTH
from rein.harness.calls.tool_updates import MAX_STREAMED_CHARS, MAX_UPDATE_CHARS
from rein.harness.messages import AssistantMessage, ToolCall
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog
from tests.fakes.models import FunctionModel, assistant
from tests.fakes.tools import EchoArgs, EchoTool, FunctionTool


def results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.messages if isinstance(m, ToolResultMessage)]


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def serialised(events: EventLog) -> list[str]:
    """Every event as the hosts send it (JSON), as ``rein run --json`` and
    the store do: a value nested too deep fails here."""
    return [event.model_dump_json() for event in events.events]


# ------------------------------------------------------------ nested arguments


@pytest.mark.parametrize("depth", [254, 300, 1_000, 100_000])
async def test_deeply_nested_arguments_get_the_invalid_json_result_and_the_run_goes_on(
    depth: int,
) -> None:
    raw = '{"text": ' + nested(depth) + "}"
    model = ReplayModel(
        [
            {"tool_calls": [{"name": "echo", "raw_arguments": raw}]},
            {"tool_calls": [{"name": "echo", "arguments": {"text": "again"}}]},
            {"text": "done"},
        ]
    )
    echo = EchoTool()
    agent = Agent(model, tools=[echo])
    events = EventLog()
    agent.subscribe(events)
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    first, second = results(agent)
    assert first.is_error
    assert first.content == (
        "The arguments for echo were not valid JSON: the arguments are nested deeper than "
        f"{MAX_ARGUMENT_DEPTH} levels. Send a JSON object that matches the tool's schema."
    )
    assert second.content == "echo: again" and not second.is_error
    # The model read the error, and every event can be sent.
    assert any(
        isinstance(m, ToolResultMessage) and "nested deeper" in m.content
        for m in model.requests[1].messages
    )
    assert len(serialised(events)) == len(events.events)
    json.dumps([m.model_dump() for m in agent.messages])


async def test_a_model_that_builds_deep_arguments_itself_is_bounded_too() -> None:
    # Any Model, not only the providers that parse JSON: the final message
    # is checked before the loop uses it.
    deep: Any = "leaf"
    for _ in range(300):
        deep = {"a": deep}
    replies = iter(
        [assistant("", ToolCall(id="c1", name="echo", arguments={"text": deep})), assistant("ok")]
    )
    agent = Agent(FunctionModel(lambda _request: next(replies)), tools=[EchoTool()])
    events = EventLog()
    agent.subscribe(events)
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    [only] = results(agent)
    assert only.is_error and "nested deeper than 64 levels" in only.content
    calls = [m for m in agent.messages if isinstance(m, AssistantMessage)][0].tool_calls
    assert calls[0].arguments == {} and calls[0].parse_error is not None
    serialised(events)


async def test_arguments_at_the_depth_limit_are_used() -> None:
    value: Any = "leaf"
    for _ in range(MAX_ARGUMENT_DEPTH - 1):
        value = [value]
    seen: list[Any] = []

    def keep(args: EchoArgs, _ctx: ToolContext) -> str:
        seen.append(args.text)
        return "kept"

    class DeepArgs(EchoArgs):
        text: Any  # type: ignore[assignment]

    tool = FunctionTool("deep", keep)
    tool.args_model = DeepArgs  # type: ignore[misc]
    model = ReplayModel(
        [{"tool_calls": [{"name": "deep", "arguments": {"text": value}}]}, {"text": "done"}]
    )
    agent = Agent(model, tools=[tool])
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    assert seen == [value]


# ------------------------------------------------------------ calls per turn


async def test_calls_past_the_cap_each_get_a_result_saying_why() -> None:
    calls = [{"name": "echo", "arguments": {"text": str(i)}} for i in range(10)]
    model = ReplayModel([{"tool_calls": calls}, {"text": "done"}])
    echo = EchoTool()
    agent = Agent(model, tools=[echo], config=HarnessConfig(max_tool_calls_per_turn=4))
    events = EventLog()
    agent.subscribe(events)
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    answered = results(agent)
    assert [r.tool_call_id for r in answered] == [f"call_0_{i}" for i in range(10)]
    assert [r.content for r in answered[:4]] == [f"echo: {i}" for i in range(4)]
    for refused in answered[4:]:
        assert refused.is_error
        assert refused.content == (
            "Not run: this turn asked for 10 tool calls; only the first 4 ran "
            "(harness.maxToolCallsPerTurn). Call it again later if it is still needed."
        )
    assert len(events.of("tool_call_start")) == len(events.of("tool_call_end")) == 10
    assert events.of("turn_end")[0].tool_calls == 10


async def test_ten_thousand_calls_in_one_turn_run_the_default_cap() -> None:
    calls = [{"name": "echo", "arguments": {"text": str(i)}} for i in range(10_000)]
    model = ReplayModel([{"tool_calls": calls}, {"text": "done"}])
    ran: list[str] = []
    tool = FunctionTool("echo", lambda args, _ctx: ran.append(args.text) or "ok")
    # The turn's 10,000 calls and results need a large window to go on.
    agent = Agent(model, tools=[tool], config=HarnessConfig(max_context_tokens=2_000_000))
    assert agent.config.max_tool_calls_per_turn == 64
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    assert len(ran) == 64
    answered = results(agent)
    assert len(answered) == 10_000
    assert sum(r.is_error for r in answered) == 10_000 - 64


def test_the_cap_is_a_setting() -> None:
    config = HarnessConfig.model_validate({"maxToolCallsPerTurn": 8})
    assert config.max_tool_calls_per_turn == 8
    with pytest.raises(ValueError, match="maxToolCallsPerTurn"):
        HarnessConfig.model_validate({"maxToolCallsPerTurn": 0})


# -------------------------------------------------------------- streamed output


async def test_what_a_tool_streams_is_bounded_per_event_and_per_call() -> None:
    def chatty(_args: EchoArgs, ctx: ToolContext) -> str:
        for _ in range(30):
            ctx.update("y" * 100_000)  # 3 MB in updates of 100,000 characters
        ctx.update("z" * (MAX_UPDATE_CHARS * 3), "status")
        return "done"

    model = ReplayModel(
        [{"tool_calls": [{"name": "chatty", "arguments": {"text": ""}}]}, {"text": "done"}]
    )
    agent = Agent(model, tools=[FunctionTool("chatty", chatty)])
    events = EventLog()
    agent.subscribe(events)
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    updates = events.of("tool_call_update")
    output = [u.text for u in updates if u.kind == "output"]
    assert all(len(u.text) <= MAX_UPDATE_CHARS for u in updates)
    assert sum(map(len, output)) == MAX_STREAMED_CHARS
    notes = [u.text for u in updates if u.kind == "status" and "not streamed" in u.text]
    assert notes == [
        f"[output past {MAX_STREAMED_CHARS:,} characters is not streamed; "
        "the result keeps its start and end]"
    ]
