"""A session whose store fails under it (issue 30, item 4): a full disk
mid-run is told once and loses nothing; a ``sessions.db`` deleted while
the host runs is created again with the sessions in memory, and said.
Real SQLite files under a real headless host (the replay model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rein.config import ReinConfig, load_config
from rein.harness.events import ErrorEvent
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from rein.store import SqliteStore
from tests.fakes.events import EventLog

LONG = "x" * 30_000


def config() -> ReinConfig:
    return load_config({"gates": {"analyzer": {"enabled": False}}})


def answers(*texts: str) -> ReplayModel:
    return ReplayModel([{"text": text} for text in texts])


async def _transcript(storage: Path, session_id: str) -> list[tuple[str, Any]]:
    store = SqliteStore.open(storage)
    try:
        messages = await store.load_messages(session_id, "main:messages")
    finally:
        store.close()
    return [(m.role, m.text if m.role == "assistant" else m.content) for m in messages]


async def test_a_full_disk_mid_run_is_told_once_and_the_messages_are_stored_later(
    tmp_path: Path,
) -> None:
    storage = tmp_path / "store"
    log = EventLog()
    async with HeadlessSession(
        tmp_path, answers(LONG, "short"), config(), analyzers=(), watch=False, storage=storage
    ) as host:
        host.subscribe(log)
        store = host.manager.store
        assert store is not None
        with store._lock:  # SQLite's page limit: SQLITE_FULL, "database or disk is full"
            pages = store._db.execute("PRAGMA page_count").fetchone()[0]
            store._db.execute(f"PRAGMA max_page_count={pages}")
        first = await host.prompt("write a long answer")
        told = [e for e in log.events if isinstance(e, ErrorEvent) and e.where == "store"]
        with store._lock:
            store._db.execute("PRAGMA max_page_count=1073741823")
        second = await host.prompt("and a short one")
        session_id = host.session.id
    # The run went on (it was an internal error), told once with the cause.
    assert first.status == "completed", first.error
    assert len(told) == 1, told
    assert "the disk is full" in told[0].message and "kept in memory" in told[0].message
    assert second.status == "completed"
    assert any("works again" in r for r in host.reports), host.reports
    assert any("the disk is full" in r for r in host.reports), host.reports
    # Nothing was lost: both runs' messages are in the file.
    transcript = await _transcript(storage, session_id)
    assert [r for r, _ in transcript] == ["user", "user", "assistant", "user", "assistant"]
    assert transcript[1:] == [
        ("user", "write a long answer"),
        ("assistant", LONG),
        ("user", "and a short one"),
        ("assistant", "short"),
    ]


async def test_a_deleted_sessions_db_is_created_again_with_the_session_in_memory(
    tmp_path: Path,
) -> None:
    storage = tmp_path / "store"
    async with HeadlessSession(
        tmp_path, answers("one", "two"), config(), analyzers=(), watch=False, storage=storage
    ) as host:
        await host.prompt("first task\nwith details")
        for suffix in ("", "-wal", "-shm"):
            (storage / f"sessions.db{suffix}").unlink(missing_ok=True)
        second = await host.prompt("second task")
        session_id = host.session.id
    assert second.status == "completed"
    [said] = [r for r in host.reports if "sessions.db was deleted" in r]
    assert "created again with the 1 session(s) in memory" in said
    # After the process ends, the session is there with all its messages.
    store = SqliteStore.open(storage)
    [record] = await store.list_sessions()
    store.close()
    assert (record.id, record.title, record.status) == (session_id, "first task", "completed")
    transcript = await _transcript(storage, session_id)
    assert transcript[0][0] == "user"  # the bootstrap context
    assert transcript[1:] == [
        ("user", "first task\nwith details"),
        ("assistant", "one"),
        ("user", "second task"),
        ("assistant", "two"),
    ]


async def test_a_headless_session_is_stored_with_its_first_line_as_title(tmp_path: Path) -> None:
    """``rein run``'s session is listed by its task (the rule of the
    editor's sessions: the first line, at most 80 characters)."""
    storage = tmp_path / "store"
    async with HeadlessSession(
        tmp_path, answers("ok"), config(), analyzers=(), watch=False, storage=storage
    ) as host:
        await host.prompt("  Fix the failing test in app.py\nIt fails since the last change.")
    store = SqliteStore.open(storage)
    [record] = await store.list_sessions()
    store.close()
    assert record.title == "Fix the failing test in app.py"
