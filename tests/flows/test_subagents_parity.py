"""Subagents with parity (issue 16, item 2): a child's changes are gated by
its parent, its questions reach the person through the parent, the parent's
steering and hooks reach it, its depth is bounded and its text is forwarded."""

from __future__ import annotations

import re
from pathlib import Path

from rein.analysis.gate import AnalyzerGate
from rein.flows.subagents import SubagentSpawner
from rein.harness import Agent, HarnessConfig, ToolResultMessage, UserMessage
from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.gating.gates import GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.hooks import Block, HookCaller, Hooks, current_caller
from rein.harness.tools import ToolEnvironment, ToolRegistry
from rein.providers.replay import ReplayModel
from rein.tools.ask_user import AskUserTool
from rein.tools.task import TaskTool
from tests.fakes.approvals import FakeUserChannel
from tests.fakes.diagnostics import LineAnalyzer
from tests.fakes.flows import build_agent_flow
from tests.fakes.persistence import MemoryPersistence
from tests.fakes.tools import EchoTool, FakeWriteTool
from tests.fakes.workspace import FakeWorkspace


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
    parent, log = build_agent_flow(
        parent_model,
        TaskTool(),
        FakeWriteTool(),
        env=env,
        gates=GatePipeline([AnalyzerGate(coordinator)]),
        max_repair_attempts=2,
    )
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


# ----------------------------------------------------------- ask_user


def asking_parent(parent_turns: list[dict], child_turns: list[dict], *, max_depth: int = 2):
    """A gated parent whose children may write, ask the person (nobody
    answers now: the channel returns None) and start children of their own."""
    parent, parent_model, child_model, log, workspace = gated_parent(parent_turns, child_turns)
    env = parent.env
    env.user = FakeUserChannel()
    registry = ToolRegistry([FakeWriteTool(), AskUserTool(), TaskTool()])
    memories: dict[str, MemoryPersistence] = {}

    def persistence_for(child_id: str) -> MemoryPersistence:
        return memories.setdefault(child_id, MemoryPersistence())

    env.subagents = SubagentSpawner(
        child_model,
        registry,
        env,
        config=HarnessConfig(subagent_max_depth=max_depth),
        default_tools=["write", "ask_user"],
        persistence_for=persistence_for,
    )
    return parent, parent_model, child_model, log, workspace, memories


def ask(question: str) -> dict:
    return {"tool_calls": [{"name": "ask_user", "arguments": {"question": question}}]}


async def test_a_childs_question_makes_the_parent_wait_and_the_answer_resumes_the_child() -> None:
    parent, parent_model, child_model, log, workspace, memories = asking_parent(
        [
            task("add a constant"),
            {"expect": {"last_message_contains": "added TOTAL"}, "text": "the child added it"},
        ],
        [
            ask("Which name for the constant?"),
            {
                "expect": {"last_message_contains": "The person answered: TOTAL"},
                **write("app.py", "x = 1\nTOTAL = 2\n"),
            },
            {"text": "added TOTAL"},
        ],
    )
    first = await parent.prompt("add a constant")
    assert first.status == "waiting", first.error
    assert "Which name for the constant?" in (first.error or "")
    assert first.waiting_for is not None and parent.waiting_for == first.waiting_for
    assert len(parent_model.requests) == 1  # the parent waits with its child
    [end] = [e for e in log.of("tool_call_end") if e.name == "task"]
    assert end.details["no_answer"] and end.details["question"] == "Which name for the constant?"
    second = await parent.prompt("TOTAL")
    assert second.status == "completed", second.error
    assert second.text == "the child added it"
    # The child went on from where it waited, in its own transcript.
    assert len(child_model.requests) == 3
    # Its change after the answer is the parent run's, and was validated.
    assert [m.origin for m in second.mutations] == ["subagent"]
    assert [r.passed for r in log.of("gate_result")] == [True]
    assert workspace.files["app.py"] == "x = 1\nTOTAL = 2\n"
    # The placeholder result was replaced (in memory and in the parent's
    # transcript): one result for the task call, the child's answer.
    results = [m for m in parent.messages if isinstance(m, ToolResultMessage)]
    assert [r.content for r in results] == ["added TOTAL"]
    [memory] = memories.values()
    assert "The person answered: TOTAL" in memory.committed[2].content


async def test_a_grandchilds_question_waits_through_both_and_resumes_both() -> None:
    parent, parent_model, child_model, log, _, _ = asking_parent(
        [
            task("delegate the naming"),
            {"expect": {"last_message_contains": "child: grandchild chose TOTAL"}, "text": "done"},
        ],
        [
            task("pick a name"),  # the child starts a grandchild
            ask("Which name?"),  # the grandchild asks
            {"text": "grandchild chose TOTAL"},  # the grandchild, resumed
            {
                "expect": {"last_message_contains": "grandchild chose TOTAL"},
                "text": "child: grandchild chose TOTAL",
            },
        ],
    )
    first = await parent.prompt("go")
    assert first.status == "waiting", first.error
    assert "Which name?" in (first.error or "")
    second = await parent.prompt("TOTAL")
    assert second.status == "completed", second.error
    # One box at the parent's level: the grandchild's events arrive inside
    # the child's, and both asked-then-resumed runs are there.
    assert len({a.child_id for a in log.of("subagent_activity")}) == 1
    inner = [a.event for a in log.of("subagent_activity")]
    nested = [e["event"] for e in inner if e["type"] == "subagent_activity"]
    assert [e["status"] for e in nested if e["type"] == "run_end"] == ["waiting", "completed"]
    assert [e["status"] for e in inner if e["type"] == "run_end"] == ["waiting", "completed"]
    assert len(parent_model.requests) == 2 and len(child_model.requests) == 4


async def test_a_question_with_no_subagents_waiting_is_answered_as_before() -> None:
    """The parent's own ask_user keeps its path: the answer becomes the
    result (no resume)."""
    parent, parent_model, _, _, _, _ = asking_parent(
        [
            ask("Which?"),
            {"expect": {"last_message_contains": "The person answered: A"}, "text": "ok"},
        ],
        [],
    )
    parent.tools.register(AskUserTool())
    assert (await parent.prompt("go")).status == "waiting"
    assert (await parent.prompt("A")).status == "completed"


# ---------------------------------------------------------------- hooks


async def test_the_parents_hooks_see_the_childs_calls_marked_as_the_childs() -> None:
    seen: list[tuple[str, str | None, int]] = []
    after: list[tuple[str, int]] = []

    def before(call, args):  # type: ignore[no-untyped-def]
        caller = current_caller()
        seen.append((call.name, caller.subagent_id, caller.depth))
        if call.name == "write" and caller.depth == 1 and call.arguments["path"] == "app.py":
            return Block("children may not write app.py here")
        return None

    async def after_call(call, result):  # type: ignore[no-untyped-def]
        after.append((call.name, current_caller().depth))

    parent, _, child_model, log, workspace = gated_parent(
        [task("write it"), {"text": "ok"}],
        [
            write("app.py", "x = 2\n"),
            {"expect": {"last_message_contains": "may not"}, **write("b.py", "y = 1\n")},
            {"text": "wrote b.py"},
        ],
    )
    parent.hooks = Hooks(before_tool_call=before, after_tool_call=after_call)
    result = await parent.prompt("go")
    assert result.status == "completed", result.error
    [child_id] = {a.child_id for a in log.of("subagent_activity")}
    assert seen == [("task", None, 0), ("write", child_id, 1), ("write", child_id, 1)]
    assert after == [("write", 1), ("task", 0)]  # a blocked call has no after hook
    assert workspace.files["app.py"] == "x = 1\n"  # the parent's hook refused the child's write
    assert current_caller() == HookCaller()  # the mark does not leak out of the hook


# ---------------------------------------------------------------- depth


def depth_setup(max_depth: int, child_turns: list[dict], parent_turns: list[dict]):
    registry = ToolRegistry([EchoTool(), TaskTool()])
    env = ToolEnvironment()
    child_model = ReplayModel(child_turns, name="child")
    env.subagents = SubagentSpawner(
        child_model, registry, env, config=HarnessConfig(subagent_max_depth=max_depth)
    )
    parent_model = ReplayModel(parent_turns, name="parent")
    parent = Agent(parent_model, tools=[TaskTool(), EchoTool()], env=env)
    return parent, child_model


async def test_children_are_offered_task_while_the_depth_allows() -> None:
    parent, child_model = depth_setup(
        2,
        [task("deeper"), {"text": "grandchild answer"}, {"text": "child answer"}],
        [task("go"), {"text": "done"}],
    )
    assert (await parent.prompt("go")).status == "completed"
    child_tools, grandchild_tools = child_model.requests[0].tools, child_model.requests[1].tools
    assert "task" in child_tools and "echo" in child_tools
    assert "task" not in grandchild_tools and "echo" in grandchild_tools


async def test_at_depth_one_children_get_no_task_tool() -> None:
    parent, child_model = depth_setup(1, [{"text": "child answer"}], [task("go"), {"text": "done"}])
    assert (await parent.prompt("go")).status == "completed"
    assert "task" not in child_model.requests[0].tools


async def test_a_task_call_beyond_the_depth_is_refused_with_a_clear_error() -> None:
    parent, child_model = depth_setup(
        0, [], [task("go"), {"expect": {"last_message_contains": "subagentMaxDepth"}, "text": "ok"}]
    )
    assert (await parent.prompt("go")).status == "completed"
    [res] = [m for m in parent.messages if isinstance(m, ToolResultMessage)]
    assert res.is_error
    assert "Subagents nest at most 0 level(s) deep (harness.subagentMaxDepth)" in res.content
    assert child_model.requests == []


# --------------------------------------------------------------- deltas


async def test_the_childs_text_deltas_are_forwarded_joined() -> None:
    """The child streams its answer a character at a time; the clock moves
    0.05 s per reading, the interval is 0.2 s: the client gets a few joined
    deltas, whose text is the whole answer, the last one before message_end."""
    text = "the callers are a.py and b.py"
    ticks = iter(i * 0.05 for i in range(10_000))
    env = ToolEnvironment()
    child_model = ReplayModel([{"text": text, "chunk_size": 1}], name="child")
    env.subagents = SubagentSpawner(
        child_model, ToolRegistry([EchoTool()]), env, clock=lambda: next(ticks)
    )
    parent, log = build_agent_flow([task("find"), {"text": "ok"}], TaskTool(), env=env)
    assert (await parent.prompt("go")).status == "completed"
    inner = [a.event for a in log.of("subagent_activity")]
    deltas = [e["delta"] for e in inner if e["type"] == "message_delta"]
    assert "".join(deltas) == text
    assert 1 < len(deltas) < len(text) / 3
    last = max(i for i, e in enumerate(inner) if e["type"] == "message_delta")
    assert inner[last + 1]["type"] == "message_end"
    assert inner[last + 1]["message"]["content"] == [{"type": "text", "text": text}]


# ----------------------------------------------------------------- docs


def test_the_architecture_subagent_section_names_tests_that_exist() -> None:
    """docs/flows.md lists the subagent invariants with their tests."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "flows.md").read_text(encoding="utf-8")
    section = text[text.index("## Subagents\n") :]
    refs = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", section)
    assert len(refs) >= 12
    missing = [
        f"{file}::{name}"
        for file, name in refs
        if not re.search(rf"^(async )?def {name}\(", (root / file).read_text(), re.MULTILINE)
    ]
    assert missing == []


async def test_a_grandchilds_calls_reach_the_agents_hooks_marked_with_depth_two() -> None:
    seen: list[tuple[str, int]] = []

    def before(call, args):  # type: ignore[no-untyped-def]
        seen.append((call.name, current_caller().depth))

    parent, child_model = depth_setup(
        2,
        [
            task("deeper"),  # the child
            {"tool_calls": [{"name": "echo", "arguments": {"text": "x"}}]},  # the grandchild
            {"text": "grandchild answer"},
            {"text": "child answer"},
        ],
        [task("go"), {"text": "done"}],
    )
    parent.hooks = Hooks(before_tool_call=before)
    assert (await parent.prompt("go")).status == "completed"
    assert seen == [("task", 0), ("task", 1), ("echo", 2)]
