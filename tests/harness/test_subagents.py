"""Subagents: nested harnesses inside the task tool."""

from __future__ import annotations

import anyio

from rein.harness import Agent, HarnessConfig, ToolRegistry, ToolResultMessage
from rein.harness.agent import dangling_tool_calls
from rein.harness.subagents import SubagentSpawner
from rein.harness.tools import ToolEnvironment
from rein.providers.replay import ReplayModel
from rein.tools.task import TaskTool
from tests.fakes import EchoTool, EventLog, MemoryPersistence, SleepTool, assert_well_formed


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
    env.subagents = SubagentSpawner(child_model, registry, env, persistence_for=persistence_for)
    parent_model = ReplayModel(parent_turns, name="parent")
    parent = Agent(parent_model, tools=[TaskTool(), *registry_tools(registry)], env=env)
    log = EventLog()
    parent.subscribe(log)
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
    assert "message_delta" not in inner
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


async def test_a_steer_to_the_parent_makes_the_running_child_wrap_up() -> None:
    """Issue 15: the task tool awaits steering_arrived; the child gets a
    wrap-up steer of its own (and yields its own long tool), so the parent
    gets the child's report and the person's message sooner."""
    sleeper = SleepTool()
    parent, parent_model, child_model, _, _ = setup(
        [
            task_call(),
            {"text": "ok, switching"},
        ],
        [
            {"tool_calls": [{"name": "sleep", "arguments": {"seconds": 60}}]},
            {"expect": {"last_message_contains": "Wrap up now"}, "text": "partial report"},
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
    steers = [
        m.content
        for m in parent_model.requests[1].messages
        if getattr(m, "origin", None) == "steer"
    ]
    assert steers == ["actually, look at b.py first"]
    [report] = [m for m in parent.messages if isinstance(m, ToolResultMessage)]
    assert "partial report" in report.content
