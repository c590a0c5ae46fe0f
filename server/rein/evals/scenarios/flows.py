"""Plan-act and subagent scenarios."""

from __future__ import annotations

from rein.evals._registry import Outcome, Rig, scenario
from rein.evals.mutations import (
    analyzer_gate_off,
    complete_step_unchecked,
    replans_off,
    subagent_questions_dropped,
    subagents_off,
)
from rein.evals.scenarios._common import (
    Events,
    build_agent,
    call,
    complete,
    flow,
    flow_outcome,
    headless,
    plan,
    script_turns,
    workspace,
)
from rein.flows.subagents import SubagentSpawner
from rein.providers.replay import ReplayModel
from rein.tools.registry import READ_ONLY_TOOLS, default_tools
from rein.tools.task import TaskTool


@scenario("plan-act", budget=4, mutation=complete_step_unchecked)
async def eval_plan_premature_complete_rejected(rig: Rig) -> Outcome:
    """The executor claims a step done without doing any work: the claim is
    refused, it does the work and completes the step."""
    f, pm, em, events = flow(
        rig,
        [plan(("s1", "check")), {"text": "checked"}],  # spare: a summary
        [
            complete("s1"),
            {
                "expect": {"last_message_contains": "no work tool ran"},
                **call("read_file", path="app.py"),
            },
            complete("s1"),
            complete("s1"),  # spare
        ],
    )
    result = await f.run("check")
    rejected = sum(
        1 for e in events if e.type == "tool_call_end" and e.name == "complete_step" and e.is_error
    )
    return flow_outcome(
        result, pm, em, events, check=rejected == 1, why=f"{rejected} rejections, expected 1"
    )


@scenario("plan-act", budget=6, mutation=replans_off)
async def eval_plan_replan_after_failure(rig: Rig) -> Outcome:
    """A step fails; the planner revises the rest of the plan and the new step
    is carried out."""
    f, pm, em, events = flow(
        rig,
        [
            plan(("s1", "old way")),
            {"expect": {"last_message_contains": "old way gone"}, **plan(("s2", "new way"))},
            {"text": "done the new way"},  # spare
        ],
        [
            call("list_dir"),
            complete("s1", success=False, summary="old way gone"),
            call("read_file", path="app.py"),
            complete("s2"),
            complete("s2"),  # spare
        ],
    )
    result = await f.run("do it")
    return flow_outcome(
        result,
        pm,
        em,
        events,
        check=f.plan.replans == 1,
        why=f"{f.plan.replans} replans, expected 1",
    )


# ---------------------------------------------------------------- subagents


@scenario("subagent", budget=4, mutation=subagents_off)
async def eval_subagent_answer(rig: Rig) -> Outcome:
    """The parent delegates a search to a read-only child, which greps the real
    folder; the child's answer is the tool result and its activity is
    forwarded."""
    env = workspace(rig)
    tools = default_tools(env.settings)
    child_model = ReplayModel(
        [
            call("grep", pattern="greet"),
            {"text": "greet is in app.py"},
            call("grep", pattern="greet"),  # spare
        ]
    )
    env.subagents = SubagentSpawner(child_model, tools, env, default_tools=READ_ONLY_TOOLS)
    tools.register(TaskTool())
    model = ReplayModel(
        [
            call("task", description="find greet", prompt="where is greet?"),
            {"expect": {"last_message_contains": "greet is in app.py"}, "text": "in app.py"},
            # Spare: without a child the parent searches itself.
            call("grep", pattern="greet"),
            {"text": "in app.py"},
        ]
    )
    a = build_agent(rig, model, tools=tools, env=env)
    events = Events()
    a.subscribe(events)
    result = await a.prompt("where?")
    forwarded = [e.event for e in events if e.type == "subagent_activity"]
    grepped = [e for e in forwarded if e.get("type") == "tool_call_end" and e.get("name") == "grep"]
    return Outcome(
        result.status,
        len(model.requests) + len(child_model.requests),
        list(events),
        script_turns=script_turns(model, child_model),
        check=len(grepped) == 1 and not grepped[0].get("is_error"),
        why="the child's grep of the folder is forwarded",
    )


class _Away:
    """The person is away: a question waits for the next prompt."""

    async def ask(self, question: str) -> str | None:
        return None


@scenario("subagent", budget=5, mutation=subagent_questions_dropped)
async def eval_subagent_ask_user(rig: Rig) -> Outcome:
    """A child asks the person; the parent run waits with it, and the
    person's answer resumes the child, which finishes its work, then the
    parent goes on with its report."""
    env = workspace(rig)
    env.user = _Away()
    tools = default_tools(env.settings)
    child_model = ReplayModel(
        [
            call("ask_user", question="Which name for the constant?"),
            {
                "expect": {"last_message_contains": "The person answered: TOTAL"},
                **call("write_file", path="names.txt", content="TOTAL\n"),
            },
            {"text": "wrote TOTAL to names.txt"},
            {"text": "I could not ask"},  # spare
        ]
    )
    env.subagents = SubagentSpawner(
        child_model, tools, env, default_tools=[*READ_ONLY_TOOLS, "write_file"]
    )
    tools.register(TaskTool())
    model = ReplayModel(
        [
            call("task", description="name the constant", prompt="ask, then write it"),
            {"expect": {"last_message_contains": "wrote TOTAL"}, "text": "named it TOTAL"},
            # Spare: the question lost, the parent would decide itself.
            call("write_file", path="names.txt", content="COUNT\n"),
            {"text": "named it COUNT"},
        ]
    )
    a = build_agent(rig, model, tools=tools, env=env)
    events = Events()
    a.subscribe(events)
    first = await a.prompt("name the constant")
    result = await a.prompt("TOTAL") if first.status == "waiting" else first
    names = rig.root / "names.txt"
    written = names.read_text() if names.exists() else ""
    return Outcome(
        result.status,
        len(model.requests) + len(child_model.requests),
        list(events),
        script_turns=script_turns(model, child_model),
        check=first.status == "waiting" and written == "TOTAL\n",
        why=f"the parent waited ({first.status}) and the answer reached the child ({written!r})",
    )


@scenario("subagent", budget=6, mutation=analyzer_gate_off)
async def eval_subagent_edits_gated(rig: Rig) -> Outcome:
    """A child's edit breaks the code (real analyzers); the parent's gate
    blocks the parent's final answer and the parent repairs the child's typo."""
    turns = [
        call(
            "task",
            description="rename in greet",
            prompt="edit greet in app.py",
            tools=["read_file", "edit_file"],
        ),
        call("edit_file", path="app.py", old_string="{name}", new_string="{nmae}"),  # the child
        {"text": "edited greet"},  # the child's report
        {"expect": {"last_message_contains": "edited greet"}, "text": "done"},
        {
            "expect": {"last_message_contains": "nmae"},
            **call("edit_file", path="app.py", old_string="{nmae}", new_string="{name}"),
        },
        {"text": "fixed the child's typo"},
        {"text": "done"},  # spare
    ]
    model = ReplayModel(turns)
    events = Events()
    async with headless(rig, model) as session:
        session.agent.subscribe(events)
        result = await session.prompt("rename")
    origins = [m.origin for m in result.mutations]
    return Outcome(
        result.status,
        len(model.requests),
        list(events),
        script_turns=len(turns),
        check=result.repair_attempts == 1
        and "subagent" in origins
        and "{name}" in (rig.root / "app.py").read_text(),
        why=f"one repair of the child's edit ({result.repair_attempts}, {origins})",
    )


# ------------------------------------------------------- plan-act and gates


@scenario("plan-act", budget=8, mutation=analyzer_gate_off)
async def eval_plan_gates_after_last_step(rig: Rig) -> Outcome:
    """The plan's first step breaks the code; the gates (real analyzers) run
    only after the last step and the executor repairs it."""
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
    # Spare: the executor would go on with its broken rename unchecked.
    turns += [call("read_file", path="app.py"), complete("s2", summary="checked again")]
    model = ReplayModel(turns)
    events = Events()
    async with headless(rig, model, mode="plan") as session:
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
        script_turns=len(turns),
        check=result.repair_attempts == 1 and not gates_before_last,
        why="gates only after the last step, one repair",
    )
