"""The run record is kept by the workspace layer: a change counts for the run
whoever made it (a tool that calls no record function, a subagent), and the
gates validate it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from rein.analysis.gate import AnalyzerGate
from rein.flows.subagents import SubagentSpawner
from rein.harness import Agent, HarnessConfig, Tool, ToolContext, ToolRegistry, ToolResult
from rein.harness.gating.gates import GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import Mutation
from rein.harness.run.run_record import RunMutation, RunRecord, active_records, recording
from rein.harness.tools import ToolEnvironment
from rein.providers.replay import ReplayModel
from rein.tools.task import TaskTool
from tests.fakes.diagnostics import analyzed_env
from tests.fakes.events import EventLog
from tests.fakes.tools import FakeWriteTool, FunctionTool
from tests.fakes.workspace import FakeWorkspace


class RenameArgs(BaseModel):
    old: str
    new: str


class SilentRenameTool(Tool[RenameArgs]):
    """Renames through the workspace and calls no record function at all."""

    name = "rename"
    description = "Rename a file."
    args_model = RenameArgs
    tool_class = "write"

    async def execute(self, args: RenameArgs, ctx: ToolContext) -> ToolResult:
        assert ctx.env.workspace is not None
        await ctx.env.workspace.rename(args.old, args.new)
        return ToolResult("renamed")


def call(name: str, **arguments: Any) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def gated_env(files: dict[str, str]) -> tuple[ToolEnvironment, GatePipeline, FakeWorkspace]:
    """A tracked fake workspace with an analyzer that flags every ERROR."""
    env, coordinator, workspace = analyzed_env(files)
    return env, GatePipeline([AnalyzerGate(coordinator)]), workspace


async def test_a_tool_that_calls_no_record_function_is_validated_by_the_gates() -> None:
    """The silent rename is judged: the renamed file's error from before the
    run is its old path's (the rename carries the baseline), so the
    verdict on generation 1 passes."""
    env, gates, _ = gated_env({"draft.txt": "x = ERROR\n"})
    model = ReplayModel(
        [call("rename", old="draft.txt", new="app.py"), {"text": "renamed"}, {"text": "gave up"}]
    )
    agent = Agent(
        model,
        tools=[SilentRenameTool()],
        env=env,
        gates=gates,
        config=HarnessConfig(max_repair_attempts=1),
    )
    events = EventLog()
    agent.subscribe(events)
    result = await agent.prompt("rename the draft")
    assert result.mutations == [RunMutation(Mutation(1, ("draft.txt", "app.py"), "agent"), "tool")]
    assert result.generations == [1]
    [verdict] = events.of("gate_result")
    assert (verdict.gate, verdict.passed, verdict.blockers) == ("analyzer", True, [])
    assert "1 diagnostics at or above the threshold, 0 blocking" in verdict.detail
    assert result.status == "completed"


async def test_a_subagents_edit_reaches_the_parents_gates() -> None:
    env, gates, workspace = gated_env({})
    child_model = ReplayModel(
        [call("write", path="lib.py", content="def f():\n    return ERROR\n"), {"text": "wrote"}],
        name="child",
    )
    spawner = SubagentSpawner(child_model, ToolRegistry([FakeWriteTool()]), env)
    children: list[Agent] = []

    def factory(child_id: str, tools: Any, max_turns: int) -> Agent:
        children.append(spawner(child_id, tools, max_turns))
        return children[-1]

    env.subagents = factory
    parent = Agent(
        ReplayModel(
            [
                call("task", description="write lib", prompt="write lib.py", tools=["write"]),
                {"text": "the subagent wrote lib.py"},
            ],
            name="parent",
        ),
        tools=[TaskTool()],
        env=env,
        gates=gates,
        config=HarnessConfig(max_repair_attempts=0),
    )
    result = await parent.prompt("delegate")
    # The child's undefined name blocks the parent's run.
    assert result.status == "failed"
    assert [(b.path, b.line) for b in result.blockers] == [("lib.py", 1)]
    assert result.mutations == [RunMutation(Mutation(1, ("lib.py",), "agent"), "subagent")]
    # The child's own record has the same change as its tool's.
    [child] = children
    assert child.last_result is not None
    assert child.last_result.mutations == [RunMutation(Mutation(1, ("lib.py",), "agent"), "tool")]
    assert workspace.files["lib.py"].endswith("ERROR\n")


async def test_changes_outside_any_run_count_for_none() -> None:
    log = MutationLog()
    workspace = TrackedWorkspace(FakeWorkspace(), log)
    outside = RunRecord()
    await workspace.write_text("a.py", "x = 1\n")
    with recording(outside) as record:
        assert active_records() == (record,)
        await workspace.write_text("b.py", "y = 2\n")
        log.record(Mutation(9, ("c.py",), "external"))  # no process of the run runs
        log.record(Mutation(10, ("d.py",), "person"))
    assert active_records() == ()
    assert [m.paths for m in outside.mutations] == [("b.py",)]


async def test_external_changes_count_only_while_a_process_of_the_run_runs() -> None:
    log = MutationLog()
    record = RunRecord()
    with recording(record):
        with log.attributing_processes():
            log.record(Mutation(1, ("gen.py",), "external"))
            log.record(Mutation(2, ("typed.py",), "person"))
        log.record(Mutation(3, ("later.py",), "external"))
    assert record.mutations == [RunMutation(Mutation(1, ("gen.py",), "external"), "command")]


@pytest.mark.parametrize("origin", ["tool", "command"])
def test_a_generation_counts_once(origin: Any) -> None:
    record = RunRecord()
    mutation = Mutation(4, ("a.py",), "agent")
    assert record.add(mutation, origin)
    assert not record.add(mutation, "subagent")
    assert [m.origin for m in record.mutations] == [origin]


async def test_a_record_knows_its_run_and_the_turn_it_is_in() -> None:
    seen: list[tuple[str, int]] = []

    def note(args: Any, ctx: Any) -> str:
        [record] = active_records()
        seen.append((record.run_id, record.turn))
        return "noted"

    agent = Agent(
        ReplayModel(
            [
                call("note", text="a"),
                call("note", text="b"),
                {"text": "done"},
            ]
        ),
        tools=[FunctionTool("note", note)],
    )
    result = await agent.prompt("note twice")
    assert seen == [(result.run_id, 1), (result.run_id, 2)]
