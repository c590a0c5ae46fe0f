"""A plan aborted from the editor resumes after a restart of the real
`rein serve`: the next prompt continues the same plan (here: its summary)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.editor import Editor
from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e


async def request(editor: Editor, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(editor.client.protocol.send_request_async(method, params), 60)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def complete(step: str, summary: str) -> dict[str, Any]:
    return call("complete_step", step_id=step, success=True, summary=summary)


async def test_a_plan_aborted_while_summarizing_is_summarized_after_a_restart(
    workspace: Path, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [
            call(
                "submit_plan",
                steps=[
                    {"id": "s1", "description": "read app.py"},
                    {"id": "s2", "description": "read it again"},
                ],
            ),
            call("read_file", path="app.py"),
            complete("s1", "read it"),
            call("read_file", path="app.py"),
            complete("s2", "read it again"),
            # A slow summary: the person aborts it.
            {"delay": 60, "text": "never seen"},
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        running = asyncio.ensure_future(
            request(editor, "rein/prompt", {"text": "read app.py twice", "mode": "plan"})
        )
        summarizing = await editor.wait_event(
            lambda e: e["event"]["type"] == "plan_state" and e["event"]["state"] == "summarizing"
        )
        session_id = summarizing["sessionId"]
        assert (await request(editor, "rein/abort", {"sessionId": session_id}))["aborted"]
        aborted = await asyncio.wait_for(running, 30)
        assert aborted["status"] == "aborted", aborted
    write_script(
        tmp_path,
        [
            {
                "expect": {
                    "tool_choice": "none",
                    "last_message_contains": "All steps are done",
                    "messages_contain": ["The person adds: go on", "- s2: read it again"],
                },
                "text": "Read app.py twice.",
            }
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        result = await request(editor, "rein/prompt", {"text": "go on", "sessionId": session_id})
        assert result["status"] == "completed", result.get("error")
        assert result["text"] == "Read app.py twice."
        states = [e["event"]["state"] for e in editor.events if e["event"]["type"] == "plan_state"]
        # The resumed plan first says where it stands (issue 33, item 9).
        assert states == ["summarizing", "completed"]
