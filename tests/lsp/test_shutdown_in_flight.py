"""``shutdown`` while a prompt runs, over the real ``rein serve``: the run
is aborted, the prompt is answered with its result (``aborted``), and the
store records it so before it is closed. Before, shutdown closed the store
while the prompt's bookkeeping (its status, usage, checkpoint) was still to
be written: the prompt was answered InternalError (``Cannot operate on a
closed database``, a traceback in the log) and the next start listed the
session ``interrupted``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e

SETTINGS: dict[str, Any] = {
    "gates": {"analyzer": {"enabled": False}},
    "approval": {"command": "allow"},
}


async def test_shutdown_answers_the_running_prompt_and_stores_it_aborted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    command = "echo made > made.txt; echo started; sleep 30"
    write_script(
        tmp_path,
        [
            {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
            {"text": "never asked"},
        ],
    )
    async with running_server(ws, tmp_path, settings=SETTINGS) as editor:
        client = editor.client
        prompt = asyncio.ensure_future(
            client.protocol.send_request_async("rein/prompt", {"text": "make it"})
        )
        started = await editor.wait_event(
            lambda e: (
                e["event"]["type"] == "tool_call_update"
                and "started" in str(e["event"].get("content", e["event"]))
            ),
            30,
        )
        session_id = started["sessionId"]
        await asyncio.wait_for(client.shutdown_async(None), 15)
        result = await asyncio.wait_for(prompt, 5)
        assert result["status"] == "aborted", result
        client.exit(None)
        server = client._server
        assert server is not None
        assert await asyncio.wait_for(server.wait(), 10) == 0
    async with running_server(ws, tmp_path, settings=SETTINGS) as editor:
        listed = await asyncio.wait_for(
            editor.client.protocol.send_request_async("rein/sessions", {}), 10
        )
        [stored] = [s for s in listed["sessions"] if s["id"] == session_id]
        assert stored["status"] == "aborted", stored
