"""Stores that fail loudly and lose nothing (issue 30, item 4), on real
SQLite files: a disk that fills up mid-commit (a real process whose file
size limit the kernel enforces, and SQLite's own page limit), a lock held
by another real process, a database deleted while it is open."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rein.harness.errors import StoreError
from rein.harness.messages import UserMessage
from rein.store import SqliteStore
from rein.store._sqlite_errors import LOCK_WAIT_S, lock_holders
from rein.store.checkpoints import SqliteCheckpointStore

ROOT = Path(__file__).resolve().parents[2]

#: A process that fills its disk: the kernel refuses writes past 200 kB
#: (RLIMIT_FSIZE), which SQLite reports as "database or disk is full", in
#: the middle of a commit. Then the limit is lifted and the store flushes.
DISK_FULL = r"""
import json, os, resource, signal, sys
import anyio
from rein.harness.messages import UserMessage
from rein.store import SqliteStore

async def main():
    store = SqliteStore.open(sys.argv[1])
    await store.create_session("s", "t")
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, resource.RLIM_INFINITY))
    appended, error = 0, None
    while appended < 500 and error is None:
        store.append_now("s", "main:messages", UserMessage(content=os.urandom(3000).hex()))
        appended += 1
        try:
            await store.flush()
        except Exception as exc:
            error = {"type": type(exc).__name__, "text": str(exc),
                     "reason": getattr(exc, "reason", None), "queued": len(store._pending)}
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    await store.flush()
    stored = len(await store.load_messages("s", "main:messages"))
    print(json.dumps({"appended": appended, "error": error, "stored": stored}))

anyio.run(main)
"""


def test_a_commit_cut_short_by_a_full_disk_keeps_every_queued_message(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", DISK_FULL, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.splitlines()[-1])
    error = report["error"]
    assert error is not None, report  # the limit was reached
    # A write past the limit fails (EFBIG: SQLITE_IOERR_WRITE) or comes short
    # (SQLITE_FULL), as on a full disk; either is named, not an OperationalError.
    assert error["type"] == "StoreError" and error["reason"] in ("disk_full", "io"), error
    assert "disk" in error["text"] and str(tmp_path / "sessions.db") in error["text"]
    assert error["queued"] >= 1  # the failed commit's messages are still queued
    # Once there is room again, nothing is missing.
    assert report["stored"] == report["appended"], report


async def test_sqlite_full_is_a_store_error_and_the_queue_is_kept(tmp_path: Path) -> None:
    """SQLite's own page limit gives the same SQLITE_FULL as a full disk."""
    store = SqliteStore.open(tmp_path)
    await store.create_session("s", "t")
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count={pages}")
    messages = [UserMessage(content=f"{i}" * 20_000) for i in range(3)]
    for message in messages:
        store.append_now("s", "main:messages", message)
    with pytest.raises(StoreError) as full:
        await store.flush()
    assert full.value.reason == "disk_full" and "the disk is full" in str(full.value)
    assert store.unsaved == 3
    store._db.execute("PRAGMA max_page_count=1073741823")
    store.close()
    assert await SqliteStore.open(tmp_path).load_messages("s", "main:messages") == messages


@contextmanager
def _locked_by_another_process(database: Path) -> Iterator[subprocess.Popen[str]]:
    """A real process holding ``database``'s write lock (BEGIN EXCLUSIVE)."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            f"db = sqlite3.connect({str(database)!r}, isolation_level=None)\n"
            "db.execute('BEGIN EXCLUSIVE')\n"
            "db.execute('UPDATE sessions SET title=title')\n"
            "print('locked', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.kill()
        holder.wait(10)


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="names holders from /proc/locks")
async def test_a_lock_held_by_another_process_is_a_bounded_wait_naming_it(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    await store.create_session("s", "t")
    store.append_now("s", "main:messages", UserMessage(content="kept"))
    with _locked_by_another_process(store.path) as holder:
        assert [pid for pid, _ in lock_holders(store.path)] == [holder.pid]
        started = time.monotonic()
        with pytest.raises(StoreError) as locked:
            await store.flush()
        waited = time.monotonic() - started
        with pytest.raises(StoreError, match="locked"):
            await store.check_writable()
    assert waited < LOCK_WAIT_S + 3, waited  # was 10 s and an OperationalError
    text = str(locked.value)
    assert locked.value.reason == "locked"
    assert f"pid {holder.pid}" in text and "locked by another process" in text
    assert str(store.path) in text
    await store.flush()  # the lock is gone: the queued message is committed
    assert [m.content for m in await store.load_messages("s", "main:messages")] == ["kept"]
    store.close()


async def test_the_checkpoint_store_names_the_lock_too(tmp_path: Path) -> None:
    checkpoints = SqliteCheckpointStore.open(tmp_path)
    holder = sqlite3.connect(tmp_path / "checkpoints.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("DELETE FROM reviews")
    with pytest.raises(StoreError) as locked:
        await checkpoints.set_review("s", "r", "a.py", "kept")
    holder.execute("ROLLBACK")
    assert locked.value.reason == "locked"
    assert "the checkpoint database" in str(locked.value) and "locked" in str(locked.value)
    checkpoints.close()


async def test_a_deleted_database_is_created_again_and_the_hook_refills_it(
    tmp_path: Path,
) -> None:
    store = SqliteStore.open(tmp_path)
    told: list[str] = []

    async def refill(reason: str) -> None:
        told.append(reason)
        await store.create_session("s", "refilled")

    await store.create_session("s", "first")
    store.on_replaced = refill
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{store.path}{suffix}")
    await store.append_messages("s", "main:messages", [UserMessage(content="after")])
    assert told == ["was deleted"]
    assert store.path.exists()
    store.close()
    reopened = SqliteStore.open(tmp_path)
    assert [(r.id, r.title) for r in await reopened.list_sessions()] == [("s", "refilled")]
    assert [m.content for m in await reopened.load_messages("s", "main:messages")] == ["after"]


async def test_closing_after_the_database_was_deleted_is_a_store_error_that_counts_the_loss(
    tmp_path: Path,
) -> None:
    # Deleted, then closed before any other call: close() cannot run the
    # (async) refill hook, so it says what was not stored; it never raises
    # anything but StoreError (it raised the store's private _Replaced).
    store = SqliteStore.open(tmp_path)
    await store.create_session("s", "first")
    store.append_now("s", "main:messages", UserMessage(content="queued"))
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{store.path}{suffix}")
    with pytest.raises(StoreError) as caught:
        store.close()
    assert "was deleted while open" in str(caught.value)
    assert "1 message(s) were not stored" in str(caught.value)
    assert caught.value.reason == "missing"


def test_lock_holders_reads_the_lock_table(tmp_path: Path) -> None:
    database = tmp_path / "x.db"
    database.write_bytes(b"")
    st = os.stat(database)
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    table = tmp_path / "locks"
    table.write_text(
        f"1: POSIX  ADVISORY  WRITE 4242 {dev} 120 120\n"
        f"1: -> POSIX  ADVISORY  WRITE 4343 {dev} 120 120\n"
        f"2: POSIX  ADVISORY  READ  4444 {dev} 128 128\n"
        f"3: POSIX  ADVISORY  WRITE {os.getpid()} {dev} 120 120\n"
        "4: FLOCK  ADVISORY  WRITE 4545 00:00:1 0 EOF\n"
    )
    assert [pid for pid, _ in lock_holders(database, locks=table)] == [4242]
    assert lock_holders(database, locks=tmp_path / "none") == []
