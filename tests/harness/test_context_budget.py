"""The context budget: elision, summarising compaction, overflow."""

from __future__ import annotations

from collections import Counter

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rein.harness import (
    Agent,
    AssistantMessage,
    HarnessConfig,
    ToolResultMessage,
    UserMessage,
)
from rein.harness.conversation.context import ContextBudget, ContextOverflowError, valid_cut_points
from rein.harness.messages import Message, TextPart, ToolCall
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog, assert_well_formed
from tests.fakes.tools import EchoTool, FunctionTool


def big_read() -> FunctionTool:
    return FunctionTool("big", lambda args, ctx: f"[{args.text}] " + "y" * 4000)


def big_turns(n: int) -> list[dict]:
    return [{"tool_calls": [{"name": "big", "arguments": {"text": f"r{i}"}}]} for i in range(n)]


async def test_oldest_tool_results_are_elided_and_the_newest_kept() -> None:
    model = ReplayModel([*big_turns(12), {"text": "done"}])
    agent = Agent(model, tools=[big_read()], config=HarnessConfig(max_context_tokens=6000))
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("read a lot")
    assert result.status == "completed", result.error
    compactions = log.of("compaction")
    assert compactions and all(c.kind == "elide" for c in compactions)
    assert all(c.tokens_after < c.tokens_before for c in compactions)
    # What the model saw last: old results elided, the newest four whole, pairing intact.
    seen = model.requests[-1].messages
    results = [m for m in seen if isinstance(m, ToolResultMessage)]
    assert len(results) == 12
    assert results[0].content.startswith("[tool result elided")
    assert all(r.content.startswith("[r") for r in results[-4:])
    calls = [c.id for m in seen if isinstance(m, AssistantMessage) for c in m.tool_calls]
    assert calls == [r.tool_call_id for r in results]


async def test_summarising_compaction_replaces_old_turns_with_a_summary() -> None:
    # Long user prompts cannot be elided, so the budget has to summarise.
    # Each prompt is ~610 tokens: the fifth one takes the context over 3,000.
    turns = [{"text": f"answer {i}"} for i in range(4)]
    turns.append(
        {
            "text": "SUMMARY: the person asked four long questions",
            "expect": {"tools_exclude": ["echo"], "tool_choice": "none"},
        }
    )
    turns.append(
        {
            "text": "answer 4",
            "expect": {
                "messages_contain": ["SUMMARY: the person asked"],
                "messages_exclude": ["question 0"],
            },
        }
    )
    turns.append({"text": "final"})
    model = ReplayModel(turns)
    agent = Agent(model, tools=[EchoTool()], config=HarnessConfig(max_context_tokens=3000))
    log = EventLog()
    agent.subscribe(log)
    for i in range(5):
        result = await agent.prompt(f"question {i} " + "z" * 2400)
        assert result.status == "completed", result.error
    assert result.text == "answer 4"
    result = await agent.prompt("last question")
    [summary_event] = [c for c in log.of("compaction") if c.kind == "summarize"]
    assert summary_event.tokens_after < summary_event.tokens_before
    first = agent.messages[0]
    assert isinstance(first, UserMessage) and first.origin == "compaction"
    assert "SUMMARY: the person asked" in first.content
    assert result.text == "final"
    # The summariser saw the old questions as text.
    summary_request = model.requests[4]
    assert "USER: question 0" in summary_request.messages[0].content


async def test_a_context_that_cannot_fit_fails_the_run_clearly() -> None:
    model = ReplayModel([{"text": "never"}])
    agent = Agent(model, config=HarnessConfig(max_context_tokens=1000))
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("x" * 20_000)
    assert result.status == "failed"
    assert "context overflow" in (result.error or "") and "window" in (result.error or "")
    assert model.requests == []
    assert_well_formed(log.types())


async def test_context_window_cap_lowers_the_window() -> None:
    config = HarnessConfig(max_context_tokens=100_000, context_window_cap=2000)
    assert config.context_window == 2000
    agent = Agent(ReplayModel([{"text": "x"}]), config=config)
    result = await agent.prompt("y" * 12_000)
    assert result.status == "failed" and "2000 tokens" in (result.error or "")


# ----------------------------------------------------------------- property


def _transcript(shape: list[tuple[str, int]]) -> list[Message]:
    messages: list[Message] = []
    n = 0
    for kind, calls in shape:
        if kind == "user":
            messages.append(UserMessage(content="u" * 800))
        else:
            ids = [f"c{n + i}" for i in range(calls)]
            n += calls
            parts = [TextPart(text="a" * 400), *(ToolCall(id=i, name="t") for i in ids)]
            messages.append(AssistantMessage(content=tuple(parts)))
            messages.extend(
                ToolResultMessage(tool_call_id=i, tool_name="t", content="r" * 3000) for i in ids
            )
    return messages


@settings(max_examples=150, deadline=None)
@given(
    shape=st.lists(
        st.tuples(st.sampled_from(["user", "assistant"]), st.integers(min_value=0, max_value=3)),
        min_size=1,
        max_size=30,
    ),
    window=st.integers(min_value=1_000, max_value=20_000),
    keep=st.integers(min_value=0, max_value=5),
)
def test_compaction_never_orphans_a_call_or_a_result(shape, window, keep) -> None:
    messages = _transcript(shape)
    budget = ContextBudget(window, keep_recent_results=keep)

    async def summarize(text: str) -> str:
        assert text
        return "short summary"

    async def main() -> None:
        try:
            await budget.fit(messages, 100, summarize)
        except ContextOverflowError:
            pass

    anyio.run(main)
    calls = Counter(c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls)
    results = Counter(m.tool_call_id for m in messages if isinstance(m, ToolResultMessage))
    assert calls == results
    open_calls: set[str] = set()
    for m in messages:
        if isinstance(m, AssistantMessage):
            open_calls |= {c.id for c in m.tool_calls}
        elif isinstance(m, ToolResultMessage):
            assert m.tool_call_id in open_calls, "a result before (or without) its call"


def test_cut_points_never_split_a_call_from_its_result() -> None:
    messages = _transcript(
        [("user", 0), ("assistant", 2), ("assistant", 0), ("user", 0), ("assistant", 1)]
    )
    # user, asst(c0,c1), r0, r1, asst, user, asst(c2), r2
    assert valid_cut_points(messages) == [1, 4, 5, 6]


@pytest.mark.parametrize("n", [10, 500])
def test_estimate_is_incremental(n: int) -> None:
    budget = ContextBudget(10**9)
    messages: list[Message] = [UserMessage(content="abcd" * 10) for _ in range(n)]
    first = budget.estimate(messages)
    messages.append(UserMessage(content="abcd"))
    assert budget.estimate(messages) == first + 1 + 4
    messages.clear()
    messages.append(UserMessage(content="abcd"))
    assert budget.estimate(messages) == 5
