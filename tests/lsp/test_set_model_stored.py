"""``rein/setModel`` for a session that is in the store but not in memory
(the server restarted, or it was evicted after ``sessions.idleEvictMs``),
over the real ``rein serve``: the panel's model picker names the session it
shows, and the session is loaded as ``rein/session`` and ``rein/prompt``
load it. Before, it was InvalidParams ``sessionId: no session`` until
something else loaded the session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e

NO_GATE: dict[str, Any] = {"gates": {"analyzer": {"enabled": False}}}


async def test_a_stored_sessions_model_is_set_after_a_restart(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_script(tmp_path, [{"text": "one"}])
    async with running_server(ws, tmp_path, settings=NO_GATE) as editor:
        result = await asyncio.wait_for(
            editor.client.protocol.send_request_async("rein/prompt", {"text": "go"}), 30
        )
    session_id = result["sessionId"]
    async with running_server(ws, tmp_path, settings=NO_GATE) as editor:
        send = editor.client.protocol.send_request_async
        choice = {"provider": "replay", "model": "picked"}
        answer = await asyncio.wait_for(
            send("rein/setModel", {"sessionId": session_id, **choice}), 10
        )
        assert answer == {"ok": True}
        models = await asyncio.wait_for(send("rein/models", {"sessionId": session_id}), 10)
        assert models["current"] == choice
