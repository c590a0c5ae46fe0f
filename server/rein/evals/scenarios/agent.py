"""Agent mode scenarios."""

from __future__ import annotations

from typing import Any

from rein.evals import Outcome, Rig, scenario
from rein.evals.scenarios._common import (
    agent,
    call,
    last_tool,
    outcome,
    when,
)
from rein.harness import UserMessage
from rein.harness.agent import dangling_tool_calls

# --------------------------------------------------------------- agent mode


@scenario("agent", budget=2)
async def eval_steering_honoured(rig: Rig) -> Outcome:
    first: dict[str, Any] = {"text": "working", **call("read_file", path="app.py")}
    a, model, events = agent(
        rig,
        [
            first,
            {"expect": {"last_message_contains": "use pathlib"}, "text": "switched"},
        ],
    )

    when(a, lambda e: e.type == "turn_start", lambda: a.steer("use pathlib"))
    result = await a.prompt("go")
    honoured = any(e.type == "steering_applied" for e in events) and result.status == "completed"
    return outcome(result, model, events, steering_honoured=honoured)


@scenario("agent", budget=8)
async def eval_breaker_stops_repeats(rig: Rig) -> Outcome:
    turns = [call("read_file", path="missing.py")] * 7 + [{"text": "giving up"}]
    a, model, events = agent(rig, turns)
    result = await a.prompt("read missing")
    nudges = [m for m in a.messages if isinstance(m, UserMessage) and m.origin == "nudge"]
    refused = "will not be executed again" in last_tool(a).content
    return outcome(
        result, model, events, check=len(nudges) == 1 and refused, why="a note at 3, a refusal at 6"
    )


@scenario("agent", budget=13)
async def eval_context_compaction(rig: Rig) -> Outcome:
    body = "\n".join(f"line {j} " + "x" * 50 for j in range(100))
    big = {f"f{i}.txt": f"file {i}\n{body}\n" for i in range(10)}
    turns = [call("read_file", path=f"f{i}.txt") for i in range(10)] + [{"text": "read them all"}]
    a, model, events = agent(rig, turns, files=big, max_context_tokens=12000)
    result = await a.prompt("read all")
    compactions = [e for e in events if e.type == "compaction"]
    return outcome(
        result,
        model,
        events,
        check=bool(compactions) and dangling_tool_calls(a.messages) == [],
        why="elided and paired",
    )
