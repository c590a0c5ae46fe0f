"""Plan-act and subagent scenarios."""

from __future__ import annotations

from rein.config import load_config
from rein.evals._registry import Outcome, Rig, scenario
from rein.evals.scenarios._common import (
    APP,
    Events,
    call,
    complete,
    flow,
    flow_outcome,
    last_tool,
    plan,
    when,
    workspace,
)
from rein.harness import Agent, UserMessage
from rein.harness.agent import dangling_tool_calls
from rein.harness.subagents import SubagentSpawner
from rein.providers.replay import ReplayModel
from rein.tools.registry import READ_ONLY_TOOLS, default_tools
from rein.tools.task import TaskTool


@scenario("plan-act", budget=6)
async def eval_plan_two_steps(rig: Rig) -> Outcome:
    f, pm, em, events = flow(
        rig,
        [plan(("s1", "read"), ("s2", "list")), {"text": "summary"}],
        [call("read_file", path="app.py"), complete("s1"), call("list_dir"), complete("s2")],
    )
    result = await f.run("look around")
    states = [e.state for e in events if e.type == "plan_state"]
    return flow_outcome(
        result,
        pm,
        em,
        events,
        check=states == ["planning", "executing", "summarizing", "completed"],
        why=str(states),
    )


@scenario("plan-act", budget=1)
async def eval_plan_empty(rig: Rig) -> Outcome:
    f, pm, em, events = flow(rig, [plan()], [])
    result = await f.run("nothing")
    return flow_outcome(result, pm, em, events, check=em.requests == [])


@scenario("plan-act", budget=3)
async def eval_plan_single_step_no_summary(rig: Rig) -> Outcome:
    f, pm, em, events = flow(
        rig,
        [plan(("s1", "read"))],
        [call("read_file", path="app.py"), complete("s1", summary="read")],
    )
    result = await f.run("read")
    return flow_outcome(
        result,
        pm,
        em,
        events,
        check=not any(e.type == "plan_state" and e.state == "summarizing" for e in events),
    )


@scenario("plan-act", budget=4)
async def eval_plan_premature_complete_rejected(rig: Rig) -> Outcome:
    f, pm, em, events = flow(
        rig,
        [plan(("s1", "check"))],
        [complete("s1"), call("read_file", path="app.py"), complete("s1")],
    )
    result = await f.run("check")
    rejected = sum(
        1 for e in events if e.type == "tool_call_end" and e.name == "complete_step" and e.is_error
    )
    return flow_outcome(result, pm, em, events, check=rejected == 1)


@scenario("plan-act", budget=6)
async def eval_plan_replan_after_failure(rig: Rig) -> Outcome:
    f, pm, em, events = flow(
        rig,
        [plan(("s1", "old way")), plan(("s2", "new way"))],
        [
            call("list_dir"),
            complete("s1", success=False, summary="old way gone"),
            call("read_file", path="app.py"),
            complete("s2"),
        ],
    )
    result = await f.run("do it")
    return flow_outcome(result, pm, em, events, check=f.plan.replans == 1)


@scenario("plan-act", budget=4)
async def eval_plan_output_nudge(rig: Rig) -> Outcome:
    f, pm, em, events = flow(
        rig,
        [plan(("s1", "read"))],
        [call("read_file", path="app.py"), {"text": "done"}, complete("s1")],
    )
    result = await f.run("read")
    nudged = any(isinstance(m, UserMessage) and m.origin == "nudge" for m in f.executor.messages)
    return flow_outcome(result, pm, em, events, check=nudged)


# ---------------------------------------------------------------- subagents


@scenario("subagent", budget=4)
async def eval_subagent_answer(rig: Rig) -> Outcome:
    env = workspace(rig)
    tools = default_tools(env.settings)
    child_model = ReplayModel([call("grep", pattern="greet"), {"text": "greet is in app.py"}])
    env.subagents = SubagentSpawner(child_model, tools, env, default_tools=READ_ONLY_TOOLS)
    tools.register(TaskTool())
    model = ReplayModel(
        [
            call("task", description="find greet", prompt="where is greet?"),
            {"expect": {"last_message_contains": "greet is in app.py"}, "text": "in app.py"},
        ]
    )
    a = Agent(model, tools=tools, env=env)
    events = Events()
    a.subscribe(events)
    result = await a.prompt("where?")
    forwarded = [e for e in events if e.type == "subagent_activity"]
    return Outcome(
        result.status,
        len(model.requests) + len(child_model.requests),
        list(events),
        check=bool(forwarded),
    )


@scenario("subagent", budget=3)
async def eval_subagent_budget(rig: Rig) -> Outcome:
    env = workspace(rig)
    tools = default_tools(env.settings)
    child_model = ReplayModel([call("list_dir")] * 3)
    env.subagents = SubagentSpawner(child_model, tools, env)
    tools.register(TaskTool())
    model = ReplayModel(
        [
            call("task", description="loop", prompt="loop", max_turns=1),
            {"expect": {"last_message_contains": "did not finish"}, "text": "ok"},
        ]
    )
    a = Agent(model, tools=tools, env=env)
    events = Events()
    a.subscribe(events)
    result = await a.prompt("go")
    return Outcome(
        result.status,
        len(model.requests) + len(child_model.requests),
        list(events),
        check=last_tool(a).is_error,
    )


# ------------------------------------------------- more plan-act, subagents


@scenario("plan-act", budget=8)
async def eval_plan_gates_after_last_step(rig: Rig) -> Outcome:
    """The plan's first step breaks the code; the gates (real analyzers) run
    only after the last step and the executor repairs it."""
    from rein.headless.host import HeadlessSession

    (rig.root / "app.py").write_text(APP)
    turns = [
        plan(("s1", "rename the variable"), ("s2", "check the file")),
        call("edit_file", path="app.py", old_string="{name}", new_string="{nmae}"),
        complete("s1"),
        call("read_file", path="app.py"),
        complete("s2"),
    ]
    turns.append(
        {
            "expect": {"last_message_contains": "nmae"},
            **call("edit_file", path="app.py", old_string="{nmae}", new_string="{name}"),
        }
    )
    turns.append(complete("s2", summary="fixed the typo the gate found"))
    turns.append({"text": "Renamed and checked."})
    model = ReplayModel(turns)
    events = Events()
    async with HeadlessSession(
        rig.root, model, load_config({}), mode="plan", watch=False
    ) as session:
        session.subscribe(events)
        result = await session.prompt("rename")
    gates_before_last = [
        e
        for e in events[
            : [
                i
                for i, e in enumerate(events)
                if e.type == "plan_updated" and e.reason == "step_started"
            ][-1]
        ]
        if e.type == "gate_start"
    ]
    return Outcome(
        result.status,
        len(model.requests),
        list(events),
        check=result.repair_attempts == 1 and not gates_before_last,
        why="gates only after the last step, one repair",
    )


@scenario("plan-act", budget=4)
async def eval_plan_waiting_resume(rig: Rig) -> Outcome:
    class Silent:
        async def ask(self, question: str) -> str | None:
            return None

    f, pm, em, events = flow(
        rig,
        [plan(("s1", "ask which file"))],
        [
            call("ask_user", question="Which file?"),
            {
                "expect": {"last_message_contains": "answered: app.py"},
                **call("read_file", path="app.py"),
            },
            complete("s1", summary="read app.py"),
        ],
    )
    f.executor.env.user = Silent()
    waiting = await f.run("read the file the person wants")
    result = await f.run("app.py")
    return flow_outcome(
        result, pm, em, events, check=waiting.status == "waiting" and result.text == "read app.py"
    )


@scenario("subagent", budget=2)
async def eval_subagent_abort(rig: Rig) -> Outcome:
    env = workspace(rig)
    tools = default_tools(env.settings)
    child_model = ReplayModel([call("run_command", command="sleep 30")])
    env.subagents = SubagentSpawner(child_model, tools, env, default_tools=["run_command"])
    tools.register(TaskTool())
    model = ReplayModel([call("task", description="slow", prompt="wait", tools=["run_command"])])
    a = Agent(model, tools=tools, env=env)
    events = Events()
    a.subscribe(events)

    when(
        a,
        lambda e: e.type == "subagent_activity" and e.event.get("type") == "tool_call_start",
        lambda: a.abort("stop"),
    )
    result = await a.prompt("go")
    child_end = [
        e.event
        for e in events
        if e.type == "subagent_activity" and e.event.get("type") == "run_end"
    ]
    ok = (
        bool(child_end)
        and child_end[0]["status"] == "aborted"
        and dangling_tool_calls(a.messages) == []
    )
    return Outcome(
        result.status,
        len(model.requests) + len(child_model.requests),
        list(events),
        expect_status="aborted",
        check=ok,
        why="the child was aborted with the parent",
    )
