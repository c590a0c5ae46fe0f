"""Subagents: nested harnesses inside the task tool."""

from __future__ import annotations

import anyio

from rein.flows.subagents import SubagentSpawner
from rein.harness import Agent, HarnessConfig, ToolRegistry, ToolResultMessage
from rein.harness.agent import dangling_tool_calls
from rein.harness.tools import ToolEnvironment
from rein.providers.replay import ReplayModel
from rein.tools.task import TaskTool
from tests.fakes.events import assert_well_formed
from tests.fakes.flows import build_agent_flow
from tests.fakes.persistence import MemoryPersistence
from tests.fakes.tools import EchoTool, SleepTool


def task_call(prompt: str = "find the callers", **extra) -> dict:
    return {
        "tool_calls": [
            {
                "name": "task",
                "arguments": {"description": "find callers", "prompt": prompt, **extra},
            }
        ]
    }


def setup(parent_turns, child_turns, *, child_tools=None, persistence=None):
    child_model = ReplayModel(child_turns, name="child")
    registry = ToolRegistry(child_tools or [EchoTool()])
    memories: dict[str, MemoryPersistence] = {}

    def persistence_for(child_id: str):
        memories[child_id] = MemoryPersistence()
        return memories[child_id]

    env = ToolEnvironment()
    env.subagents = SubagentSpawner(
        child_model, registry, env, persistence_for=persistence_for, clock=lambda: 0.0
    )
    parent_model = ReplayModel(parent_turns, name="parent")
    parent, log = build_agent_flow(parent_model, TaskTool(), *registry_tools(registry), env=env)
    return parent, parent_model, child_model, log, memories


def registry_tools(registry: ToolRegistry):
    return [registry.get(n) for n in registry.names()]


async def test_the_childs_final_text_is_the_tool_result_and_its_events_are_forwarded() -> None:
    parent, parent_model, child_model, log, memories = setup(
        [
            task_call(),
            {"expect": {"last_message_contains": "called from a.py and b.py"}, "text": "done"},
        ],
        [
            {"tool_calls": [{"name": "echo", "arguments": {"text": "grep"}}]},
            {"text": "called from a.py and b.py"},
        ],
    )
    result = await parent.prompt("who calls load()?")
    assert result.status == "completed", result.error
    # The child had its own context: it saw only its own prompt.
    assert [m.role for m in child_model.requests[0].messages] == ["user"]
    assert child_model.requests[0].messages[0].content == "find the callers"
    assert "task" not in child_model.requests[0].tools
    forwarded = log.of("subagent_activity")
    inner = [a.event["type"] for a in forwarded]
    assert "tool_call_start" in inner and inner[0] == "agent_start" and inner[-1] == "agent_end"
    # The child's text reaches the client (issue 16), joined: the replay
    # model streams it in pieces, the clock here never moves, so it arrives
    # as one delta just before the message_end that closes it.
    deltas = [a.event for a in forwarded if a.event["type"] == "message_delta"]
    assert [d["delta"] for d in deltas] == ["called from a.py and b.py"]
    at = inner.index("message_delta")
    assert inner[at + 1] == "message_end"
    assert len({a.child_id for a in forwarded}) == 1 and forwarded[0].name == "find callers"
    # The child's memory is its own.
    [memory] = memories.values()
    assert [m.role for m in memory.committed] == ["user", "assistant", "tool", "assistant"]


async def test_a_child_that_exhausts_its_budget_returns_an_error_result() -> None:
    parent, _, _, log, _ = setup(
        [
            task_call(max_turns=2),
            {"expect": {"last_message_contains": "did not finish"}, "text": "I'll do it myself"},
        ],
        [{"tool_calls": [{"name": "echo", "arguments": {"text": str(i)}}]} for i in range(5)],
    )
    result = await parent.prompt("go")
    assert result.status == "completed", result.error
    [res] = [m for m in parent.messages if isinstance(m, ToolResultMessage)]
    assert res.is_error and "2 model turns" in res.content


async def test_aborting_the_parent_aborts_the_child() -> None:
    sleeper = SleepTool()
    parent, _, child_model, log, memories = setup(
        [task_call()],
        [{"tool_calls": [{"name": "sleep", "arguments": {"seconds": 60}}]}],
        child_tools=[sleeper],
    )
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(parent.prompt, "go")
            await sleeper.started.wait()
            parent.abort("stop everything")
    assert sleeper.cancelled
    assert parent.last_result is not None and parent.last_result.status == "aborted"
    assert dangling_tool_calls(parent.messages) == []
    [memory] = memories.values()
    assert dangling_tool_calls(memory.committed) == []  # the child closed its transcript
    inner = [a.event for a in log.of("subagent_activity")]
    ends = [e for e in inner if e["type"] == "run_end"]
    assert ends and ends[0]["status"] == "aborted"
    assert_well_formed([e["type"] for e in inner])


async def test_without_a_factory_the_task_tool_says_so() -> None:
    model = ReplayModel([task_call(), {"text": "ok"}])
    agent = Agent(model, tools=[TaskTool()], config=HarnessConfig())
    await agent.prompt("go")
    [res] = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert res.is_error and "not available" in res.content


async def test_a_steer_to_the_parent_reaches_the_running_child() -> None:
    """Issue 16 (it replaces issue 15's wrap-up steer): the parent's steering
    is the child's external source. A steer sent while the child runs wakes
    the child's long tool and is delivered to the child at its next
    boundary, with its steering_applied forwarded; the parent does not get
    it a second time."""
    sleeper = SleepTool()
    parent, parent_model, child_model, log, _ = setup(
        [
            task_call(),
            {"expect": {"last_message_contains": "looked at b.py"}, "text": "ok"},
        ],
        [
            {"tool_calls": [{"name": "sleep", "arguments": {"seconds": 60}}]},
            {"expect": {"last_message_contains": "look at b.py first"}, "text": "looked at b.py"},
        ],
        child_tools=[sleeper],
    )
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(parent.prompt, "go")
            await sleeper.started.wait()
            parent.steer("actually, look at b.py first")
    assert sleeper.yielded
    assert parent.last_result is not None and parent.last_result.status == "completed"
    child_steers = [
        m.content for m in child_model.requests[1].messages if getattr(m, "origin", None) == "steer"
    ]
    assert child_steers == ["actually, look at b.py first"]
    assert all(getattr(m, "origin", None) != "steer" for m in parent_model.requests[1].messages)
    applied = [a for a in log.of("subagent_activity") if a.event["type"] == "steering_applied"]
    assert [a.event["texts"] for a in applied] == [["actually, look at b.py first"]]
    assert log.of("steering_applied") == []  # delivered to the child, not the parent
    [report] = [m for m in parent.messages if isinstance(m, ToolResultMessage)]
    assert "looked at b.py" in report.content


async def test_steers_reach_the_child_one_at_a_time() -> None:
    """Two steers queued while the child's tool runs: one per child
    boundary (the parent's steering mode, one-at-a-time)."""
    sleeper = SleepTool()
    parent, _, child_model, log, _ = setup(
        [task_call(), {"text": "ok"}],
        [
            {"tool_calls": [{"name": "sleep", "arguments": {"seconds": 60}}]},
            {"expect": {"last_message_contains": "first"}, "text": "took the first"},
            {"expect": {"last_message_contains": "second"}, "text": "took the second"},
        ],
        child_tools=[sleeper],
    )
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(parent.prompt, "go")
            await sleeper.started.wait()
            parent.steer("first")
            parent.steer("second")
    assert parent.last_result is not None and parent.last_result.status == "completed"
    applied = [
        a.event["texts"]
        for a in log.of("subagent_activity")
        if a.event["type"] == "steering_applied"
    ]
    assert applied == [["first"], ["second"]]
    assert len(child_model.requests) == 3


def test_a_child_takes_the_model_of_its_source_when_it_starts() -> None:
    first, second = ReplayModel([], name="first"), ReplayModel([], name="second")
    current = [first]
    env = ToolEnvironment()
    spawner = SubagentSpawner(
        ReplayModel([], name="built-with"),
        ToolRegistry([EchoTool()]),
        env,
        model_source=lambda: current[0],
    )
    before = spawner.spawn("child-1", None, 5)
    current[0] = second
    after = spawner.spawn("child-2", None, 5)
    grandchild = after.env.subagents.spawn("child-3", None, 5)
    # A running child keeps its model; children started after the change
    # (and theirs) take the new one.
    assert before.model is first
    assert after.model is second
    assert grandchild.model is second


def test_without_a_source_every_child_has_the_model_given() -> None:
    given = ReplayModel([], name="given")
    spawner = SubagentSpawner(given, ToolRegistry([EchoTool()]), ToolEnvironment())
    assert spawner.spawn("child-1", None, 5).model is given
