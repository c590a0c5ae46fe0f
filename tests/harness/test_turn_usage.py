"""Usage in the events: ``turn_end.usage`` is that turn's alone and
``turn_end.run_usage`` the run's so far; a subagent's tokens count in the
parent turn that called it."""

from __future__ import annotations

from rein.flows.subagents import SubagentSpawner
from rein.harness import Agent, ToolRegistry
from rein.harness.messages import Usage
from rein.harness.tools import ToolEnvironment
from rein.providers.replay import ReplayModel
from rein.tools.task import TaskTool
from tests.fakes.events import EventLog
from tests.fakes.tools import EchoTool


def usage(i: int, o: int) -> dict[str, int]:
    return {"input_tokens": i, "output_tokens": o}


def echo_turn(i: int, o: int) -> dict:
    return {"tool_calls": [{"name": "echo", "arguments": {"text": "x"}}], "usage": usage(i, o)}


def total(usages: list[Usage]) -> Usage:
    out = Usage()
    for u in usages:
        out = out + u
    return out


async def test_turn_end_carries_the_turns_usage_and_the_run_total() -> None:
    model = ReplayModel(
        [echo_turn(100, 10), echo_turn(250, 20), {"text": "done", "usage": usage(400, 30)}]
    )
    agent = Agent(model, tools=[EchoTool()])
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    ends = log.of("turn_end")
    assert [e.usage for e in ends] == [
        Usage(input_tokens=100, output_tokens=10),
        Usage(input_tokens=250, output_tokens=20),
        Usage(input_tokens=400, output_tokens=30),
    ]
    assert [e.run_usage for e in ends] == [
        Usage(input_tokens=100, output_tokens=10),
        Usage(input_tokens=350, output_tokens=30),
        Usage(input_tokens=750, output_tokens=60),
    ]
    (run_end,) = log.of("run_end")
    assert total([e.usage for e in ends]) == run_end.usage == result.usage


async def test_a_subagents_usage_counts_in_the_parent_turn_that_called_it() -> None:
    child_model = ReplayModel(
        [echo_turn(1000, 100), {"text": "found it", "usage": usage(2000, 200)}], name="child"
    )
    registry = ToolRegistry([EchoTool()])
    env = ToolEnvironment()
    env.subagents = SubagentSpawner(child_model, registry, env)
    task = {"name": "task", "arguments": {"description": "look", "prompt": "look around"}}
    parent_model = ReplayModel(
        [
            {"tool_calls": [task], "usage": usage(10, 1)},
            {"text": "done", "usage": usage(20, 2)},
        ],
        name="parent",
    )
    parent = Agent(parent_model, tools=[TaskTool(), EchoTool()], env=env)
    log = EventLog()
    parent.subscribe(log)
    result = await parent.prompt("go")
    assert result.status == "completed", result.error

    ends = log.of("turn_end")
    assert [e.usage for e in ends] == [
        Usage(input_tokens=10 + 1000 + 2000, output_tokens=1 + 100 + 200),
        Usage(input_tokens=20, output_tokens=2),
    ]
    assert ends[-1].run_usage == result.usage == log.of("run_end")[0].usage
    # The child's own events carry its own turns, each once.
    inner = [
        a.event for a in log.of("subagent_activity") if a.event["type"] in ("turn_end", "run_end")
    ]
    assert [e["usage"]["input_tokens"] for e in inner] == [1000, 2000, 3000]
    assert inner[1]["run_usage"]["input_tokens"] == 3000
