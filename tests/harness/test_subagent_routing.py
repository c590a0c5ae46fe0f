"""Subagents follow the parent's model routing (issue 33, item 8; seed 003's
"subagents use the same features as the main agent, dynamic model routing
included"): a ``task`` call made by a turn ``prepare_next_turn`` routed to a
model runs its child (and the child's children) on that model."""

from __future__ import annotations

from rein.flows.subagents import SubagentSpawner
from rein.harness import Agent, HarnessConfig
from rein.harness.hooks import Hooks, TurnInfo, TurnOverrides
from rein.harness.tools import ToolEnvironment, ToolRegistry
from rein.providers.replay import ReplayModel
from rein.tools.task import TaskTool
from tests.fakes.tools import EchoTool
from tests.fakes.workspace import FakeWorkspace


def task(prompt: str) -> dict:
    return {"tool_calls": [{"name": "task", "arguments": {"description": "d", "prompt": prompt}}]}


def routed_parent(base: ReplayModel, route) -> Agent:
    """A parent on ``base`` whose turns ``route(turn)`` may send elsewhere;
    its children come from the spawner the session builds (the parent's
    current model as the source)."""
    env = ToolEnvironment(workspace=FakeWorkspace({}))
    registry = ToolRegistry([EchoTool(), TaskTool()])
    config = HarnessConfig(subagent_max_depth=2)
    env.subagents = SubagentSpawner(
        base, registry, env, config=config, system_prompt="child", default_tools=["echo", "task"]
    )

    def prepare(info: TurnInfo) -> TurnOverrides | None:
        model = route(info.turn)
        return TurnOverrides(model=model) if model is not None else None

    parent = Agent(
        base,
        tools=[TaskTool(), EchoTool()],
        env=env,
        config=config,
        system_prompt="parent",
        hooks=Hooks(prepare_next_turn=prepare),
    )
    env.subagents.model_source = lambda: parent.model
    return parent


async def test_a_routed_turn_s_child_and_grandchild_run_on_the_routed_model() -> None:
    base = ReplayModel([], name="base")
    routed = ReplayModel(
        [
            task("look"),  # the parent's turn 1
            task("look deeper"),  # the child's turn 1
            {"text": "deep"},  # the grandchild
            {"text": "found it"},  # the child's turn 2
            {"text": "done"},  # the parent's turn 2
        ],
        name="routed",
    )
    parent = routed_parent(base, lambda turn: routed)
    result = await parent.prompt("go")
    assert result.status == "completed", result.error
    assert result.text == "done"
    assert base.requests == []
    assert [r.system for r in routed.requests] == ["parent", "child", "child", "child", "parent"]


async def test_each_child_follows_the_turn_that_started_it() -> None:
    base = ReplayModel(
        [task("first"), {"text": "on base"}], name="base"
    )  # the parent's turn 1, its child
    routed = ReplayModel(
        [task("second"), {"text": "on routed"}, {"text": "done"}], name="routed"
    )  # the parent's turns 2 and 3, the second child
    parent = routed_parent(base, lambda turn: routed if turn >= 2 else None)
    result = await parent.prompt("go")
    assert result.status == "completed", result.error
    assert [r.system for r in base.requests] == ["parent", "child"]
    assert [r.system for r in routed.requests] == ["parent", "child", "parent"]
    # The child's request carries the task's prompt, on the model of its turn.
    assert "first" in base.requests[1].messages[-1].content
    assert "second" in routed.requests[1].messages[-1].content
