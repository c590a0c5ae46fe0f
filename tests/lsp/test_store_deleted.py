"""``sessions.db`` deleted while a real ``rein serve`` uses it (issue 30,
item 4): the next write notices, creates it again with the session in
memory and tells the editor; after the server exits the session and both
prompts' messages are in the file (they were gone before)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

from rein.store import SqliteStore
from tests.fakes.editor import Editor
from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e

NO_GATE: dict[str, Any] = {"gates": {"analyzer": {"enabled": False}}}


async def prompt(editor: Editor, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(
        editor.client.protocol.send_request_async("rein/prompt", params), 60
    )


async def test_a_deleted_session_database_is_created_again_and_said(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_script(tmp_path, [{"text": "one"}, {"text": "two"}])
    database = tmp_path / "storage" / "sessions.db"
    async with running_server(ws, tmp_path, settings=NO_GATE) as editor:
        first = await prompt(editor, {"text": "first task"})
        assert first["status"] == "completed", first
        assert database.exists()
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{database}{suffix}")
        second = await prompt(editor, {"text": "second task", "sessionId": first["sessionId"]})
        assert second["status"] == "completed", second
        said = [m.message for m in editor.client.messages if "was deleted" in m.message]
    assert len(said) == 1, [m.message for m in editor.client.messages]
    assert str(database) in said[0] and "created again with the 1 session(s)" in said[0]
    store = SqliteStore.open(database.parent)
    try:
        [record] = await store.list_sessions()
        messages = await store.load_messages(record.id, "main:messages")
    finally:
        store.close()
    assert (record.id, record.title) == (first["sessionId"], "first task")
    assert [m.text for m in messages if m.role == "assistant"] == ["one", "two"]
