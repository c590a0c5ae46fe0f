"""Every transition and invariant of the plan-act flow, scripted."""

from __future__ import annotations

from typing import Any

import pytest

from rein.analysis.gate import AnalyzerGate
from rein.flows.plan_act import PlanSnapshot
from rein.harness import HarnessConfig, ToolResultMessage, UserMessage
from rein.harness.events import PlanState, PlanStep
from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.gating.gates import GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import ModelOptions, Mutation
from rein.harness.run.run_record import RunMutation
from rein.harness.tools import ToolEnvironment
from rein.tools.ask_user import AskUserTool
from tests.fakes.approvals import FakeUserChannel
from tests.fakes.diagnostics import analyzed_env
from tests.fakes.events import EventLog
from tests.fakes.flows import build_plan_act_flow
from tests.fakes.models import FunctionModel, assistant, call, complete_turn, plan_turn
from tests.fakes.persistence import MemoryPersistence
from tests.fakes.tools import EchoTool, FailTool, FakeWriteTool
from tests.fakes.workspace import FakeWorkspace
from tests.printed import printed

plan = plan_turn
complete = complete_turn


def echo(text: str = "x") -> dict[str, Any]:
    return {"tool_calls": [{"name": "echo", "arguments": {"text": text}}]}


def analyzer_env(
    files: dict[str, str] | None = None,
) -> tuple[ToolEnvironment, DiagnosticsCoordinator]:
    env, coordinator, _ = analyzed_env(files, quiet_ms=5)
    return env, coordinator


def states(log: EventLog) -> list[str]:
    return [e.state for e in log.of("plan_state")]


async def test_a_two_step_plan_runs_step_by_step_without_planner_round_trips() -> None:
    flow, planner, executor, log, _ = build_plan_act_flow(
        [
            plan(("s1", "read the config"), ("s2", "update it")),
            {"expect": {"tool_choice": "none"}, "text": "Read and updated the config."},
        ],
        [
            echo("read"),
            complete("s1", summary="read it"),
            echo("edit"),
            complete("s2", summary="updated it"),
        ],
    )
    result = await flow.run("update the config")
    assert result.status == "completed", result.error
    assert result.text == "Read and updated the config."
    assert states(log) == ["planning", "executing", "summarizing", "completed"]
    assert len(planner.requests) == 2  # the plan and the summary; nothing between steps
    first = planner.requests[0]
    assert first.tools == ["submit_plan"] and first.tool_choice == "required"
    assert "- `echo`: Echo the text back" in first.system and '"properties"' not in first.system
    step_events = [(e.reason, [s.status for s in e.steps]) for e in log.of("plan_updated")]
    assert step_events == [
        ("planned", ["pending", "pending"]),
        ("step_started", ["running", "pending"]),
        ("step_done", ["done", "pending"]),
        ("step_started", ["done", "running"]),
        ("step_done", ["done", "done"]),
    ]
    assert "Step 2 of 2 — s2: update it" in executor.requests[2].messages[-1].content


async def test_an_empty_plan_completes_at_once() -> None:
    flow, planner, executor, log, _ = build_plan_act_flow([plan()], [])
    result = await flow.run("nothing")
    assert result.status == "completed" and "empty" in result.text
    assert states(log) == ["planning", "completed"]
    assert executor.requests == []


async def test_a_single_successful_step_skips_the_summary() -> None:
    flow, planner, _, log, _ = build_plan_act_flow(
        [plan(("s1", "do it"))], [echo(), complete("s1", summary="did it")]
    )
    result = await flow.run("one thing")
    assert result.status == "completed" and result.text == "did it"
    assert "summarizing" not in states(log)
    assert len(planner.requests) == 1


async def test_complete_step_without_work_is_rejected_as_a_readable_result() -> None:
    flow, _, executor, log, _ = build_plan_act_flow(
        [plan(("s1", "check the file"))],
        [
            complete("s1", summary="looks fine"),
            {
                "expect": {"last_message_contains": "no work tool ran during this step"},
                **echo("actually read"),
            },
            complete("s1", summary="read and fine"),
        ],
    )
    result = await flow.run("check")
    assert result.status == "completed", result.error
    rejected = [
        m for m in flow.executor.messages if isinstance(m, ToolResultMessage) and m.is_error
    ]
    assert len(rejected) == 1 and "rejected" in rejected[0].content


async def test_a_failed_step_enters_updating_and_the_planner_revises_the_rest() -> None:
    flow, planner, _, log, _ = build_plan_act_flow(
        [
            plan(("s1", "use the old API"), ("s2", "test it")),
            {
                "expect": {"last_message_contains": "Step s1 failed: the old API is gone"},
                **plan(("s1b", "use the new API")),
            },
        ],
        [
            echo(),
            complete("s1", success=False, summary="the old API is gone"),
            echo(),
            complete("s1b", summary="used the new API"),
        ],
    )
    result = await flow.run("migrate")
    assert result.status == "completed", result.error
    assert states(log) == ["planning", "executing", "updating", "executing", "completed"]
    assert flow.plan.replans == 1
    assert [(s.id, s.status) for s in flow.plan.steps] == [("s1b", "done")]
    assert [e.reason for e in log.of("plan_updated")].count("revised") == 1


async def test_a_text_reply_gets_one_nudge_then_the_step_fails() -> None:
    flow, _, executor, log, _ = build_plan_act_flow(
        [plan(("s1", "do it")), plan(("s2", "do it differently"))],
        [
            {"text": "I did it."},
            {
                "expect": {
                    "last_message_contains": "must answer by calling the `complete_step` tool"
                },
                "text": "Really, I did.",
            },
            echo(),
            complete("s2"),
        ],
    )
    result = await flow.run("go")
    assert result.status == "completed", result.error
    assert "updating" in states(log)
    failed = [e for e in log.of("plan_updated") if e.reason == "step_failed"][0]
    assert "instead of calling `complete_step`" in failed.steps[0].summary


async def test_the_gates_run_after_the_last_step_over_every_change_of_the_plan() -> None:
    env, coordinator = analyzer_env()
    write = lambda p, c: {"tool_calls": [{"name": "write", "arguments": {"path": p, "content": c}}]}  # noqa: E731
    flow, _, executor, log, _ = build_plan_act_flow(
        [plan(("s1", "write a.py"), ("s2", "write b.py")), {"text": "Wrote both files."}],
        [
            write("a.py", "ERROR in a\n"),
            complete("s1"),
            write("b.py", "fine\n"),
            complete("s2"),
            {"expect": {"last_message_contains": "a.py:1:1 error E1"}, **write("a.py", "fixed\n")},
            complete("s2", summary="fixed a.py too"),
        ],
        executor_tools=[FakeWriteTool()],
        gates=GatePipeline([AnalyzerGate(coordinator)]),
        env=env,
    )
    result = await flow.run("write files")
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    types = log.types()
    first_gate = types.index("gate_start")
    # No gate ran during step 1: the first gate comes after step 2 was started.
    assert (
        first_gate
        > [
            i
            for i, e in enumerate(log.events)
            if e.type == "plan_updated" and e.reason == "step_started"
        ][-1]
    )
    assert [r.passed for r in log.of("gate_result")] == [False, True]


async def test_a_waiting_question_resumes_with_the_reply_as_the_tool_result() -> None:
    flow, _, executor, log, _ = build_plan_act_flow(
        [plan(("s1", "pick a database"))],
        [
            {
                "tool_calls": [
                    {"name": "ask_user", "arguments": {"question": "SQLite or Postgres?"}}
                ]
            },
            {
                "expect": {"last_message_contains": "The person answered: SQLite"},
                **echo("setting up SQLite"),
            },
            complete("s1", summary="set up SQLite"),
        ],
        executor_tools=[EchoTool(), AskUserTool()],
        env=ToolEnvironment(user=FakeUserChannel([None])),
    )
    waiting = await flow.run("set up storage")
    assert waiting.status == "waiting" and flow.waiting
    result = await flow.run("SQLite")
    assert result.status == "completed", result.error
    assert result.text == "set up SQLite"
    # The resumed plan first says where it stands (waiting), then goes on.
    assert states(log) == ["planning", "executing", "waiting", "waiting", "executing", "completed"]


async def test_a_plan_act_session_resumes_after_a_restart() -> None:
    persistence = MemoryPersistence()
    flow, _, _, _, saved = build_plan_act_flow(
        [plan(("s1", "first"), ("s2", "second"))],
        [
            echo(),
            complete("s1"),
            {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Go on?"}}]},
        ],
        executor_tools=[EchoTool(), AskUserTool()],
        env=ToolEnvironment(user=FakeUserChannel([None])),
        persistence=persistence,
    )
    waiting = await flow.run("two things")
    assert waiting.status == "waiting"
    # "Restart": new agents and a new flow from what was persisted.
    snapshot = saved[-1]
    assert snapshot.state == "waiting" and snapshot.index == 1
    flow2, _, executor2, log2, _ = build_plan_act_flow(
        [{"text": "Both done."}],
        [
            {"expect": {"last_message_contains": "The person answered: yes"}, **echo()},
            complete("s2"),
        ],
        executor_tools=[EchoTool(), AskUserTool()],
        snapshot=snapshot,
        messages=persistence.committed,
    )
    flow2.executor.waiting_for = waiting.waiting_for
    result = await flow2.run("yes")
    assert result.status == "completed", result.error
    assert [s.status for s in flow2.plan.steps] == ["done", "done"]
    assert states(log2)[-2:] == ["summarizing", "completed"]


async def test_the_replan_budget_ends_the_flow() -> None:
    flow, _, _, log, _ = build_plan_act_flow(
        [plan(("s1", "a")), plan(("s2", "b"))],
        [
            complete("s1", success=False, summary="no"),
            complete("s2", success=False, summary="still no"),
        ],
    )
    flow.max_replans = 1
    result = await flow.run("impossible")
    assert result.status == "failed" and "revised 1 times" in (result.error or "")
    assert states(log)[-1] == "failed"


async def test_an_executor_budget_that_runs_out_fails_the_step_not_the_process() -> None:
    flow, _, executor, log, _ = build_plan_act_flow(
        [plan(("s1", "loop")), plan()],
        [echo("1"), echo("2"), echo("3")],
    )
    flow.executor.config = HarnessConfig(max_model_turns_per_run=2)
    result = await flow.run("go")
    assert result.status == "completed"  # the revised plan is empty
    failed = [e for e in log.of("plan_updated") if e.reason == "step_failed"][0]
    assert "model turns" in failed.steps[0].summary


async def test_the_flow_leaves_the_planner_and_the_executor_as_they_were() -> None:
    env, coordinator = analyzer_env()
    write = lambda p, c: {"tool_calls": [{"name": "write", "arguments": {"path": p, "content": c}}]}  # noqa: E731
    flow, planner_model, executor_model, log, _ = build_plan_act_flow(
        [plan(("s1", "write a.py"), ("s2", "write b.py")), {"text": "Wrote both files."}],
        [
            write("a.py", "ERROR in a\n"),
            complete("s1"),
            write("b.py", "fine\n"),
            complete("s2"),
            write("a.py", "fixed\n"),
            complete("s2", summary="fixed a.py too"),
        ],
        executor_tools=[FakeWriteTool()],
        gates=GatePipeline([AnalyzerGate(coordinator)]),
        env=env,
    )
    planner, executor = flow.planner, flow.executor
    before = [
        (agent.options, agent.gates, agent.required_output, agent.tools.names())
        for agent in (planner, executor)
    ]
    result = await flow.run("write files")
    assert result.status == "completed", result.error
    after = [
        (agent.options, agent.gates, agent.required_output, agent.tools.names())
        for agent in (planner, executor)
    ]
    assert after == before
    assert before == [
        (ModelOptions(tool_choice="required"), None, None, []),
        (ModelOptions(), None, None, ["write"]),
    ]
    # The runs had what the flow passed them: the planner's output tool and
    # tool choice, the executor's complete_step, the gates on the last step.
    assert [(r.tools, r.tool_choice) for r in planner_model.requests] == [
        (["submit_plan"], "required"),
        (["submit_plan"], "none"),
    ]
    assert {tuple(r.tools) for r in executor_model.requests} == {("write", "complete_step")}
    assert [r.passed for r in log.of("gate_result")] == [False, True]
    # The last step's gates saw step 1's change (carried) as well as its own.
    assert [(m.paths, m.origin) for m in result.mutations] == [
        (("a.py",), "tool"),
        (("b.py",), "tool"),
        (("a.py",), "tool"),
    ]


# ------------------------------------------------- the work check, per step


async def test_work_then_a_question_then_the_reply_then_complete_step_is_accepted() -> None:
    flow, _, executor, log, saved = build_plan_act_flow(
        [plan(("s1", "read, then ask"))],
        [
            echo("read it"),
            {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Keep it?"}}]},
            {
                "expect": {"last_message_contains": "The person answered: yes"},
                **complete("s1", summary="kept it"),
            },
        ],
        executor_tools=[EchoTool(), AskUserTool()],
        env=ToolEnvironment(user=FakeUserChannel([None])),
    )
    assert (await flow.run("check")).status == "waiting"
    assert saved[-1].step_work == ["echo"]  # stored with the plan, for a restart
    result = await flow.run("yes")
    assert result.status == "completed", result.error
    assert result.text == "kept it"
    rejected = [
        m for m in flow.executor.messages if isinstance(m, ToolResultMessage) and m.is_error
    ]
    assert rejected == []


async def test_a_failed_work_tool_does_not_count_as_work() -> None:
    flow, _, executor, log, _ = build_plan_act_flow(
        [plan(("s1", "do it"))],
        [
            {"tool_calls": [{"name": "fail", "arguments": {"message": "no such file"}}]},
            complete("s1", summary="did it"),
            {
                "expect": {"last_message_contains": "no work tool ran during this step"},
                **echo("really do it"),
            },
            complete("s1", summary="did it"),
        ],
        executor_tools=[EchoTool(), FailTool()],
    )
    result = await flow.run("go")
    assert result.status == "completed", result.error
    rejected = [
        m.content
        for m in flow.executor.messages
        if isinstance(m, ToolResultMessage) and m.is_error and "rejected" in m.content
    ]
    assert len(rejected) == 1


async def test_work_of_an_earlier_step_does_not_count_for_the_next() -> None:
    flow, _, executor, log, _ = build_plan_act_flow(
        [plan(("s1", "a"), ("s2", "b")), {"text": "Both."}],
        [
            echo(),
            complete("s1"),
            {
                "expect": {"last_message_contains": "Step 2 of 2"},
                **complete("s2", summary="nothing to do"),
            },
            {"expect": {"last_message_contains": "no work tool ran"}, **echo()},
            complete("s2"),
        ],
    )
    result = await flow.run("go")
    assert result.status == "completed", result.error
    assert executor.index == len(executor.script.turns)


# ------------------------------------------------------------ the summary


async def test_a_failed_summary_fails_the_run_with_the_reason() -> None:
    flow, planner, _, log, _ = build_plan_act_flow(
        [
            plan(("s1", "a"), ("s2", "b")),
            {"fault": {"kind": "status", "status": 400, "body": "context too long"}},
        ],
        [echo(), complete("s1"), echo(), complete("s2")],
    )
    result = await flow.run("go")
    assert result.status == "failed"
    assert result.error is not None and result.error.startswith("the final summary failed:")
    assert "context too long" in result.error
    assert states(log)[-2:] == ["summarizing", "failed"]


async def test_an_empty_summary_fails_the_run_with_the_reason() -> None:
    flow, _, _, log, _ = build_plan_act_flow(
        [plan(("s1", "a"), ("s2", "b")), {"text": ""}, {"text": ""}, {"text": ""}],
        [echo(), complete("s1"), echo(), complete("s2")],
    )
    flow.planner.config = HarnessConfig(max_empty_retries=0)
    result = await flow.run("go")
    assert result.status == "failed"
    assert (result.error or "").startswith("the final summary failed:")
    assert states(log)[-1] == "failed"


async def test_the_summary_keeps_the_planners_options() -> None:
    turns = iter(
        [
            assistant(
                "",
                call(
                    "submit_plan",
                    steps=[{"id": "s1", "description": "a"}, {"id": "s2", "description": "b"}],
                ),
            ),
            assistant("Both done."),
        ]
    )
    options = ModelOptions(model="big", max_tokens=321, temperature=0.2, tool_choice="required")
    flow, planner_model, _, _, _ = build_plan_act_flow(
        FunctionModel(lambda request: next(turns)),
        [echo(), complete("s1"), echo(), complete("s2")],
        planner_options=options,
    )
    result = await flow.run("go")
    assert result.status == "completed", result.error
    assert [r.options for r in planner_model.requests] == [
        options,
        options.model_copy(update={"tool_choice": "none"}),
    ]
    assert flow.planner.options == options


# ------------------------------------------------ unvalidated changes kept


async def test_restored_changes_are_validated_by_the_last_steps_gates() -> None:
    """After a restart the plan's earlier changes come back from the
    snapshot (generation 0): the last step's gates judge them although the
    last step changed another file only."""
    env, coordinator = analyzer_env({"a.py": "ERROR from step 1\n"})
    write = lambda p, c: {"tool_calls": [{"name": "write", "arguments": {"path": p, "content": c}}]}  # noqa: E731
    stored = PlanSnapshot(
        task="write files",
        state="executing",
        steps=[
            PlanStep(id="s1", description="write a.py", status="done", summary="wrote a.py"),
            PlanStep(id="s2", description="write b.py"),
        ],
        index=1,
        unvalidated=[RunMutation(Mutation(7, ("a.py",)), "tool")],
    )
    snapshot = PlanSnapshot.from_json(stored.to_json())
    assert [(m.generation, m.paths, m.origin) for m in snapshot.unvalidated] == [
        (0, ("a.py",), "tool")
    ]
    flow, _, executor, log, saved = build_plan_act_flow(
        [{"text": "Wrote both."}],
        [
            write("b.py", "fine\n"),
            complete("s2"),
            {"expect": {"last_message_contains": "a.py:1:1 error E1"}, **write("a.py", "ok\n")},
            complete("s2", summary="fixed a.py too"),
        ],
        executor_tools=[FakeWriteTool()],
        gates=GatePipeline([AnalyzerGate(coordinator)]),
        env=env,
        snapshot=snapshot,
    )
    result = await flow.run("go on")
    assert result.status == "completed", result.error
    assert [r.passed for r in log.of("gate_result")] == [False, True]
    assert saved[-1].state == "completed" and saved[-1].unvalidated == []


async def test_changes_of_unfinished_steps_are_stored_with_the_plan() -> None:
    workspace = FakeWorkspace()
    env = ToolEnvironment(workspace=TrackedWorkspace(workspace, MutationLog()))
    write = {"tool_calls": [{"name": "write", "arguments": {"path": "a.py", "content": "x\n"}}]}
    flow, _, _, _, saved = build_plan_act_flow(
        [plan(("s1", "write"), ("s2", "ask"), ("s3", "more"))],
        [
            write,
            complete("s1"),
            {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Go on?"}}]},
        ],
        executor_tools=[FakeWriteTool(), AskUserTool()],
        env=ToolEnvironment(workspace=env.workspace, user=FakeUserChannel([None])),
    )
    assert (await flow.run("two")).status == "waiting"
    data = saved[-1].to_json()
    assert [(m["paths"], m["origin"]) for m in data["unvalidated"]] == [(["a.py"], "tool")]
    assert data["stepWork"] == []


def test_a_damaged_stored_change_is_a_clear_error_not_a_lost_change() -> None:
    with pytest.raises(ValueError, match=r"stored plan is damaged: its unvalidated change 2"):
        PlanSnapshot.from_json(
            {"unvalidated": [{"paths": ["a.py"], "origin": "tool"}, {"paths": "b.py"}]}
        )


async def test_a_plan_interrupted_between_steps_starts_the_next_step_with_its_own_work_check() -> (
    None
):
    """Stopped after step 1 was done and before step 2 started: the next
    message starts step 2 (its prompt, the person's words with it), and step
    1's work does not count for step 2."""
    snapshot = PlanSnapshot(
        task="two things",
        state="executing",
        steps=[
            PlanStep(id="s1", description="first", status="done", summary="did the first"),
            PlanStep(id="s2", description="second"),
        ],
        index=1,
        step_work=["echo"],
    )
    flow, _, executor, log, _ = build_plan_act_flow(
        [{"text": "Both done."}],
        [
            {
                "expect": {
                    "last_message_contains": "The person adds: go on\n\nStep 2 of 2 — s2: second"
                },
                **complete("s2", summary="nothing to do"),
            },
            {"expect": {"last_message_contains": "no work tool ran"}, **echo()},
            complete("s2"),
        ],
        snapshot=snapshot,
        messages=[UserMessage(content="Step 1 of 2 — s1: first")],
    )
    result = await flow.run("go on")
    assert result.status == "completed", result.error
    assert executor.index == len(executor.script.turns)
    assert [e.reason for e in log.of("plan_updated")][:1] == ["step_started"]


async def test_a_failed_last_step_skips_the_gates_and_its_change_is_validated_after_the_replan() -> (
    None
):
    """The last step of the plan gives up after writing a broken file: no
    gate runs on the failed step (a failed step's errors must not fail the
    plan before the planner revises it); the revised step's gates validate
    that change and the executor repairs it."""
    env, coordinator = analyzer_env()
    write = lambda p, c: {"tool_calls": [{"name": "write", "arguments": {"path": p, "content": c}}]}  # noqa: E731
    flow, _, _, log, _ = build_plan_act_flow(
        [
            plan(("s1", "write a.py")),
            {
                "expect": {"last_message_contains": "Step s1 failed: the API is gone"},
                **plan(("s1b", "write b.py instead")),
            },
        ],
        [
            write("a.py", "ERROR in a\n"),
            complete("s1", success=False, summary="the API is gone"),
            write("b.py", "fine\n"),
            complete("s1b"),
            {"expect": {"last_message_contains": "a.py:1:1 error E1"}, **write("a.py", "fixed\n")},
            complete("s1b", summary="fixed a.py too"),
        ],
        executor_tools=[FakeWriteTool()],
        gates=GatePipeline([AnalyzerGate(coordinator)]),
        env=env,
    )
    result = await flow.run("write files")
    assert result.status == "completed", result.error
    assert states(log) == ["planning", "executing", "updating", "executing", "completed"]
    revised = [
        i for i, e in enumerate(log.events) if e.type == "plan_updated" and e.reason == "revised"
    ]
    # No gate ran before the revision; after it, the gates caught a.py and passed.
    assert log.types().index("gate_start") > revised[0]
    assert [r.passed for r in log.of("gate_result")] == [False, True]
    assert result.repair_attempts == 1


async def test_an_abort_between_two_runs_stops_the_flow_before_the_next_run() -> None:
    """The person aborts while the flow is between runs (it has entered
    "summarizing" and saves it; no Agent run is active): the flow takes the
    abort, the summary run never starts, and the plan keeps its state."""
    flow, planner, _, log, _ = build_plan_act_flow(
        [plan(("s1", "a"), ("s2", "b")), {"text": "never asked"}],
        [echo(), complete("s1"), echo(), complete("s2")],
    )
    answers: list[bool] = []

    async def save(snap: PlanSnapshot) -> None:
        if snap.state == "summarizing" and not answers:
            answers.append(flow.abort("stop"))

    flow.save_state = save
    result = await flow.run("do a and b")
    assert answers == [True]
    assert result.status == "aborted" and result.error == "stop"
    assert flow.plan.state == "summarizing"
    assert len(planner.requests) == 1  # the plan only: the summary was never asked for
    assert flow.abort("later") is False  # not running: nothing to abort


def _steps(*statuses: str) -> list[PlanStep]:
    return [
        PlanStep(id=f"s{i}", description=f"step {i}", status=s)  # type: ignore[arg-type]
        for i, s in enumerate(statuses, 1)
    ]


def resumed(state: str) -> tuple[PlanSnapshot, list, list]:
    """A stored plan in ``state``, the planner's and the executor's scripts
    that finish it."""
    return {
        "planning": (
            PlanSnapshot(task="t", state="planning"),
            [plan(("s1", "a"))],
            [echo(), complete("s1")],
        ),
        "executing": (
            PlanSnapshot(task="t", state="executing", steps=_steps("running")),
            [],
            [echo(), complete("s1")],
        ),
        "waiting": (
            PlanSnapshot(task="t", state="waiting", steps=_steps("running")),
            [],
            [echo(), complete("s1")],
        ),
        "updating": (
            PlanSnapshot(task="t", state="updating", steps=_steps("failed"), replans=1),
            [plan(("s2", "b"))],
            [echo(), complete("s2")],
        ),
        "summarizing": (
            PlanSnapshot(task="t", state="summarizing", steps=_steps("done", "done"), index=1),
            [{"expect": {"tool_choice": "none"}, "text": "All done."}],
            [],
        ),
    }[state]


@pytest.mark.parametrize("state", ["planning", "executing", "waiting", "updating", "summarizing"])
async def test_a_resumed_plan_says_where_it_stands_before_it_goes_on(state: str) -> None:
    snapshot, planner_turns, executor_turns = resumed(state)
    flow, planner, executor, log, _ = build_plan_act_flow(
        planner_turns, executor_turns, snapshot=snapshot
    )
    result = await flow.run("go on")
    assert result.status == "completed", result.error
    # The first event of the message, before any model request: where it stands.
    first = log.events[0]
    assert (first.type, first.state, first.previous) == ("plan_state", state, state)
    assert states(log)[-1] == "completed"
    assert planner.remaining == 0 and executor.remaining == 0


@pytest.mark.parametrize("state", ["idle", "completed", "failed"])
async def test_a_finished_plan_starts_the_new_task_from_where_it_stood(state: str) -> None:
    snapshot = PlanSnapshot(task="old", state=state, steps=_steps("done"))  # type: ignore[arg-type]
    flow, _, _, log, _ = build_plan_act_flow(
        [plan(("s1", "a"))], [echo(), complete("s1")], snapshot=snapshot
    )
    result = await flow.run("a new task")
    assert result.status == "completed", result.error
    first = log.events[0]
    assert (first.type, first.state, first.previous) == ("plan_state", "planning", state)


def test_rein_run_prints_a_resumed_state_as_where_the_plan_stands() -> None:
    assert "plan: waiting (resumed)" in printed(PlanState(state="waiting", previous="waiting"))
    assert "plan: planning -> executing" in printed(
        PlanState(state="executing", previous="planning")
    )
