"""The tools driven by the real Agent and a scripted ReplayModel: what the
model gets back, including refusals, and abort ending a running command."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness import Agent, Message, ToolEnvironment, ToolResultMessage
from rein.harness.events import Event, ToolCallUpdate
from rein.harness.prompts import build_system_prompt
from rein.process.groups import group_alive
from rein.providers.replay import ReplayModel
from rein.tools import default_tools
from rein.tools.settings import ApprovalSettings, ToolSettings
from tests.fakes.events import EventLog
from tests.tools.conftest import WriteFiles
from tests.tools.test_command import pid_running


def _results(messages: Sequence[Message]) -> dict[str, ToolResultMessage]:
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}


async def test_a_run_reads_edits_and_gets_refusals_back(
    root: Path, write_files: WriteFiles
) -> None:
    write_files({"calc.py": "def add(a, b):\n    return a - b\n", ".env": "KEY=1\n"})
    model = ReplayModel(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}, "id": "r1"}]},
            {
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "id": "e1",
                        "arguments": {
                            "path": "calc.py",
                            "old_string": "return a - b",
                            "new_string": "return a + b",
                        },
                    },
                    {
                        "name": "write_file",
                        "id": "w1",
                        "arguments": {"path": ".env", "content": ""},
                    },
                    {"name": "run_command", "id": "x1", "arguments": {"command": "rm -rf ."}},
                    {"name": "read_file", "id": "r2", "arguments": {"path": "../../etc/passwd"}},
                ]
            },
            {"text": "Fixed add()."},
        ]
    )
    tools = default_tools()
    log = EventLog()
    agent = Agent(
        model,
        tools=tools,
        env=ToolEnvironment(workspace=DiskWorkspace(root)),
        system_prompt=build_system_prompt(tools.tools(), "agent"),
    )
    agent.subscribe(log)
    result = await agent.prompt("Fix add")
    assert result.status == "completed" and result.text == "Fixed add()."

    first = _results(model.requests[1].messages)
    assert first["r1"].content == "     1\tdef add(a, b):\n     2\t    return a - b"
    assert not first["r1"].is_error

    second = _results(model.requests[2].messages)
    assert second["e1"].content.startswith("Edited calc.py: replaced 1 occurrence")
    assert "+    return a + b" in second["e1"].content
    assert second["w1"].is_error and "protected pattern '.env*'" in second["w1"].content
    assert second["x1"].is_error and "the sandbox cannot run here" in second["x1"].content
    assert second["r2"].is_error and "leads outside the workspace" in second["r2"].content

    assert (root / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (root / ".env").read_text() == "KEY=1\n"
    ends = {e.tool_call_id: e for e in log.of("tool_call_end")}
    assert ends["e1"].details["generation"] == 1
    assert "read_file" in model.requests[0].system and "`run_command`" in model.requests[0].system


async def test_abort_during_run_command_kills_its_process_group(root: Path) -> None:
    model = ReplayModel(
        [
            {
                "tool_calls": [
                    {
                        "name": "run_command",
                        "id": "c1",
                        "arguments": {"command": "sleep 60 & echo $! $$; wait"},
                    }
                ]
            }
        ]
    )
    agent = Agent(
        model,
        tools=default_tools(),
        env=ToolEnvironment(
            workspace=DiskWorkspace(root),
            settings=ToolSettings(approval=ApprovalSettings(command="allow")),
        ),
    )
    pids: list[int] = []

    def listener(event: Event) -> None:
        if isinstance(event, ToolCallUpdate) and event.kind == "output" and not pids:
            pids.extend(int(word) for word in event.text.split())
            agent.abort("stop now")

    agent.subscribe(listener)
    with anyio.fail_after(20):
        result = await agent.prompt("run it")
    assert result.status == "aborted"
    (aborted,) = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert aborted.is_error and aborted.content == "Tool call aborted: stop now"
    child, leader = pids
    assert not pid_running(child)
    assert not group_alive(leader)
