"""Agent mode scenarios."""

from __future__ import annotations

from typing import Any

from rein.evals._registry import Outcome, Rig, scenario
from rein.evals.scenarios._common import (
    agent,
    call,
    last_tool,
    outcome,
    when,
)
from rein.harness import ToolResultMessage, UserMessage
from rein.harness.agent import dangling_tool_calls

# --------------------------------------------------------------- agent mode


@scenario("agent", budget=1)
async def eval_plain_answer(rig: Rig) -> Outcome:
    a, model, events = agent(rig, [{"text": "Paris."}])
    result = await a.prompt("capital of France?")
    return outcome(result, model, events, check=result.text == "Paris.")


@scenario("agent", budget=2)
async def eval_read_then_answer(rig: Rig) -> Outcome:
    a, model, events = agent(
        rig,
        [
            call("read_file", path="app.py"),
            {"expect": {"last_message_contains": "def greet"}, "text": "It greets."},
        ],
    )
    result = await a.prompt("what does app.py do?")
    return outcome(result, model, events)


@scenario("agent", budget=2)
async def eval_parallel_calls(rig: Rig) -> Outcome:
    turns: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": "app.py"}},
                {"name": "list_dir", "arguments": {}},
            ]
        },
        {"text": "done"},
    ]
    a, model, events = agent(rig, turns)
    result = await a.prompt("look")
    results = [m for m in a.messages if isinstance(m, ToolResultMessage)]
    return outcome(
        result,
        model,
        events,
        check=len(results) == 2 and not any(r.is_error for r in results),
        why="two results in call order",
    )


@scenario("agent", budget=3)
async def eval_unknown_tool_recovery(rig: Rig) -> Outcome:
    turns = [
        call("read_files", path="app.py"),
        {"expect": {"last_message_contains": "Unknown tool"}, **call("read_file", path="app.py")},
        {"text": "ok"},
    ]
    a, model, events = agent(rig, turns)
    return outcome(await a.prompt("read"), model, events)


@scenario("agent", budget=3)
async def eval_invalid_arguments_repair(rig: Rig) -> Outcome:
    turns = [
        call("read_file", file="app.py"),
        {
            "expect": {"last_message_contains": "path: Field required"},
            **call("read_file", path="app.py"),
        },
        {"text": "ok"},
    ]
    a, model, events = agent(rig, turns)
    return outcome(await a.prompt("read"), model, events)


@scenario("agent", budget=3)
async def eval_edit_not_found_then_reread(rig: Rig) -> Outcome:
    turns = [
        call("edit_file", path="app.py", old_string="hullo", new_string="hi"),
        {
            "expect": {"last_message_contains": "not found"},
            **call("edit_file", path="app.py", old_string="hello", new_string="hi"),
        },
        {"text": "changed"},
    ]
    a, model, events = agent(rig, turns)
    result = await a.prompt("say hi")
    return outcome(
        result,
        model,
        events,
        check="hi {name}" in (rig.root / "app.py").read_text(),
        why="the second edit landed",
    )


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


@scenario("agent", budget=2)
async def eval_follow_up(rig: Rig) -> Outcome:
    a, model, events = agent(
        rig,
        [
            {"text": "one", "delay": 0.05},
            {"expect": {"last_message_contains": "and two"}, "text": "two"},
        ],
    )
    a.follow_up("and two")
    result = await a.prompt("one")
    return outcome(
        result,
        model,
        events,
        check=result.text == "two" and sum(e.type == "run_start" for e in events) == 2,
    )


@scenario("agent", budget=1)
async def eval_abort_mid_tool(rig: Rig) -> Outcome:
    a, model, events = agent(rig, [call("run_command", command="sleep 30")])

    when(a, lambda e: e.type == "tool_call_start", lambda: a.abort("stop"))
    result = await a.prompt("wait")
    return outcome(
        result,
        model,
        events,
        expect_status="aborted",
        check=dangling_tool_calls(a.messages) == [],
        why="every call answered",
    )


@scenario("agent", budget=2)
async def eval_empty_reply_retried(rig: Rig) -> Outcome:
    a, model, events = agent(rig, [{"text": ""}, {"text": "real"}])
    result = await a.prompt("x")
    return outcome(result, model, events, check=result.text == "real")


@scenario("agent", budget=3)
async def eval_turn_limit(rig: Rig) -> Outcome:
    a, model, events = agent(rig, [call("list_dir")] * 5, max_model_turns_per_run=3)
    result = await a.prompt("loop")
    return outcome(
        result, model, events, expect_status="failed", check="3 model turns" in (result.error or "")
    )


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


@scenario("agent", budget=2)
async def eval_ask_user_waiting(rig: Rig) -> Outcome:
    class Silent:
        async def ask(self, question: str) -> str | None:
            return None

    a, model, events = agent(
        rig,
        [
            call("ask_user", question="Which?"),
            {"expect": {"last_message_contains": "answered: this one"}, "text": "ok"},
        ],
    )
    a.env.user = Silent()
    waiting = await a.prompt("choose")
    result = await a.prompt("this one")
    return outcome(result, model, events, check=waiting.status == "waiting")
