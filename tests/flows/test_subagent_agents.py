"""A custom agent's child stays within its definition: its own children
get no more tools than it has, a resumed child of a removed agent is an
error, and a spawner without agents refuses ``agent=``."""

from __future__ import annotations

import pytest

from rein.flows.subagent_kinds import SubagentKind
from rein.flows.subagents import PendingChild, SubagentSpawner
from rein.harness import HarnessConfig, ToolRegistry
from rein.harness.errors import ToolError
from rein.harness.tools import ToolEnvironment
from rein.providers.replay import ReplayModel
from rein.tools.task import TaskTool
from tests.fakes.tools import EchoTool, FunctionTool, ToolCallRecorder

READER = SubagentKind("reader", "reads", ("echo", "task"), "Only read.")
ANY = SubagentKind("any", "no tools field", None, "Anything.")


def spawner() -> SubagentSpawner:
    registry = ToolRegistry(
        [EchoTool(), FunctionTool("run_command", lambda args, ctx: "ran"), TaskTool()]
    )
    made = SubagentSpawner(
        ReplayModel([], name="m"),
        registry,
        ToolEnvironment(),
        config=HarnessConfig(subagent_max_depth=3),
    )
    made.kinds = {"reader": READER, "any": ANY}
    return made


def test_a_read_only_agents_children_get_no_more_than_it_has() -> None:
    top = spawner()
    assert set(top.tools.names()) == {"echo", "run_command", "task"}
    child = top.spawn("c1", None, 5, kind=READER)
    assert child.tools.names() == ["echo", "task"]
    inner = child.env.subagents
    assert isinstance(inner, SubagentSpawner)
    asked = inner.spawn("g1", ["run_command", "echo"], 5)
    assert asked.tools.names() == ["echo"]
    # An agent with no tools field, started by the read-only one: its tools.
    assert inner.spawn("g2", None, 5, kind=ANY).tools.names() == ["echo", "task"]
    # Its default (every tool) is the read-only one's too.
    assert "run_command" not in inner.spawn("g3", None, 5).tools.names()


async def test_a_removed_agent_is_not_resumed_as_a_plain_child_and_a_factory_refuses_agents() -> (
    None
):
    top = spawner()
    top.waiting["call_1"] = PendingChild(
        tool_call_id="call_1",
        child_id="c1",
        name="review",
        max_turns=5,
        question="which file?",
        waiting_for="ask_1",
        agent="gone",
    )
    resume = top.resumer("call_1", "app.py")
    assert resume is not None
    recorder = ToolCallRecorder(ToolEnvironment(subagents=top))
    with pytest.raises(ToolError, match="'gone', which is no longer defined"):
        await resume.resume(recorder.context("task"))

    def factory(child_id, tools, max_turns):  # pragma: no cover - never called
        raise AssertionError("a plain factory must not start an agent child")

    plain = ToolCallRecorder(ToolEnvironment(subagents=factory))
    with pytest.raises(ToolError, match="Custom agents are not available here"):
        await plain.run(TaskTool(), description="d", prompt="p", agent="reader")
