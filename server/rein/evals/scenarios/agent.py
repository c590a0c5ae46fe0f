"""Agent mode scenarios: the harness corrects the model's course mid-run."""

from __future__ import annotations

from typing import Any

from rein.evals._registry import Outcome, Rig, scenario
from rein.evals.mutations import breaker_off, compaction_off, steering_ignored
from rein.evals.scenarios._common import (
    agent,
    call,
    last_tool,
    outcome,
    when,
)
from rein.harness import UserMessage
from rein.harness.agent import dangling_tool_calls
from rein.harness.conversation.tokens import estimate_message_tokens

# --------------------------------------------------------------- agent mode


@scenario("agent", budget=2, mutation=steering_ignored)
async def eval_steering_honoured(rig: Rig) -> Outcome:
    """Steering sent while the first turn runs reaches the next model call;
    unsteered, the model would go on reading."""
    first: dict[str, Any] = {"text": "working", **call("read_file", path="app.py")}
    a, model, events = agent(
        rig,
        [
            first,
            {"expect": {"last_message_contains": "use pathlib"}, "text": "switched"},
            # Spare: what the model does next when it never hears the steer.
            call("read_file", path="app.py"),
            call("list_dir"),
            {"text": "done, without pathlib"},
        ],
    )

    when(a, lambda e: e.type == "turn_start", lambda: a.steer("use pathlib"))
    result = await a.prompt("go")
    honoured = any(e.type == "steering_applied" for e in events) and result.status == "completed"
    return outcome(result, model, events, steering_honoured=honoured)


@scenario("agent", budget=8, mutation=breaker_off)
async def eval_breaker_stops_repeats(rig: Rig) -> Outcome:
    """A model repeating a failing call gets a note at 3 and the call refused
    from the 7th; it gives up once it reads the refusal. Without the breaker
    it would go on repeating the call."""
    repeat = call("read_file", path="missing.py")
    turns = [
        *[repeat] * 7,
        {"expect": {"last_message_contains": "will not be executed again"}, "text": "giving up"},
        *[repeat] * 4,  # spare
    ]
    a, model, events = agent(rig, turns)
    result = await a.prompt("read missing")
    # The note is in the request after the third failure, and only there.
    noted = [
        i
        for i, request in enumerate(model.requests)
        if any(isinstance(m, UserMessage) and m.origin == "nudge" for m in request.messages)
    ]
    stored = [m for m in a.messages if isinstance(m, UserMessage) and m.origin == "nudge"]
    refused = "will not be executed again" in last_tool(a).content
    return outcome(
        result,
        model,
        events,
        check=noted == [3] and not stored and refused,
        why="a note at 3 (in the next request only), a refusal at 7",
    )


_WINDOW = 12000


@scenario("agent", budget=11, mutation=compaction_off)
async def eval_context_compaction(rig: Rig) -> Outcome:
    """Ten large files read one after another: no request the model receives
    is over the context window, and no call is left without its result."""
    body = "\n".join(f"line {j} " + "x" * 50 for j in range(100))
    big = {f"f{i}.txt": f"file {i}\n{body}\n" for i in range(10)}
    turns = [call("read_file", path=f"f{i}.txt") for i in range(10)] + [{"text": "read them all"}]
    turns += [call("read_file", path="f0.txt"), {"text": "read f0 again"}]  # spare
    a, model, events = agent(rig, turns, files=big, max_context_tokens=_WINDOW)
    result = await a.prompt("read all")
    compactions = [e for e in events if e.type == "compaction"]
    largest = max(sum(estimate_message_tokens(m) for m in r.messages) for r in model.requests)
    return outcome(
        result,
        model,
        events,
        check=bool(compactions) and largest <= _WINDOW and dangling_tool_calls(a.messages) == [],
        why=f"compactions {len(compactions)}, largest request {largest} tokens "
        f"(window {_WINDOW}), every call paired",
    )
