"""The context window and its policies: ``context_window_cap``, the
over-window relief (pluggable, off, after a provider's context-length
error) and the request's messages from ``prepare_next_turn``."""

from __future__ import annotations

from collections.abc import Sequence

from rein.harness import (
    Agent,
    AssistantMessage,
    HarnessConfig,
    Hooks,
    ToolResultMessage,
    TurnInfo,
    TurnOverrides,
    UserMessage,
)
from rein.harness.conversation.context import FitReport
from rein.harness.conversation.relief import ElideThenSummarise, ReliefRequest
from rein.harness.conversation.tokens import estimate_message_tokens
from rein.harness.messages import Message, TextPart, ToolCall
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog
from tests.fakes.tools import EchoTool

#: ~1,000 tokens each (one word per 7 characters or less).
BODY = " ".join(["word"] * 1000)

#: What OpenAI and Anthropic answer when the prompt is over the window.
OPENAI_TOO_LONG = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens.",
        "type": "invalid_request_error",
        "code": "context_length_exceeded",
    }
}
ANTHROPIC_TOO_LONG = {
    "type": "error",
    "error": {"type": "invalid_request_error", "message": "prompt is too long: 9000 > 8192"},
}


def history(results: int) -> list[Message]:
    """A transcript of ``results`` answered tool calls of ~1,000 tokens each."""
    out: list[Message] = [UserMessage(content="read them")]
    for i in range(results):
        out.append(
            AssistantMessage(
                content=(ToolCall(id=f"c{i}", name="big", arguments={"i": i}),),
                stop_reason="tool_use",
            )
        )
        out.append(ToolResultMessage(tool_call_id=f"c{i}", tool_name="big", content=BODY))
    out.append(AssistantMessage(content=(TextPart(text="read them all"),)))
    return out


def tokens(messages: Sequence[Message]) -> int:
    return sum(estimate_message_tokens(m) for m in messages)


# ------------------------------------------------------- context_window_cap


def test_the_cap_is_the_window_lower_or_higher_than_the_catalogue() -> None:
    assert HarnessConfig(max_context_tokens=100_000, context_window_cap=2000).context_window == 2000
    assert HarnessConfig(max_context_tokens=2000, context_window_cap=9000).context_window == 9000
    assert HarnessConfig(max_context_tokens=2000).context_window == 2000


async def test_a_cap_above_the_catalogue_window_sends_the_whole_context() -> None:
    """The catalogue says 2,000 tokens, the endpoint serves 20,000: with the
    cap, ~6,000 tokens go out whole; without it, they would not fit."""
    config = HarnessConfig(max_context_tokens=2000)
    model = ReplayModel([{"text": "ok"}])
    agent = Agent(model, config=config, messages=history(6), context_window_cap=20_000)
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("go on")
    assert result.status == "completed", result.error
    assert log.of("compaction") == []
    assert [m.content for m in model.requests[0].messages if isinstance(m, ToolResultMessage)] == [
        BODY
    ] * 6

    uncapped = Agent(ReplayModel([{"text": "ok"}]), config=config, messages=history(6))
    uncapped.over_window_relief = None
    refused = await uncapped.prompt("go on")
    assert refused.status == "failed" and "window (2000 tokens)" in (refused.error or "")


async def test_changing_the_configuration_or_the_cap_between_runs_reaches_the_budget() -> None:
    model = ReplayModel([{"text": "first"}, {"text": "third"}])
    agent = Agent(model, messages=history(3), over_window_relief=None)
    assert (await agent.prompt("one")).status == "completed"
    # A smaller window from the new configuration: the guard now trips.
    agent.config = HarnessConfig(max_context_tokens=1000)
    second = await agent.prompt("two")
    assert second.status == "failed"
    assert "exceeds the window (1000 tokens)" in (second.error or "")
    # The Agent's cap raises it again, for the next run.
    agent.context_window_cap = 50_000
    assert agent.context_window == 50_000
    third = await agent.prompt("three")
    assert third.status == "completed", third.error
    assert len(model.requests) == 2


# ------------------------------------------------------- over_window_relief


async def test_without_relief_the_guard_fails_the_run_verbatim_and_compacts_nothing() -> None:
    before = history(6)
    model = ReplayModel([{"text": "never"}])
    agent = Agent(
        model,
        config=HarnessConfig(max_context_tokens=3000),
        messages=before,
        over_window_relief=None,
    )
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("go on")
    assert result.status == "failed"
    assert (result.error or "").startswith("context overflow: the request (~")
    assert "exceeds the window (3000 tokens) and over-window relief is off" in (result.error or "")
    assert model.requests == [] and log.of("compaction") == []
    assert list(agent.messages[: len(before)]) == before


class DropOldest:
    """A relief that drops the oldest answered tool turns (and records what
    it was asked)."""

    def __init__(self) -> None:
        self.asked: list[ReliefRequest] = []

    async def relieve(self, request: ReliefRequest) -> list[FitReport]:
        self.asked.append(request)
        before = len(request.messages)
        while tokens(request.messages) + request.overhead > request.window:
            del request.messages[1:3]  # an assistant call and its result
        return [FitReport("elide", 0, 0, before - len(request.messages), "dropped")]


async def test_a_relief_attached_after_construction_is_used() -> None:
    model = ReplayModel([{"text": "ok"}])
    agent = Agent(
        model,
        config=HarnessConfig(max_context_tokens=3000),
        messages=history(6),
        over_window_relief=None,
    )
    relief = DropOldest()
    agent.over_window_relief = relief
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("go on")
    assert result.status == "completed", result.error
    [asked] = relief.asked
    assert asked.reason == "over_window" and asked.window == 3000
    assert asked.messages is agent.messages  # the stored transcript: the relief persists
    assert tokens(model.requests[0].messages) <= 3000
    assert [c.detail for c in log.of("compaction")] == ["dropped"]


async def test_the_window_check_runs_on_what_transform_context_produced() -> None:
    """The stored transcript is over the window, but the transform sends only
    its last messages: no relief is needed. And the other way round: a
    transform that adds a large context trips the guard."""

    def last_three(messages: Sequence[Message]) -> list[Message]:
        return list(messages[-3:])

    model = ReplayModel([{"text": "ok"}])
    relief = DropOldest()
    agent = Agent(
        model,
        config=HarnessConfig(max_context_tokens=3000),
        messages=history(6),
        hooks=Hooks(transform_context=last_three),
        over_window_relief=relief,
    )
    result = await agent.prompt("go on")
    assert result.status == "completed", result.error
    assert relief.asked == []
    assert len(model.requests[0].messages) == 3

    def inflate(messages: Sequence[Message]) -> list[Message]:
        return [UserMessage(content=BODY * 4), *messages]

    small = Agent(
        ReplayModel([{"text": "never"}]),
        config=HarnessConfig(max_context_tokens=3000),
        hooks=Hooks(transform_context=inflate),
        over_window_relief=None,
    )
    refused = await small.prompt("hi")
    assert refused.status == "failed" and "context overflow" in (refused.error or "")


async def test_a_context_length_error_gets_relief_and_one_retry() -> None:
    model = ReplayModel(
        [
            {"fault": {"status": 400, "body": OPENAI_TOO_LONG}},
            {"text": "fits now"},
        ]
    )
    # The estimate (~6,000 tokens) is under the window: only the provider knows.
    agent = Agent(model, config=HarnessConfig(max_context_tokens=50_000), messages=history(6))
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("go on")
    assert result.status == "completed", result.error
    assert result.text == "fits now"
    rejected, retried = (tokens(r.messages) for r in model.requests)
    assert retried <= rejected * 0.75
    assert [c.kind for c in log.of("compaction")] == ["elide"]
    assert any("maximum context length" in e.message for e in log.of("error"))


async def test_a_second_context_length_error_fails_the_run() -> None:
    model = ReplayModel(
        [
            {"fault": {"status": 400, "body": ANTHROPIC_TOO_LONG}},
            {"fault": {"status": 400, "body": ANTHROPIC_TOO_LONG}},
            {"text": "never"},
        ]
    )
    agent = Agent(model, messages=history(6))
    result = await agent.prompt("go on")
    assert result.status == "failed"
    assert "model error" in (result.error or "") and "prompt is too long" in (result.error or "")
    assert len(model.requests) == 2


async def test_a_context_length_error_without_relief_fails_verbatim() -> None:
    model = ReplayModel([{"fault": {"status": 400, "body": OPENAI_TOO_LONG}}, {"text": "never"}])
    agent = Agent(model, messages=history(6), over_window_relief=None)
    result = await agent.prompt("go on")
    assert result.status == "failed"
    assert "refused the request as longer than the model's window" in (result.error or "")
    assert len(model.requests) == 1


async def test_the_default_relief_is_elide_then_summarise() -> None:
    assert isinstance(Agent(ReplayModel([])).over_window_relief, ElideThenSummarise)


# ------------------------------------------------------- prepare_next_turn


async def test_prepare_next_turn_system_replaces_the_prompt_for_the_rest_of_the_run() -> None:
    def from_the_second_turn(info: TurnInfo) -> TurnOverrides | None:
        return TurnOverrides(system="the new prompt") if info.turn == 2 else None

    model = ReplayModel(
        [
            {"tool_calls": [{"name": "echo", "arguments": {"text": "x"}}]},
            {"tool_calls": [{"name": "echo", "arguments": {"text": "y"}}]},
            {"text": "done"},
        ]
    )
    agent = Agent(
        model,
        tools=[EchoTool()],
        system_prompt="the first prompt",
        hooks=Hooks(prepare_next_turn=from_the_second_turn),
    )
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    assert [r.system for r in model.requests] == [
        "the first prompt",
        "the new prompt",
        "the new prompt",
    ]


async def test_prepare_next_turn_sets_the_messages_of_one_request_only() -> None:
    def only_on_the_first_turn(info: TurnInfo) -> TurnOverrides | None:
        if info.turn == 1:
            return TurnOverrides(messages=[UserMessage(content="a different context")])
        return None

    model = ReplayModel(
        [
            {"tool_calls": [{"name": "echo", "arguments": {"text": "x"}}]},
            {"text": "done"},
        ]
    )
    agent = Agent(model, tools=[EchoTool()], hooks=Hooks(prepare_next_turn=only_on_the_first_turn))
    result = await agent.prompt("the real prompt")
    assert result.status == "completed", result.error
    first, second = model.requests
    assert [m.content for m in first.messages] == ["a different context"]  # type: ignore[union-attr]
    # Not stored, and not carried over: the next request is the transcript.
    assert isinstance(second.messages[0], UserMessage)
    assert second.messages[0].content == "the real prompt"
    assert not any(
        isinstance(m, UserMessage) and m.content == "a different context" for m in agent.messages
    )
