"""The person asked and away: the agent and plan mode wait on the person,
the session is stored, and the answer, given to a new session loaded from
the store, resumes the run where it stopped."""

from __future__ import annotations

from typing import Any

from rein.evals._registry import Outcome, Rig, scenario
from rein.evals.mutations import waiting_question_forgotten
from rein.evals.scenarios._common import (
    Events,
    call,
    complete,
    flow_outcome,
    headless,
    plan,
    prompt_unanswered,
)
from rein.harness import ToolResultMessage
from rein.harness.events import PlanState, PlanUpdated, RunEnd, RunStart, ToolCallStart
from rein.providers.replay import ReplayModel

_QUESTION = "Greet with hello or hi?"


def _runs(events: list[Any]) -> list[str]:
    """The runs' starts, tool calls and ends in order: ``run_start``,
    ``tool_call_start:<tool>``, ``run_end:<status>``."""
    out: list[str] = []
    for e in events:
        if isinstance(e, RunStart):
            out.append(e.type)
        elif isinstance(e, ToolCallStart):
            out.append(f"{e.type}:{e.name}")
        elif isinstance(e, RunEnd):
            out.append(f"{e.type}:{e.status}")
    return out


def _plan_states(events: list[Any]) -> list[str]:
    """The plan's states in order."""
    return [e.state for e in events if isinstance(e, PlanState)]


def _answered(messages: list[Any]) -> list[str]:
    """The results of the transcript's ask_user calls."""
    return [
        m.content
        for m in messages
        if isinstance(m, ToolResultMessage) and m.tool_name == "ask_user"
    ]


@scenario("agent", budget=3, mutation=waiting_question_forgotten)
async def eval_agent_waits_then_resumes(rig: Rig) -> Outcome:
    """The agent asks the person and no one answers (``rein run`` in CI): the
    run ends waiting on the question and the session is stored. A new session
    loaded from the store takes the next prompt as the answer: it becomes
    the question's result, and the run goes on to do what the person chose."""
    first = ReplayModel([call("ask_user", question=_QUESTION)])
    events = Events()
    waiting, session_id, waiting_for = await prompt_unanswered(
        rig, first, events, "greet the person"
    )
    second_turns: list[dict[str, Any]] = [
        {
            "expect": {"last_message_contains": "The person answered: hi"},
            **call("edit_file", path="app.py", old_string="hello {name}", new_string="hi {name}"),
        },
        {"text": "Greets with hi now."},
        # Spare: the answer read as a new task, the question asked again.
        call("ask_user", question=_QUESTION),
        {"text": "Still waiting for the answer."},
    ]
    second = ReplayModel(second_turns)
    async with headless(rig, second, resume=session_id) as s:
        s.subscribe(events)
        result = await s.prompt("hi")
        answers = _answered(list(s.agent.messages))
    order = _runs(events)
    expected = [
        "run_start",
        "tool_call_start:ask_user",
        "run_end:waiting",
        "run_start",
        "tool_call_start:edit_file",
        "run_end:completed",
    ]
    greeted = 'f"hi {name}"' in (rig.root / "app.py").read_text()
    return flow_outcome(
        result,
        first,
        second,
        events,
        check=waiting.status == "waiting"
        and _QUESTION in (waiting.error or waiting.text or "")
        and waiting_for is not None
        and order == expected
        and answers == ["The person answered: hi"]
        and greeted,
        why=f"waited ({waiting.status}), events {order}, the question's results {answers}, "
        f"app.py greets with hi: {greeted}",
    )


@scenario("plan-act", budget=7, mutation=waiting_question_forgotten)
async def eval_plan_waits_then_resumes(rig: Rig) -> Outcome:
    """Plan mode: the first step asks the person and no one answers; the plan
    stops ``waiting`` and is stored. A new session loaded from the store
    shows the plan waiting, takes the answer as the question's result, runs
    the rest of the plan and summarises it."""
    first = ReplayModel(
        [
            plan(("s1", "ask which greeting and change it"), ("s2", "check app.py")),
            call("ask_user", question=_QUESTION),
        ]
    )
    events = Events()
    waiting, session_id, _ = await prompt_unanswered(
        rig, first, events, "greet the person", mode="plan"
    )
    stopped = _plan_states(events)
    second_turns: list[dict[str, Any]] = [
        {
            "expect": {"last_message_contains": "The person answered: hi"},
            **call("edit_file", path="app.py", old_string="hello {name}", new_string="hi {name}"),
        },
        complete("s1", summary="greets with hi"),
        call("read_file", path="app.py"),
        complete("s2", summary="checked"),
        {"text": "Greets with hi, checked."},
        # Spare: the answer lost, the step asks again and decides alone.
        call("ask_user", question=_QUESTION),
        complete("s1", summary="kept hello"),
    ]
    second = ReplayModel(second_turns)
    async with headless(rig, second, mode="plan", resume=session_id) as s:
        s.subscribe(events)
        result = await s.prompt("hi")
        answers = _answered(list(s.agent.messages))
    states = _plan_states(events)[len(stopped) :]
    steps = [e for e in events if isinstance(e, PlanUpdated)][-1].steps
    greeted = 'f"hi {name}"' in (rig.root / "app.py").read_text()
    return flow_outcome(
        result,
        first,
        second,
        events,
        check=waiting.status == "waiting"
        and stopped == ["planning", "executing", "waiting"]
        and states == ["waiting", "executing", "summarizing", "completed"]
        and [st.status for st in steps] == ["done", "done"]
        and answers == ["The person answered: hi"]
        and greeted,
        why=f"stopped {stopped}, after the restart {states}, steps "
        f"{[st.status for st in steps]}, the question's results {answers}, hi: {greeted}",
    )
