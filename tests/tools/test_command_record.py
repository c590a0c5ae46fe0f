"""What ``run_command`` changes on disk is the run's change: a real process
edits a file in a real DiskWorkspace, the real DiskWatcher sees it, the run's
record counts it (origin "command") and the gates validate it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from rein.disk.disk_workspace import DiskWorkspace
from rein.disk.watcher import DiskWatcher
from rein.harness import Agent, HarnessConfig
from rein.harness.gating.gates import CommandGate, GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.tools import ToolEnvironment
from rein.process.runner import SubprocessRunner
from rein.providers.replay import ReplayModel
from rein.tools import RunCommandTool
from tests.fakes.approvals import FakeApprover
from tests.fakes.events import EventLog


def command(line: str) -> dict:
    return {"tool_calls": [{"name": "run_command", "arguments": {"command": line}}]}


@asynccontextmanager
async def watched_agent(
    root: Path, script: list[dict], *, gate_command: str
) -> AsyncIterator[tuple[Agent, EventLog]]:
    """An agent over ``root`` wired as a headless host wires it: tracked disk
    workspace, a watcher whose external changes go into the mutation log, and
    the watcher's settle port."""
    disk = DiskWorkspace(root)
    log = MutationLog()
    watcher = DiskWatcher(root, lambda paths: log.record(disk.note_external_change(paths)))
    log.subscribe(watcher.on_own_mutation)
    agent = Agent(
        ReplayModel(script),
        tools=[RunCommandTool()],
        env=ToolEnvironment(
            workspace=TrackedWorkspace(disk, log),
            approver=FakeApprover(),
            settle_changes=watcher.settle,
        ),
        gates=GatePipeline([CommandGate("check", gate_command, SubprocessRunner(str(root)), 60)]),
        config=HarnessConfig(max_repair_attempts=1),
    )
    events = EventLog()
    agent.subscribe(events)
    async with anyio.create_task_group() as tg:
        tg.start_soon(watcher.run)
        with anyio.fail_after(15):
            await watcher.ready.wait()
        yield agent, events
        watcher.stop()
        tg.cancel_scope.cancel()


async def test_a_sed_in_run_command_is_in_the_record_and_gated(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("value = 1\n")
    script = [
        command("sed -i 's/value = 1/value = ERROR/' app.py"),
        {"text": "changed it"},
        command("sed -i 's/ERROR/2/' app.py"),
        {"text": "fixed it"},
    ]
    async with watched_agent(tmp_path, script, gate_command="! grep -n ERROR app.py") as (
        agent,
        events,
    ):
        with anyio.fail_after(60):
            result = await agent.prompt("set value")
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    assert [(g.gate, g.passed) for g in events.of("gate_result")] == [
        ("check", False),
        ("check", True),
    ]
    [blocked] = [g for g in events.of("gate_result") if not g.passed]
    assert "1:value = ERROR" in (blocked.blockers[0].context or "")
    assert result.mutations, "the command's change is not in the run's record"
    assert {m.origin for m in result.mutations} == {"command"}
    assert "app.py" in {p for m in result.mutations for p in m.paths}
    assert (tmp_path / "app.py").read_text() == "value = 2\n"


async def test_a_command_that_changes_nothing_leaves_the_gates_alone(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("value = ERROR\n")
    script = [command("grep -c value app.py"), {"text": "one line"}]
    async with watched_agent(tmp_path, script, gate_command="! grep -n ERROR app.py") as (
        agent,
        events,
    ):
        with anyio.fail_after(60):
            result = await agent.prompt("count")
    assert result.status == "completed", result.error
    assert result.mutations == []
    assert events.of("gate_start") == []
