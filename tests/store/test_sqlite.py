"""The session store on a real SQLite file."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from rein.harness import Agent
from rein.harness.errors import StoreError
from rein.harness.messages import AssistantMessage, TextPart, ToolResultMessage, UserMessage
from rein.store import SCHEMA_VERSION, SqliteStore
from rein.store.persistence import StorePersistence
from rein.store.sqlite import _MIGRATIONS
from tests.fakes.events import EventLog
from tests.fakes.models import FunctionModel, assistant
from tests.forkserver import REIN


async def test_messages_round_trip_by_memory_and_sessions_list_newest_first(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    await store.create_session("s1", "first task")
    await store.create_session("s2", "second task", mode="plan", origin="fix")
    msgs = [UserMessage(content="hi"), AssistantMessage(content=(TextPart(text="hello"),))]
    await store.append_messages("s1", "main:messages", msgs)
    await store.append_messages("s1", "planner:memory", [UserMessage(content="plan it")])
    await store.set_status("s2", "completed", turns=3, usage={"input_tokens": 10})
    assert await store.load_messages("s1", "main:messages") == msgs
    assert await store.memory_keys("s1") == ["main:messages", "planner:memory"]
    sessions = await store.list_sessions()
    assert [s.id for s in sessions] == ["s2", "s1"]
    assert (sessions[0].status, sessions[0].turns, sessions[0].mode, sessions[0].origin) == (
        "completed",
        3,
        "plan",
        "fix",
    )
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()
    reopened = SqliteStore.open(tmp_path)
    assert await reopened.load_messages("s1", "main:messages") == msgs


async def test_queued_messages_are_committed_by_flush(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    await store.create_session("s", "t")
    store.append_now("s", "main:messages", UserMessage(content="queued"))
    other = sqlite3.connect(tmp_path / "sessions.db")
    assert other.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
    await store.flush()
    assert other.execute("SELECT count(*) FROM messages").fetchone()[0] == 1


async def test_replace_and_rewrite(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    await store.create_session("s", "t")
    placeholder = ToolResultMessage(tool_call_id="c", tool_name="ask_user", content="waiting")
    await store.append_messages("s", "main:messages", [UserMessage(content="q"), placeholder])
    answered = placeholder.model_copy(update={"content": "The person answered: yes"})
    await store.replace_message("s", "main:messages", 1, answered)
    assert (await store.load_messages("s", "main:messages"))[1] == answered
    await store.replace_all(
        "s", "main:messages", [UserMessage(content="summary", origin="compaction")]
    )
    await store.append_messages("s", "main:messages", [UserMessage(content="next")])
    assert [m.content for m in await store.load_messages("s", "main:messages")] == [
        "summary",
        "next",
    ]  # type: ignore[union-attr]


async def test_two_sessions_writing_at_once(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    await store.create_session("a", "a")
    await store.create_session("b", "b")

    async def writer(session: str) -> None:
        for i in range(50):
            await store.append_messages(
                session, "main:messages", [UserMessage(content=f"{session}{i}")]
            )

    async with anyio.create_task_group() as tg:
        tg.start_soon(writer, "a")
        tg.start_soon(writer, "b")
    for session in ("a", "b"):
        contents = [m.content for m in await store.load_messages(session, "main:messages")]  # type: ignore[union-attr]
        assert contents == [f"{session}{i}" for i in range(50)]


_RUNS_A_SESSION = """
import asyncio, sys
from rein.store import SqliteStore

async def main() -> None:
    store = SqliteStore.open(sys.argv[1])
    await store.create_session("other", "t")
    await store.set_status("other", "running")
    print("running", flush=True)
    sys.stdin.read()  # until the test closes it; then it exits, still "running"

asyncio.run(main())
"""


def test_only_the_sessions_of_a_process_that_is_gone_are_marked_interrupted(
    tmp_path: Path,
) -> None:
    # Defect (explore15): every start marked every "running" session
    # interrupted, another live rein run's too (and rein undo no longer
    # refused that live session). Real processes on one store.
    store = SqliteStore.open(tmp_path)

    async def start_mine() -> None:
        await store.create_session("mine", "t")
        await store.set_status("mine", "running")

    anyio.run(start_mine)
    other = subprocess.Popen(
        [sys.executable, "-c", _RUNS_A_SESSION, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert other.stdout is not None and other.stdout.readline() == "running\n"
        assert anyio.run(store.mark_interrupted) == []
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait(timeout=30)
    assert anyio.run(store.mark_interrupted) == ["other"]

    async def statuses() -> list[str]:
        return [(await store.get_session(s)).status for s in ("other", "mine")]  # type: ignore[union-attr]

    assert anyio.run(statuses) == ["interrupted", "running"]
    anyio.run(store.set_status, "mine", "idle")
    assert anyio.run(store.mark_interrupted) == []


def test_a_read_only_folder_gives_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip(
                "running as root: permissions do not bind; see test_read_only_database_file"
            )
        with pytest.raises(StoreError, match="read-only"):
            SqliteStore.open(folder)
    finally:
        folder.chmod(0o700)


def test_a_read_only_database_file_gives_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    SqliteStore.open(tmp_path).close()
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if mode == os.W_OK else real_access(p, mode)
    )
    with pytest.raises(StoreError, match="read-only"):
        SqliteStore.open(tmp_path)


async def test_a_version_1_database_is_migrated_forward(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    db = sqlite3.connect(path)
    for statement in _MIGRATIONS[1].split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute(
        "INSERT INTO sessions (id, title, status, mode, created_at, updated_at) VALUES ('old', 'v1', 'completed', 'agent', 1, 1)"
    )
    db.execute("PRAGMA user_version=1")
    db.commit()
    db.close()
    store = SqliteStore.open(tmp_path)
    assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    [record] = await store.list_sessions()
    assert (record.id, record.origin, record.turns, record.workspace) == ("old", "chat", 0, "")


async def test_a_session_keeps_its_workspace_folder(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    await store.create_session("ses_w", "task", workspace="/home/me/proj")
    # Saving it again without a folder (an older caller) keeps the folder.
    await store.create_session("ses_w", "task, renamed")
    [record] = await store.list_sessions()
    assert (record.title, record.workspace) == ("task, renamed", "/home/me/proj")
    store.close()


def test_rein_sessions_lists_the_store(tmp_path: Path) -> None:
    import subprocess

    async def fill() -> None:
        store = SqliteStore.open(tmp_path)
        await store.create_session("ses_a", "older task")
        await store.create_session("ses_b", "newer task")
        await store.set_status("ses_b", "completed", turns=2)
        store.close()

    anyio.run(fill)
    out = subprocess.run(
        [*REIN, "sessions", "--storage", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[0].startswith("ses_b") and "completed" in out[0] and "newer task" in out[0]
    assert out[1].startswith("ses_a")
    bad = subprocess.run(
        [*REIN, "sessions", "--storage", str(tmp_path / "sessions.db")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "cannot create the session folder" in bad.stderr


async def test_wire_dump_events_never_reach_the_store(tmp_path: Path) -> None:
    """model_request events go to listeners; the store keeps the transcript."""
    store = SqliteStore.open(tmp_path)
    model = FunctionModel(lambda request: assistant("stored answer"))
    agent = Agent(model, wire_dump=True, persistence=StorePersistence(store, "s1"))
    log = EventLog()
    agent.subscribe(log)
    await agent.prompt("stored prompt")
    assert len(log.of("model_request")) == 1
    store.close()
    dump = "\n".join(sqlite3.connect(tmp_path / "sessions.db").iterdump())
    assert "stored prompt" in dump and "stored answer" in dump
    assert "model_request" not in dump and '"format"' not in dump
