"""Subagents with parity (issue 16, item 2): a child's changes are gated by
its parent, its questions reach the person through the parent, the parent's
steering and hooks reach it, its depth is bounded and its text is forwarded."""

from __future__ import annotations

from rein.harness import Agent, HarnessConfig, UserMessage
from rein.harness.coordinators import DiagnosticsCoordinator
from rein.harness.gates import AnalyzerGate, GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.subagents import SubagentSpawner
from rein.harness.tools import ToolEnvironment, ToolRegistry
from rein.providers.replay import ReplayModel
from rein.tools.task import TaskTool
from tests.fakes import EventLog, FakeWorkspace, FakeWriteTool, LineAnalyzer


def task(prompt: str, tools: list[str] | None = None) -> dict:
    arguments: dict = {"description": "child work", "prompt": prompt}
    if tools is not None:
        arguments["tools"] = tools
    return {"tool_calls": [{"name": "task", "arguments": arguments}]}


def write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write", "arguments": {"path": path, "content": content}}]}


def gated_parent(parent_turns: list[dict], child_turns: list[dict]):
    """A parent with the analyzer gate over a fake workspace; its children
    may write."""
    workspace = FakeWorkspace({"app.py": "x = 1\n"})
    tracked = TrackedWorkspace(workspace, MutationLog())
    ref: list = [None]
    analyzer = LineAnalyzer(workspace, ref)
    analyzer.analyze()
    coordinator = DiagnosticsCoordinator(analyzer.source, quiet_ms=10, max_wait_ms=2000)
    ref[0] = coordinator
    tracked.mutations.subscribe(coordinator.notify_mutation)
    tracked.mutations.subscribe(analyzer.on_mutation)
    env = ToolEnvironment(workspace=tracked, diagnostics=coordinator)
    registry = ToolRegistry([FakeWriteTool()])
    child_model = ReplayModel(child_turns, name="child")
    env.subagents = SubagentSpawner(child_model, registry, env, default_tools=["write"])
    parent_model = ReplayModel(parent_turns, name="parent")
    parent = Agent(
        parent_model,
        tools=[TaskTool(), FakeWriteTool()],
        env=env,
        gates=GatePipeline([AnalyzerGate(coordinator)]),
        config=HarnessConfig(max_repair_attempts=2),
    )
    log = EventLog()
    parent.subscribe(log)
    return parent, parent_model, child_model, log, workspace


async def test_a_childs_error_is_blocked_by_the_parents_gate_and_repaired() -> None:
    parent, parent_model, _, log, workspace = gated_parent(
        [
            task("add y to app.py"),
            {"text": "done"},
            {"expect": {"last_message_contains": "bad token"}, **write("app.py", "x = 1\ny = 2\n")},
            {"text": "fixed"},
        ],
        [write("app.py", "x = 1\ny = ERROR\n"), {"text": "added y"}],
    )
    result = await parent.prompt("add y")
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    assert [m.origin for m in result.mutations] == ["subagent", "tool"]
    repair = parent_model.requests[2].messages[-1]
    assert isinstance(repair, UserMessage) and repair.origin == "repair"
    assert "app.py:2" in repair.content
    assert [r.passed for r in log.of("gate_result")] == [False, True]
    assert workspace.files["app.py"] == "x = 1\ny = 2\n"
