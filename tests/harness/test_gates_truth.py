"""Issue 14, the core: gates block on what the run broke, never on what it
found, and never pass blind. Each test names the defect it proves fixed."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from rein.analysis.baselines import (
    FileBaseline,
    blocking_in_file,
    blocking_in_untouched_files,
    blocking_untouched,
    line_map,
)
from rein.analysis.gate import AnalyzerGate
from rein.harness import Agent, HarnessConfig
from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.gating.dependencies import DependencyCoordinator
from rein.harness.gating.gates import (
    CommandGate,
    DependencyGate,
    GateContext,
    GatePipeline,
    build_repair_prompt,
)
from rein.harness.gating.validation import SessionValidation
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.messages import AssistantMessage
from rein.harness.ports import Diagnostic, Mutation
from rein.harness.run.run_record import RunMutation
from rein.harness.tools import ToolEnvironment
from rein.providers.replay import ReplayModel
from rein.session.results import result_json
from tests.fakes.clock import run_in_virtual_time
from tests.fakes.commands import FakeCommandRunner
from tests.fakes.diagnostics import FakeDiagnostics, LineAnalyzer, SettlingFakeDiagnostics
from tests.fakes.events import EventLog, assert_well_formed
from tests.fakes.gates import RaisingGate, SlowGate
from tests.fakes.models import FunctionModel, assistant
from tests.fakes.tools import FakeCommandTool, FakeWriteTool
from tests.fakes.workspace import FakeWorkspace


def write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write", "arguments": {"path": path, "content": content}}]}


def command(path: str, content: str) -> dict:
    return {
        "tool_calls": [{"name": "run_command", "arguments": {"path": path, "content": content}}]
    }


class World:
    """A tracked fake workspace with a LineAnalyzer (every line with ERROR
    is an error) behind a DiagnosticsCoordinator; its source offers
    SettlingDiagnostics and logs what the gate asks of it."""

    def __init__(self, files: dict[str, str], *, settling: bool = True) -> None:
        self.workspace = FakeWorkspace(files)
        self.log = MutationLog()
        self.tracked = TrackedWorkspace(self.workspace, self.log)
        ref: list = [None]
        self.analyzer = LineAnalyzer(self.workspace, ref)
        self.source = SettlingFakeDiagnostics(sources=("line",)) if settling else FakeDiagnostics()
        self.analyzer.source = self.source
        self.analyzer.analyze()
        self.coordinator = DiagnosticsCoordinator(self.source, quiet_ms=5, max_wait_ms=2000)
        ref[0] = self.coordinator
        self.log.subscribe(self.coordinator.notify_mutation)
        self.log.subscribe(self.analyzer.on_mutation)

    def agent(
        self,
        script: list[dict],
        *,
        gates: list[Any] | None = None,
        max_repair_attempts: int = 3,
        dependencies: DependencyCoordinator | None = None,
        **config: Any,
    ) -> tuple[Agent, ReplayModel, EventLog]:
        model = ReplayModel(script)
        pipeline = GatePipeline(
            gates if gates is not None else [AnalyzerGate(self.coordinator)],
            dependencies=dependencies,
        )
        agent = Agent(
            model,
            tools=[FakeWriteTool(), FakeCommandTool(self.workspace, self.log)],
            env=ToolEnvironment(workspace=self.tracked, diagnostics=self.coordinator),
            gates=pipeline,
            config=HarnessConfig(max_repair_attempts=max_repair_attempts, **config),
        )
        events = EventLog()
        agent.subscribe(events)
        return agent, model, events


def diag(path: str, line: int, message: str, **kw: Any) -> Diagnostic:
    return Diagnostic(path=path, line=line, message=message, **kw)


# ------------------------------------------------------- per-file baselines


async def test_a_files_baseline_is_captured_before_its_first_change_and_kept() -> None:
    """The baseline of a touched file is its own settled diagnostics from
    before the run first changed it (opened, waited on, then snapshotted);
    the repair loop keeps it. Old: every error in a touched file blocked."""
    world = World({"app.py": "a = 1\nERROR old\n"})
    agent, model, events = world.agent(
        [
            write("app.py", "a = 1\nERROR old\nERROR new\n"),
            {"text": "done"},
            write("app.py", "a = 1\nERROR old\nb = 2\n"),
            {"text": "fixed"},
        ]
    )
    result = await agent.prompt("edit app.py")
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    first, second = events.of("gate_result")
    assert [(b.line, b.message) for b in first.blockers] == [(2, "bad token: ERROR new")]
    assert second.status == "passed"
    # Captured once, before the first write: opened, settled, then snapshotted.
    log = world.source.log
    assert log[log.index("ensure_open app.py") : log.index("ensure_open app.py") + 3] == [
        "ensure_open app.py",
        "wait_idle",
        "snapshot app.py",
    ]
    assert log.count("snapshot app.py") == 1
    assert_well_formed(events.types())


async def test_lines_inserted_above_a_pre_existing_error_do_not_block() -> None:
    world = World({"app.py": "import os\nERROR old\n"})
    agent, _, events = world.agent(
        [write("app.py", "import os\nimport sys\nimport re\nERROR old\n"), {"text": "done"}]
    )
    result = await agent.prompt("add imports")
    assert result.status == "completed" and result.repair_attempts == 0
    [gate] = events.of("gate_result")
    assert gate.status == "passed" and gate.passed


def test_the_line_map_follows_inserted_and_replaced_lines() -> None:
    mapping = line_map("a\nb\nc\nd\n", "new\na\nb\nC!\nd\n")
    assert mapping.moved == {0: 1, 1: 2, 3: 4, 4: 5}
    assert mapping.old_block[2] == mapping.new_block[3]  # c -> C! is one replaced block


def test_an_old_error_on_a_rewritten_line_is_matched_loosely_a_new_one_is_not() -> None:
    old_text = "def f(x):\n    return undefined_a\n\nvalue = 1\n"
    new_text = "def f(x, y):\n    return undefined_a + y\n\nvalue = 1\nz = undefined_b\n"
    baseline = FileBaseline(
        "m.py", old_text, (diag("m.py", 1, "undefined_a is not defined", code="U", source="s"),)
    )
    current = [
        diag("m.py", 1, "undefined_a is not defined", code="U", source="s"),
        diag("m.py", 4, "undefined_b is not defined", code="U", source="s"),
    ]
    blocking = blocking_in_file(current, baseline, new_text)
    assert [(d.line, d.message) for d in blocking] == [(4, "undefined_b is not defined")]


def test_untouched_files_are_judged_file_by_file_and_a_republished_baseline_is_skipped() -> None:
    old = diag("a.py", 3, "x is not defined", code="U", source="s")
    moved = diag("b.py", 7, "y is not defined", code="U", source="s")
    baseline = {"a.py": [old], "b.py": [moved]}
    calls: list[str] = []

    def baseline_of(path: str) -> list[Diagnostic]:
        calls.append(path)
        return baseline.get(path, [])

    current = {
        # the baseline's own objects: the analyzer re-published them unchanged
        "a.py": [old],
        # the same error as new objects (a changed publish), one line lower
        "b.py": [diag("b.py", 8, "y is not defined", code="U", source="s")],
        "c.py": [diag("c.py", 0, "z is not defined", code="U", source="s")],
    }
    blocking = blocking_in_untouched_files(current, baseline_of)
    assert [(d.path, d.line) for d in blocking] == [("c.py", 0)]
    assert calls == ["a.py", "b.py", "c.py"]
    # the fast path decides as the comparison does
    assert blocking == blocking_untouched(
        [d for found in current.values() for d in found], [old, moved]
    )
    # an extra error beside the baseline's own objects is new
    extra = diag("a.py", 9, "w is not defined", code="U", source="s")
    assert blocking_in_untouched_files({"a.py": [old, extra]}, baseline_of) == [extra]


async def test_the_same_error_from_two_analyzers_is_one_blocker_naming_both() -> None:
    source = FakeDiagnostics(
        [
            diag("app.py", 4, "Undefined name `nmae`", code="F821", source="Ruff", character=20),
            diag(
                "app.py",
                4,
                '"nmae" is not defined',
                code="reportUndefinedVariable",
                source="basedpyright",
                character=20,
            ),
            diag("app.py", 7, "Expected expression", code="syntax", source="Ruff", character=3),
        ]
    )
    gate = AnalyzerGate(source)
    outcome = await gate.check(GateContext(1, frozenset({"app.py"})))
    # the syntax error first: it is the likelier cause (issue 32 item 4)
    syntax, merged = outcome.blockers
    assert (syntax.line, syntax.code) == (7, "syntax")
    assert (merged.line, merged.code, merged.source) == (4, "F821", "Ruff, basedpyright")
    assert merged.also == ['basedpyright reportUndefinedVariable: "nmae" is not defined']
    prompt = build_repair_prompt(outcome.blockers, 1, 3)
    assert prompt.count("app.py:5:21") == 1
    assert "also reported by basedpyright" in prompt


# ------------------------------------------------------------- never blind


async def test_a_gate_that_raises_blocks_and_is_never_a_pass() -> None:
    """Old: "the gate failed to run" was reported as passed and the
    generation was marked validated."""
    world = World({})
    agent, _, events = world.agent(
        [write("a.py", "x = 1\n"), {"text": "done"}], gates=[RaisingGate()], max_repair_attempts=0
    )
    result = await agent.prompt("go")
    assert result.status == "failed"
    [blocker] = result.blockers
    assert blocker.gate == "broken"
    assert "RuntimeError: the gate's analyzer connection broke" in blocker.message
    [gate] = events.of("gate_result")
    assert gate.status == "blocked" and not gate.passed
    assert agent.gates is not None and agent.gates.validated_generation == 0


async def test_a_blind_analyzer_is_unverified_and_the_run_says_which_generation() -> None:
    """Old: with no analyzer (or a client without rein/diagnostics) the gate
    passed silently."""
    world = World({})
    world.source.blind = "no analyzer is running (ruff and basedpyright were not found)"
    agent, model, events = world.agent(
        [write("a.py", "x = ERROR\n"), {"text": "done"}, {"text": "nothing to do"}]
    )
    result = await agent.prompt("go")
    assert result.status == "completed"
    assert result.repair_attempts == 0  # nothing to repair: nobody looked
    [gate] = events.of("gate_result")
    assert (gate.status, gate.passed) == ("unverified", False)
    [unverified] = result.unverified
    assert (unverified.gate, unverified.generation) == ("analyzer", 1)
    assert "no analyzer is running" in unverified.reason
    wire = result_json("ses_1", result)
    assert wire["unverified"] == [
        {"gate": "analyzer", "generation": 1, "reason": unverified.reason}
    ]
    assert agent.gates is not None and agent.gates.validated_generation == 0
    # The next run of the session carries the change and tries again.
    again = await agent.prompt("anything else?")
    assert [e.paths for e in events.of("carried_changes")] == [["a.py"]]
    assert again.unverified and again.unverified[0].generation == 1


async def test_a_blind_analyzer_passes_a_change_no_analyzer_reads() -> None:
    """Old (review31): notes.txt written in a folder of no language was
    "unverified: no analyzer is configured" and rein run exited 5, where a
    README changed in a Python project passed. A .py file beside it still
    needs someone to look."""
    world = World({})
    world.source.blind = "no analyzer is configured"
    agent, _model, events = world.agent([write("notes.txt", "TOTAL\n"), {"text": "done"}])
    result = await agent.prompt("go")
    [gate] = events.of("gate_result")
    assert (result.status, result.unverified, gate.status) == ("completed", [], "passed")
    assert gate.detail.startswith("nothing an analyzer reads changed (notes.txt)")

    world = World({})
    world.source.blind = "no analyzer is configured"
    agent, _model, events = world.agent(
        [write("notes.txt", "TOTAL\n"), write("a.py", "x = 1\n"), {"text": "done"}]
    )
    result = await agent.prompt("go")
    [gate] = events.of("gate_result")
    assert gate.status == "unverified" and result.unverified


async def test_the_repair_prompt_claims_no_check_passed() -> None:
    world = World({})
    world.source.blind = "the client does not answer rein/diagnostics"
    runner = FakeCommandRunner({"pytest -q": (1, "FAILED test_a.py::test_x")})
    agent, model, events = world.agent(
        [write("a.py", "x = 1\n"), {"text": "done"}, {"text": "cannot"}],
        gates=[AnalyzerGate(world.coordinator), CommandGate("runtime", "pytest -q", runner)],
        max_repair_attempts=1,
    )
    await agent.prompt("go")
    repair = model.requests[2].messages[-1].content
    assert "`pytest -q` exited with 1" in repair
    assert "pass" not in repair.lower()


# ------------------------------------------------------ session validation


async def test_a_run_without_edits_does_not_complete_over_an_earlier_runs_error() -> None:
    """Old: run 1 failed on its repair budget; run 2 made no edit and
    completed with the error still in the file."""
    world = World({})
    agent, model, events = world.agent(
        [
            write("a.py", "x = ERROR\n"),
            {"text": "done"},
            {"text": "all good, nothing to change"},  # run 2
            write("a.py", "x = 1\n"),  # run 3 fixes it
            {"text": "fixed"},
            {"text": "nothing"},  # run 4: nothing left to validate
        ],
        max_repair_attempts=0,
    )
    first = await agent.prompt("write a.py")
    assert first.status == "failed"
    second = await agent.prompt("is it done?")
    assert second.status == "failed"
    assert [b.message for b in second.blockers] == ["bad token: x = ERROR"]
    [carried] = events.of("carried_changes")
    assert (carried.generations, carried.paths) == ([1], ["a.py"])
    third = await agent.prompt("fix it")
    assert third.status == "completed", third.error
    gates_before = len(events.of("gate_start"))
    fourth = await agent.prompt("anything else?")
    assert fourth.status == "completed"
    assert len(events.of("gate_start")) == gates_before
    assert agent.gates is not None and agent.gates.validation.pending == []


def test_the_session_validation_state_round_trips_through_json() -> None:
    state = SessionValidation()
    state.run_ended([RunMutation(Mutation(3, ("a.py",), "agent"), "command")])
    restored = SessionValidation.from_json(state.to_json())
    [pending] = restored.pending
    assert (pending.paths, pending.origin) == (("a.py",), "command")
    assert restored.is_pending(pending)
    restored.validated(1)
    assert restored.pending == []


# --------------------------------------------- the run record feeds the gates


async def test_a_commands_change_is_validated_against_the_run_start_baseline() -> None:
    world = World({"a.py": "ERROR old\n"})
    agent, _, events = world.agent(
        [command("a.py", "ERROR old\nERROR from sed\n"), {"text": "done"}, {"text": "hmm"}],
        max_repair_attempts=0,
    )
    result = await agent.prompt("run sed")
    assert [(m.origin, m.paths) for m in result.mutations] == [("command", ("a.py",))]
    assert result.status == "failed"
    assert [(b.line, b.message) for b in result.blockers] == [(1, "bad token: ERROR from sed")]


async def test_a_subagents_change_is_judged_against_the_files_own_baseline() -> None:
    from rein.flows.subagents import SubagentSpawner
    from rein.harness.tools import ToolRegistry
    from rein.tools.task import TaskTool

    world = World({"lib.py": "ERROR old\n"})
    env = ToolEnvironment(workspace=world.tracked, diagnostics=world.coordinator)
    child = ReplayModel(
        [write("lib.py", "header = 1\nERROR old\nERROR child\n"), {"text": "wrote"}], name="child"
    )
    spawner = SubagentSpawner(child, ToolRegistry([FakeWriteTool()]), env)
    env.subagents = lambda child_id, tools, max_turns: spawner(child_id, tools, max_turns)
    call = {
        "tool_calls": [
            {
                "name": "task",
                "arguments": {"description": "d", "prompt": "write lib", "tools": ["write"]},
            }
        ]
    }
    parent = Agent(
        ReplayModel([call, {"text": "delegated"}], name="parent"),
        tools=[TaskTool()],
        env=env,
        gates=GatePipeline([AnalyzerGate(world.coordinator)]),
        config=HarnessConfig(max_repair_attempts=0),
    )
    result = await parent.prompt("delegate")
    assert result.status == "failed"
    # The old error moved down a line and does not block; the child's new one does.
    assert [(b.line, b.message) for b in result.blockers] == [(2, "bad token: ERROR child")]
    assert [m.origin for m in result.mutations] == ["subagent"]


# ----------------------------------------------------- gate time, installs


def test_gate_time_is_activity_for_the_idle_watchdog() -> None:
    """Old: a gate longer than harness.runIdleTimeoutMs aborted the run."""

    async def main() -> None:
        world = World({})
        agent, _, events = world.agent(
            [write("a.py", "x = 1\n"), {"text": "done"}],
            gates=[SlowGate(30.0)],
            run_idle_timeout_ms=5_000,
        )
        with anyio.fail_after(120):
            result = await agent.prompt("go")
        assert result.status == "completed", result.error
        paused = events.of("watchdog_paused")
        assert [e.reason for e in paused] == ["gate baselines", "gates"]
        assert len(events.of("watchdog_resumed")) == 2

    run_in_virtual_time(main)


async def test_an_install_interrupted_by_an_abort_is_redone_by_the_next_run() -> None:
    runner = FakeCommandRunner()
    runner.gate = anyio.Event()
    deps = DependencyCoordinator(runner, {"pyproject.toml": "pip install -e ."})
    world = World({})
    agent, _, events = world.agent(
        [write("pyproject.toml", "[project]\n"), {"text": "done"}, {"text": "checked"}],
        gates=[DependencyGate(deps), AnalyzerGate(world.coordinator)],
        dependencies=deps,
    )
    async with anyio.create_task_group() as tg:
        results: list[Any] = []

        async def first() -> None:
            results.append(await agent.prompt("bump"))

        tg.start_soon(first)
        while not runner.running:
            await anyio.lowlevel.checkpoint()
        agent.abort("stopped by the person")
    assert results[0].status == "aborted"
    assert [m.path for m in deps.owed()] == ["pyproject.toml"]
    runner.gate.set()
    second = await agent.prompt("is it installed?")
    assert second.status == "completed", second.error
    assert runner.calls == ["pip install -e .", "pip install -e ."]
    assert deps.owed() == []
    dep = [r for r in events.of("gate_result") if r.gate == "dependencies"]
    assert [r.status for r in dep] == ["passed"]


async def test_a_failed_install_of_one_manifest_is_not_hidden_by_anothers_success() -> None:
    runner = FakeCommandRunner({"pip install -e .": (1, "ERROR: no matching distribution")})
    deps = DependencyCoordinator(
        runner, {"pyproject.toml": "pip install -e .", "package.json": "npm install"}
    )
    gate = DependencyGate(deps)
    async with anyio.create_task_group() as tg:
        deps.on_mutation(Mutation(1, ("pyproject.toml",)), tg.start_soon)
        deps.on_mutation(Mutation(2, ("package.json",)), tg.start_soon)
        outcome = await gate.check(GateContext(2, frozenset()))
    assert [(b.path, b.message) for b in outcome.blockers] == [
        (
            "pyproject.toml",
            "the install command `pip install -e .` failed with exit code 1 "
            "(after a change to pyproject.toml)",
        )
    ]
    # Still a blocker on the next check, until pyproject.toml's own install succeeds.
    again = await gate.check(GateContext(3, frozenset()))
    assert len(again.blockers) == 1
    runner.results["pip install -e ."] = (0, "ok")
    async with anyio.create_task_group() as tg:
        deps.on_mutation(Mutation(4, ("pyproject.toml",)), tg.start_soon)
        fixed = await gate.check(GateContext(4, frozenset()))
    assert fixed.blockers == []


async def test_after_an_install_the_analyzers_are_told_and_settle_before_the_verdict() -> None:
    """Old: `Import "x" could not be resolved` persisted through every
    repair after the install that made it resolvable."""
    source = SettlingFakeDiagnostics(
        [diag("app.py", 0, 'Import "requests" could not be resolved')], sources=("basedpyright",)
    )
    source.on_environment_changed = source.diagnostics.clear
    runner = FakeCommandRunner()
    deps = DependencyCoordinator(runner, {"pyproject.toml": "pip install -e ."})
    coordinator = DiagnosticsCoordinator(source, quiet_ms=1, max_wait_ms=500)
    gate = AnalyzerGate(coordinator, dependencies=deps)
    async with anyio.create_task_group() as tg:
        deps.on_mutation(Mutation(1, ("pyproject.toml",)), tg.start_soon)
    await deps.settle()
    outcome = await gate.check(GateContext(2, frozenset({"app.py", "pyproject.toml"})))
    assert outcome.blockers == []
    assert source.log[:3] == [
        "environment_changed pyproject.toml",
        "ensure_open app.py pyproject.toml",
        "wait_idle",
    ]
    # Told once per install.
    await gate.check(GateContext(2, frozenset({"app.py"})))
    assert source.log.count("environment_changed pyproject.toml") == 1


async def test_the_diagnostics_coordinator_forwards_settling_and_keeps_blind_and_sources() -> None:
    inner = SettlingFakeDiagnostics(sources=("Ruff", "basedpyright"))
    inner.idle = False
    inner.blind = "the client does not answer rein/diagnostics"
    coordinator = DiagnosticsCoordinator(inner, quiet_ms=1, max_wait_ms=100)
    assert await coordinator.wait_idle(1.0) is False
    await coordinator.ensure_open(["a.py"])
    await coordinator.environment_changed(["pyproject.toml"])
    snap = await coordinator.snapshot()
    assert (snap.blind, snap.sources) == (inner.blind, ("Ruff", "basedpyright"))
    assert inner.log[:3] == ["wait_idle", "ensure_open a.py", "environment_changed pyproject.toml"]
    # Over a source without them: nothing to wait for, nobody to tell.
    plain = DiagnosticsCoordinator(FakeDiagnostics(), quiet_ms=1, max_wait_ms=100)
    assert await plain.wait_idle(1.0) is True
    await plain.ensure_open(["a.py"])
    await plain.environment_changed(["pyproject.toml"])


async def test_analyzers_that_do_not_settle_make_a_clean_verdict_unverified() -> None:
    world = World({})
    world.source.idle = False
    agent, _, events = world.agent([write("a.py", "x = 1\n"), {"text": "done"}])
    result = await agent.prompt("go")
    assert result.status == "completed"
    [gate] = events.of("gate_result")
    assert gate.status == "unverified"
    assert "did not finish within the settle bound" in result.unverified[0].reason


# ------------------------------------------------- a reply cut at the limit


async def test_an_empty_reply_cut_at_the_token_limit_is_retried_then_fails() -> None:
    """Old: it completed the run with no text."""
    cut = AssistantMessage(content=(), stop_reason="length")
    replies = [cut, cut]
    model = FunctionModel(lambda request: replies.pop(0))
    agent = Agent(model)
    events = EventLog()
    agent.subscribe(events)
    result = await agent.prompt("write a long essay")
    assert result.status == "failed"
    assert "cut at the token limit" in (result.error or "")
    assert len(model.requests) == 2
    nudge = model.requests[1].messages[-1]
    assert "keep this reply short" in nudge.content
    assert_well_formed(events.types())

    replies[:] = [cut, assistant("Short answer.")]
    recovered = await agent.prompt("again")
    assert recovered.status == "completed" and recovered.text == "Short answer."


def test_the_terminal_says_unverified_not_passed_or_failed() -> None:
    import io

    from rein.harness.events import GateResult, RunEnd, Unverified
    from rein.render import EventPrinter

    out = io.StringIO()
    printer = EventPrinter(out)
    printer(
        GateResult(
            gate="analyzer",
            passed=False,
            status="unverified",
            detail="nobody looked: no analyzer is running",
        )
    )
    printer(
        RunEnd(
            run_id="run_1",
            status="completed",
            unverified=[Unverified(gate="analyzer", generation=2, reason="no diagnostics")],
        )
    )
    text = out.getvalue()
    assert "? analyzer unverified: nobody looked: no analyzer is running" in text
    assert "not verified: generation 2 (analyzer: no diagnostics)" in text
    assert "passed" not in text and "blocker" not in text


def test_a_long_compaction_is_activity_for_the_idle_watchdog() -> None:
    """Old: a summary that took longer than harness.runIdleTimeoutMs (no
    event while the model summarised) aborted the run."""

    async def main() -> None:
        async def reply(request: Any) -> AssistantMessage:
            if request.options.tool_choice == "none":  # the summariser's request
                await anyio.sleep(30.0)
                return assistant("SUMMARY: four long questions")
            return assistant("answer")

        agent = Agent(
            FunctionModel(reply),
            config=HarnessConfig(max_context_tokens=3000, run_idle_timeout_ms=5_000),
        )
        events = EventLog()
        agent.subscribe(events)
        with anyio.fail_after(600):
            for i in range(5):
                result = await agent.prompt(f"question {i} " + "z" * 2400)
                assert result.status == "completed", result.error
        assert [c.kind for c in events.of("compaction")] == ["summarize"]
        assert [e.reason for e in events.of("watchdog_paused")] == ["compaction"]
        assert [e.reason for e in events.of("watchdog_resumed")] == ["compaction"]

    run_in_virtual_time(main)


async def test_a_manifest_change_a_stored_session_carried_is_installed() -> None:
    """The process crashed during the install: the resumed session's
    pipeline (a new coordinator) installs the carried manifest change."""
    runner = FakeCommandRunner()
    deps = DependencyCoordinator(runner, {"pyproject.toml": "pip install -e ."})
    world = World({"pyproject.toml": "[project]\n"})
    stored = SessionValidation()
    stored.run_ended([RunMutation(Mutation(7, ("pyproject.toml",), "agent"), "tool")])
    agent, _, events = world.agent(
        [{"text": "it is installed"}],
        gates=[DependencyGate(deps), AnalyzerGate(world.coordinator)],
        dependencies=deps,
    )
    assert agent.gates is not None
    agent.gates.restore_state(stored.to_json())
    result = await agent.prompt("is it installed?")
    assert result.status == "completed", result.error
    assert runner.calls == ["pip install -e ."]
    assert [r.status for r in events.of("gate_result")] == ["passed", "passed"]
    assert agent.gates.validation.pending == []


def test_an_old_error_worded_differently_is_still_the_old_error() -> None:
    """basedpyright prints a recursive type to a varying depth: one error,
    two wordings (seen on toolz's test_functoolz.py). The same rule of the same
    analyzer on the (mapped) line is the old error; a second one there is new."""
    old_text = "x = 1\nif 'a' in f:\n    pass\n"
    new_text = "x = 1\ny = 2\nif 'a' in f:\n    pass\n"
    baseline = FileBaseline(
        "m.py", old_text, (diag("m.py", 1, 'Operator "in" ... (str | (f)', code="Op", source="s"),)
    )
    reworded = diag("m.py", 2, 'Operator "in" ... (str | ((f)', code="Op", source="s")
    assert blocking_in_file([reworded], baseline, new_text) == []
    second = diag("m.py", 2, "Operator another", code="Op", source="s")
    assert blocking_in_file([reworded, second], baseline, new_text) == [second]
    # untouched files: the same rule at the same line
    other_words = diag("m.py", 1, "other words", code="Op", source="s")
    assert blocking_untouched([other_words], baseline.diagnostics) == []
    other_rule = diag("m.py", 1, "other words", code="X", source="s")
    assert blocking_untouched([other_rule], baseline.diagnostics) == [other_rule]


async def test_an_importer_opened_with_a_changed_file_is_judged_against_its_own_past() -> None:
    """A source that analyses file by file (a large workspace) opens the
    changed file's importers before the change; their old errors join the
    baseline. Old: the importer's errors were in no baseline and blocked."""
    world = World({"lib.py": "def f(): ...\n", "user.py": "import lib\nERROR old\n"})
    world.source.file_by_file = True
    world.source.importers = {"lib.py": ["user.py"]}
    agent, _, events = world.agent([write("lib.py", "def f(): ...\nX = 1\n"), {"text": "done"}])
    result = await agent.prompt("add X")
    assert result.status == "completed", result.error
    [gate] = events.of("gate_result")
    assert (gate.status, gate.blockers) == ("passed", [])
    assert "1 importer(s) of the changed files checked" in gate.detail
    log = world.source.log
    at = log.index("ensure_open lib.py")
    assert log[at : at + 3] == ["ensure_open lib.py", "wait_idle", "snapshot lib.py user.py"]


async def test_files_opened_for_a_validated_change_are_released_and_rebaselined_later() -> None:
    """Once a change is validated, what a file-by-file source opened for it
    is closed (on sympy every later edit re-checked every importer an
    earlier one opened), and a later change opens its importers again with
    a baseline from then: an error that came meanwhile is not the run's."""
    world = World({"lib.py": "def f(): ...\n", "user.py": "import lib\n"})
    world.source.file_by_file = True
    world.source.importers = {"lib.py": ["user.py"]}
    agent, _, events = world.agent(
        [
            write("lib.py", "def f(): ...\nX = 1\n"),
            {"text": "done"},
            write("lib.py", "def f(): ...\nX = 2\n"),
            {"text": "done again"},
        ]
    )
    first = await agent.prompt("add X")
    assert first.status == "completed", first.error
    log = world.source.log
    assert "release_opened" in log[log.index("ensure_open lib.py") :]
    assert world.source.opened == set()
    # Meanwhile user.py got an error of its own (the person, another tool).
    world.workspace.files["user.py"] += "ERROR meanwhile\n"
    world.analyzer.analyze()
    second = await agent.prompt("change X")
    assert second.status == "completed", second.error
    gates = events.of("gate_result")
    assert [(g.status, g.blockers) for g in gates] == [("passed", []), ("passed", [])]
    assert world.source.opened == set()


@pytest.mark.parametrize("there_without_the_run", [True, False])
async def test_an_error_in_an_unchanged_file_is_the_runs_only_if_it_goes_without_the_change(
    there_without_the_run: bool,
) -> None:
    """An error that appears in a file the run did not change is asked
    about again with the analyzers shown the changed files as they were
    (basedpyright can gain an error in an importer from a re-check alone).
    There without the run's change too: not blocking. Gone: the run's."""
    world = World({"app.py": "a = 1\n", "other.py": "import app\n"})

    def recheck_adds_an_error(mutation: Any) -> None:
        if "ERROR" not in world.workspace.files["other.py"]:
            world.workspace.files["other.py"] += "ERROR from a re-check\n"
            world.analyzer.analyze()

    world.log.subscribe(recheck_adds_an_error)
    flaky = diag("other.py", 1, "bad token: ERROR from a re-check", code="E1", source="line")
    world.source.counterfactual = [flaky] if there_without_the_run else []
    agent, _, events = world.agent(
        [write("app.py", "a = 2\n"), {"text": "done"}], max_repair_attempts=0
    )
    result = await agent.prompt("change a")
    [gate] = events.of("gate_result")
    assert "snapshot_with app.py -> other.py" in world.source.log
    if there_without_the_run:
        assert result.status == "completed", result.error
        assert (gate.status, gate.blockers) == ("passed", [])
        assert "1 error(s) in unchanged files are there without the run's changes" in gate.detail
    else:
        assert result.status == "failed"
        assert [(b.path, b.line) for b in gate.blockers] == [("other.py", 1)]


async def test_a_counterfactual_not_answered_in_time_keeps_the_error() -> None:
    """The counterfactual question asked with the changed files shown as
    they were got no fresh answer for the importer (its pull timed out:
    the snapshot is stale, and what it holds of the file is its findings
    with the run's change). Its error was taken as "there without the run"
    and dropped: the verdict passed with the importer broken (the merge's
    sympy ``is_random`` command edit, beside 14 re-pulls past
    ``requestTimeoutMs``). A stale answer clears nothing: the error blocks."""
    world = World({"app.py": "a = 1\n", "other.py": "import app\n"})

    def the_change_breaks_the_importer(mutation: Any) -> None:
        if "ERROR" not in world.workspace.files["other.py"]:
            world.workspace.files["other.py"] += "ERROR from the change\n"
            world.analyzer.analyze()

    world.log.subscribe(the_change_breaks_the_importer)
    broken = diag("other.py", 1, "bad token: ERROR from the change", code="E1", source="line")
    world.source.counterfactual = [broken]  # what it held, not an answer
    world.source.counterfactual_stale = "diagnostics are missing: other.py not answered in 10 s"
    agent, _, events = world.agent(
        [write("app.py", "a = 2\n"), {"text": "done"}], max_repair_attempts=0
    )
    result = await agent.prompt("change a")
    [gate] = events.of("gate_result")
    assert "snapshot_with app.py -> other.py" in world.source.log
    assert result.status == "failed"
    assert [(b.path, b.line) for b in gate.blockers] == [("other.py", 1)]
    assert "there without the run" not in gate.detail


async def test_an_accepted_empty_reply_still_goes_through_the_gates() -> None:
    """Issue 15: past harness.maxEmptyRetries the empty turn is accepted as
    the answer, and the run's changes are validated before it completes."""
    world = World({"app.py": "a = 1\n"})
    agent, _, events = world.agent(
        [write("app.py", "a = 1\nERROR new\n"), {"text": ""}, {"text": ""}, {"text": ""}],
        max_repair_attempts=0,
        max_empty_retries=1,
    )
    result = await agent.prompt("edit")
    [gate] = events.of("gate_result")
    assert gate.status == "blocked"
    assert result.status == "failed"  # the gate found the new error; no budget to repair


def test_a_finding_a_settings_change_raised_to_an_error_is_not_the_old_one() -> None:
    """A rule turned on in the analyzers' settings makes an old hint an error
    (basedpyright's unused variable: a hint always, an error with
    ``reportUnusedVariable = "error"``): the run's error, in a changed file
    (matched exactly or by rule) and in an untouched one."""
    text = "def f() -> None:\n    unused = 1\n"
    hint = diag("a.py", 1, '"unused" is not accessed', code="U", source="s", severity=4)
    error = diag("a.py", 1, '"unused" is not accessed', code="U", source="s", severity=1)
    reworded = diag("a.py", 1, '"unused" is unused', code="U", source="s", severity=1)
    assert blocking_in_file([error], FileBaseline("a.py", text, (hint,)), text) == [error]
    assert blocking_in_file([reworded], FileBaseline("a.py", text, (hint,)), text) == [reworded]
    assert blocking_untouched([error], [hint]) == [error]
    assert blocking_untouched([error], [error]) == []
