"""A secret value Rein knows (a provider's key, remembered by the redactor)
never leaves through a tool's result: not in what the model reads, not in
an event (which the store records), whether it came from a real command's
output or from edit_file's diff (its ``details``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness import Agent
from rein.harness.messages import ToolResultMessage
from rein.harness.redaction import REDACTED, REDACTOR
from rein.harness.tools import ToolEnvironment
from rein.providers.replay import ReplayModel
from rein.tools import EditFileTool, RunCommandTool
from rein.tools.settings import ApprovalSettings, ToolSettings
from tests.fakes.events import EventLog

#: Not a known key shape: only remembering it makes it a secret.
HELD = "held-provider-value-7Hq2Lm9X"


@pytest.fixture
def held() -> Iterator[str]:
    REDACTOR.remember(HELD)
    yield HELD
    REDACTOR.forget_all()


@pytest.mark.usefixtures("held")
async def test_a_known_key_in_a_commands_output_or_an_edits_diff_is_redacted(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "settings.py").write_text(f'API_KEY = "{HELD}"\nTIMEOUT = 5\n')
    model = ReplayModel(
        [
            {
                "tool_calls": [
                    {
                        "name": "run_command",
                        "id": "c1",
                        "arguments": {"command": "cat settings.py"},
                    },
                    {
                        "name": "edit_file",
                        "id": "e1",
                        "arguments": {
                            "path": "settings.py",
                            "old_string": "TIMEOUT = 5",
                            "new_string": "TIMEOUT = 10",
                        },
                    },
                ]
            },
            {"text": "done"},
        ]
    )
    settings = ToolSettings(approval=ApprovalSettings(command="allow"))
    agent = Agent(
        model,
        tools=[RunCommandTool(), EditFileTool()],
        env=ToolEnvironment(workspace=DiskWorkspace(root), settings=settings),
    )
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("raise the timeout")
    assert result.status == "completed", result.error

    results = {
        m.tool_call_id: m for m in model.requests[1].messages if isinstance(m, ToolResultMessage)
    }
    assert f'API_KEY = "{REDACTED}"' in results["c1"].content
    assert "+TIMEOUT = 10" in results["e1"].content
    ends = {e.tool_call_id: e for e in log.of("tool_call_end")}
    assert f'API_KEY = "{REDACTED}"' in ends["e1"].details["diff"]
    events = json.dumps([e.model_dump(mode="json") for e in log.events])
    assert HELD not in events
    assert HELD not in json.dumps([m.model_dump(mode="json") for m in model.requests[1].messages])
    assert HELD in (root / "settings.py").read_text(), "the file itself is the person's"
