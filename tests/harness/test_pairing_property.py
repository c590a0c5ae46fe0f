"""Property: whatever mix of tool outcomes and wherever an abort lands, every
tool call has exactly one result and the event stream is well formed."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from rein.harness import Agent, AssistantMessage, Block, HarnessConfig, Hooks, ToolResultMessage
from rein.harness.messages import TextPart, ToolCall, UserMessage
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog, assert_well_formed
from tests.fakes.models import FunctionModel, YieldingModel
from tests.fakes.tools import EchoTool, FailTool, SleepTool

CALL_KINDS = {
    "ok": {"name": "echo", "arguments": {"text": "hi"}},
    "tool_error": {"name": "fail", "arguments": {"message": "nope"}},
    "crash": {"name": "fail", "arguments": {"kind": "crash"}},
    "unknown": {"name": "no_such_tool", "arguments": {}},
    "invalid_args": {"name": "echo", "arguments": {"wrong": 1}},
    "invalid_json": {"name": "echo", "raw_arguments": "{oops"},
    "blocked": {"name": "echo", "arguments": {"text": "blocked"}},
    "slow": {"name": "sleep", "arguments": {"seconds": 0.02}},
}

turn_strategy = st.lists(st.sampled_from(sorted(CALL_KINDS)), min_size=0, max_size=4)


def _before(call, args) -> Block | None:
    if getattr(args, "text", None) == "blocked":
        return Block("blocked by policy")
    return None


@settings(max_examples=80, deadline=None)
@given(
    turns=st.lists(turn_strategy, min_size=1, max_size=5),
    abort_at=st.one_of(st.none(), st.integers(min_value=1, max_value=30)),
    parallel=st.booleans(),
)
def test_every_call_has_exactly_one_result_and_events_are_well_formed(
    turns: list[list[str]], abort_at: int | None, parallel: bool
) -> None:
    script: list[dict[str, Any]] = []
    for i, kinds in enumerate(turns):
        calls = [dict(CALL_KINDS[k], id=f"t{i}c{j}") for j, k in enumerate(kinds)]
        script.append(
            {"text": f"turn {i}", "tool_calls": calls} if calls else {"text": f"turn {i}"}
        )
    # Make sure the last turn is a final answer.
    script.append({"text": "final"})
    model = YieldingModel(ReplayModel(script))
    agent = Agent(
        model,
        tools=[EchoTool(), FailTool(), SleepTool()],
        hooks=Hooks(before_tool_call=_before),
        config=HarnessConfig(tool_execution="parallel" if parallel else "sequential"),
    )
    log = EventLog()
    agent.subscribe(log)
    #: The abort lands at the abort_at-th turn or tool call start. Each is
    #: followed by a model call, which yields to the event loop, so an abort
    #: there always ends the run "aborted"; past the last one there is none.
    abort_points = 0
    if abort_at is not None:

        def aborter(event) -> None:
            nonlocal abort_points
            if event.type in ("turn_start", "tool_call_start"):
                abort_points += 1
                if abort_points == abort_at:
                    assert agent.abort("random abort")

        agent.subscribe(aborter)

    async def main() -> None:
        with anyio.fail_after(10):
            await agent.prompt("go")

    anyio.run(main)

    calls = [c.id for m in agent.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    results = [m.tool_call_id for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert Counter(results) == Counter(calls), "every call needs exactly one result"
    # Results follow their calls: each result comes after the assistant message with its call.
    seen_calls: set[str] = set()
    for m in agent.messages:
        if isinstance(m, AssistantMessage):
            seen_calls.update(c.id for c in m.tool_calls)
        elif isinstance(m, ToolResultMessage):
            assert m.tool_call_id in seen_calls
    types = log.types()
    assert_well_formed(types)
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    starts = Counter(e.tool_call_id for e in log.of("tool_call_start"))
    ends = Counter(e.tool_call_id for e in log.of("tool_call_end"))
    assert starts == ends == Counter(calls)
    run_end = log.of("run_end")[-1]
    if abort_at is not None and abort_at <= abort_points:
        assert (run_end.status, run_end.reason) == ("aborted", "random abort")
    else:
        assert run_end.status == "completed", run_end.reason


STEER_ACTIONS = st.lists(
    st.tuples(st.integers(min_value=1, max_value=25), st.sampled_from(["steer", "mail", "poke"])),
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(
    turns=st.lists(turn_strategy, min_size=1, max_size=4),
    actions=STEER_ACTIONS,
    mode=st.sampled_from(["one-at-a-time", "all"]),
)
def test_every_steer_and_external_message_is_delivered_exactly_once(
    turns: list[list[str]], actions: list[tuple[int, str]], mode: str
) -> None:
    """Issue 15: in-process steers, external mail (drained first at each
    boundary) and pokes, landing at random events: calls stay paired, events
    well formed, each message is delivered exactly once, none is stranded."""
    script = [
        AssistantMessage(
            content=(
                TextPart(text=f"turn {i}"),
                *(
                    ToolCall(
                        id=f"t{i}c{j}",
                        name=CALL_KINDS[k]["name"],
                        arguments=CALL_KINDS[k]["arguments"],
                    )
                    for j, k in enumerate(kinds)
                    if k in ("ok", "slow", "blocked")
                ),
            ),
            stop_reason="tool_use",
        )
        for i, kinds in enumerate(turns)
    ]

    def reply(request: Any) -> AssistantMessage:
        n = len(model.requests) - 1
        if n < len(script) and script[n].tool_calls:
            return script[n]
        return AssistantMessage(content=(TextPart(text=f"answer {n}"),))

    model = FunctionModel(reply)
    inbox: list[str] = []

    async def source() -> list[str]:
        out = list(inbox)
        inbox.clear()
        return out

    agent = Agent(
        model,
        tools=[EchoTool(), SleepTool()],
        hooks=Hooks(before_tool_call=_before),
        config=HarnessConfig(steering_mode=mode, max_model_turns_per_run=50),
        external_steering_source=source,
    )
    log = EventLog()
    agent.subscribe(log)
    sent: list[str] = []
    pending = sorted(actions)
    count = 0

    def act(event: Any) -> None:
        nonlocal count
        count += 1
        while pending and pending[0][0] == count:
            _, kind = pending.pop(0)
            if kind == "steer":
                sent.append(f"steer {len(sent)}")
                agent.steer(sent[-1])
            elif kind == "mail":
                sent.append(f"mail {len(sent)}")
                inbox.append(sent[-1])
                agent.poke_steering()
            else:
                agent.poke_steering()

    agent.subscribe(act)

    async def main() -> None:
        with anyio.fail_after(10):
            await agent.prompt("go")

    anyio.run(main)

    delivered = [
        m.content
        for m in agent.messages
        if isinstance(m, UserMessage) and m.content.startswith(("steer ", "mail "))
    ]
    # Mail that arrived after the run's last boundary waits in the inbox,
    # and steers after it stay queued (has_steering): none is lost or doubled.
    late = [*inbox, *(m.content for m in agent.drain_steering_queue())]
    assert sorted(delivered + late) == sorted(sent)
    assert len(set(delivered)) == len(delivered)
    calls = [c.id for m in agent.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    results = [m.tool_call_id for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert Counter(results) == Counter(calls)
    assert_well_formed(log.types())
    assert log.of("run_end")[-1].status == "completed"


@settings(max_examples=80, deadline=None)
@given(
    turns=st.lists(turn_strategy, min_size=1, max_size=3),
    follow_ups=st.integers(min_value=0, max_value=2),
    abort_at=st.integers(min_value=1, max_value=80),
)
def test_an_abort_that_returns_true_stops_its_run_at_every_event(
    turns: list[list[str]], follow_ups: int, abort_at: int
) -> None:
    """Issue 33: an abort at any event of a prompt and its queued follow-ups
    (between the runs too: at run_end, follow_up_started, a follow-up's
    run_start) either returns True, and then no model call starts after it
    and the caller's result says aborted, or returns False because nothing is
    left to stop (the last run has ended), and then the result is completed."""
    script: list[dict[str, Any]] = []
    for run in range(follow_ups + 1):
        for i, kinds in enumerate(turns):
            calls = [dict(CALL_KINDS[k], id=f"r{run}t{i}c{j}") for j, k in enumerate(kinds)]
            if calls:
                script.append({"text": f"turn {i}", "tool_calls": calls})
        script.append({"text": f"answer {run}"})
    model = YieldingModel(ReplayModel(script))
    agent = Agent(
        model,
        tools=[EchoTool(), FailTool(), SleepTool()],
        hooks=Hooks(before_tool_call=_before),
    )
    for n in range(follow_ups):
        agent.follow_up(f"follow-up {n}")
    log = EventLog()
    agent.subscribe(log)
    count = 0
    outcome: dict[str, Any] = {}

    def aborter(event: Any) -> None:
        nonlocal count
        count += 1
        if count == abort_at:
            outcome["returned"] = agent.abort("random abort")
            outcome["event"] = event.type
            outcome["requests"] = len(model.requests)

    agent.subscribe(aborter)

    async def main() -> Any:
        with anyio.fail_after(10):
            return await agent.prompt("go")

    result = anyio.run(main)
    assert_well_formed(log.types())
    if not outcome:  # the prompt had fewer events than abort_at
        assert result.status == "completed"
        return
    if outcome["returned"]:
        assert (result.status, result.error) == ("aborted", "random abort"), outcome["event"]
        assert len(model.requests) == outcome["requests"], "no model call after the abort"
    else:
        assert outcome["event"] in ("run_end", "agent_end"), outcome["event"]
        assert result.status == "completed"
