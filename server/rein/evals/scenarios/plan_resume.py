"""Plan-act across a restart, and a final summary that fails."""

from __future__ import annotations

from rein.evals._registry import Outcome, Rig, scenario
from rein.evals.mutations import plan_changes_forgotten, summary_failure_ignored
from rein.evals.scenarios._common import (
    Events,
    call,
    complete,
    flow,
    flow_outcome,
    headless,
    plan,
    prompt_unanswered,
)
from rein.providers.replay import ReplayModel


@scenario("plan-act", budget=11, mutation=plan_changes_forgotten)
async def eval_plan_restart_resume(rig: Rig) -> Outcome:
    """Step 1 breaks the code, step 2 asks the person and no one answers
    (``rein run`` in CI): the process stops there. Resumed in a new process from the store, the plan goes on; its
    last step changes nothing, yet its gates (real analyzers) judge step 1's
    change, and the executor repairs it."""
    first = ReplayModel(
        [
            plan(("s1", "rename the variable"), ("s2", "ask about the greeting"), ("s3", "check")),
            call("edit_file", path="app.py", old_string="{name}", new_string="{nmae}"),
            complete("s1"),
            call("ask_user", question="Keep the greeting?"),
        ]
    )
    events = Events()
    waiting, session_id, _ = await prompt_unanswered(rig, first, events, "rename", mode="plan")
    second_turns = [
        {
            "expect": {"last_message_contains": "The person answered: yes"},
            **call("read_file", path="app.py"),
        },
        complete("s2"),
        call("read_file", path="app.py"),
        complete("s3"),
        {
            "expect": {"last_message_contains": "nmae"},
            **call("edit_file", path="app.py", old_string="{nmae}", new_string="{name}"),
        },
        complete("s3", summary="fixed the typo the gate found"),
        {"text": "Renamed, kept the greeting, fixed a typo."},
        # Spare: a plan that forgot step 1's change goes on unchecked.
        call("read_file", path="app.py"),
        complete("s3", summary="checked again"),
    ]
    second = ReplayModel(second_turns)
    async with headless(rig, second, mode="plan", resume=session_id) as session:
        session.subscribe(events)
        result = await session.prompt("yes")
    fixed = "{name}" in (rig.root / "app.py").read_text()
    return flow_outcome(
        result,
        first,
        second,
        events,
        check=waiting.status == "waiting" and result.repair_attempts == 1 and fixed,
        why="after the restart the last step's gates caught step 1's change; one repair",
    )


@scenario("plan-act", budget=6, mutation=summary_failure_ignored)
async def eval_plan_failed_summary(rig: Rig) -> Outcome:
    """Both steps are done but the planner's final summary fails (the
    provider refuses the request): the run fails and says why, instead of
    completing with no answer."""
    f, pm, em, events = flow(
        rig,
        [
            plan(("s1", "read"), ("s2", "read again")),
            {"fault": {"kind": "status", "status": 400, "body": "the request is too large"}},
            {"text": "Read it twice."},  # spare: a summary asked again
        ],
        [
            call("read_file", path="app.py"),
            complete("s1"),
            call("read_file", path="app.py"),
            complete("s2"),
            complete("s2"),  # spare
        ],
    )
    result = await f.run("read")
    error = result.error or ""
    return flow_outcome(
        result,
        pm,
        em,
        events,
        expect_status="failed",
        check=error.startswith("the final summary failed") and "too large" in error,
        why=f"the run fails with the summary's reason (error: {error!r})",
    )
