"""Requests naming a session that is in the store but not in memory (the
server restarted, or it was evicted after ``sessions.idleEvictMs``), over
the real ``rein serve``: the panel names the session it shows. Before,
after a restart, each was InvalidParams ``sessionId: no session`` until
something loaded the session: ``rein/setModel`` (the model picker) now
loads it as ``rein/session`` and ``rein/prompt`` do; ``rein/steer``,
``rein/followUp`` and ``rein/abort`` answer as for any idle session, as
they did for an evicted one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e

NO_GATE: dict[str, Any] = {"gates": {"analyzer": {"enabled": False}}}


async def test_a_stored_session_is_known_after_a_restart(tmp_path: Path) -> None:
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
        idle = {"sessionId": session_id}
        assert await asyncio.wait_for(send("rein/abort", idle), 10) == {"aborted": False}
        for method in ("rein/steer", "rein/followUp"):
            queued = await asyncio.wait_for(send(method, {**idle, "text": "and more"}), 10)
            assert queued["queued"] is False, queued
        choice = {"provider": "replay", "model": "picked"}
        answer = await asyncio.wait_for(
            send("rein/setModel", {"sessionId": session_id, **choice}), 10
        )
        assert answer == {"ok": True}
        models = await asyncio.wait_for(send("rein/models", {"sessionId": session_id}), 10)
        assert models["current"] == choice
        # A session in neither memory nor the store is an invalid param, not
        # silently the model a new session would get.
        with pytest.raises(Exception, match="sessionId: no session 'nope'"):
            await asyncio.wait_for(send("rein/models", {"sessionId": "nope"}), 10)
