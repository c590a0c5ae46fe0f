"""Sessions in SQLite (the store package is the only place sqlite3 is imported).

One file (WAL) under ``storagePath``. Messages are appended as they are
produced; the loop's checkpoint commits them before the next model call or
tool execution. Writes run on a worker thread, serialised by a lock, so the
event loop never blocks on the disk for long.

Schema versions are forward migrations keyed by ``PRAGMA user_version``. A
database written by a newer Rein, or a file that is not a database, is
refused with an error naming the file, and nothing in it is touched.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from rein.harness.errors import StoreError
from rein.harness.messages import Message, MessageAdapter
from rein.harness.run.run_types import RunResult
from rein.process.identity import owner_alive, this_process
from rein.store._database import Database, DatabaseStore
from rein.store._session_schema import _MIGRATIONS, SCHEMA_VERSION
from rein.store._sqlite_open import open_database
from rein.store.approval_rule_table import ApprovalRuleTable
from rein.store.session_images import SessionImage, SessionRecord, write_images

__all__ = ["SCHEMA_VERSION", "SqliteStore", "default_storage_path"]

log = logging.getLogger(__name__)

T = TypeVar("T")


def _open(storage: str | os.PathLike[str]) -> tuple[Path, sqlite3.Connection]:
    return open_database(
        storage,
        filename="sessions.db",
        kind="session",
        schema_version=SCHEMA_VERSION,
        migrations=_MIGRATIONS,
        probe_table="sessions",
    )


def default_storage_path() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("rein", appauthor=False))


class SqliteStore(DatabaseStore):
    """Sessions, runs and agent memories in one SQLite file (and, in
    :attr:`approval_rules`, the workspaces' kept approval rules). Use
    :meth:`open`.

    Every failure is a StoreError naming the file and the cause (the disk
    is full, another process (pid N) holds the lock, ...). Queued messages
    are never dropped: a commit that fails keeps them queued for the next
    one. A database deleted or replaced while open is created again, and
    :attr:`on_replaced` writes back what the process holds in memory (with
    :meth:`restore`)."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self._file = Database(path, connection, kind="session", reopen=lambda: _open(path.parent))
        #: The workspaces' kept approval rules, in the same file.
        self.approval_rules = ApprovalRuleTable(self._file)
        self._pending: list[tuple[str, str, int, str, float]] = []
        self._next_seq: dict[tuple[str, str], int] = {}

    @property
    def _lock(self) -> threading.Lock:
        return self._file.lock

    @property
    def unsaved(self) -> int:
        """Messages queued and not committed yet."""
        return len(self._pending)

    # ------------------------------------------------------------------ open

    @classmethod
    def open(cls, storage: str | os.PathLike[str]) -> SqliteStore:
        """Open (or create) ``storage/sessions.db``. StoreError names the file
        and what is wrong; the file is left as it was."""
        return cls(*_open(storage))

    def close(self) -> None:
        """Commit what is queued and close. StoreError (after closing) when
        queued messages could not be committed: they are lost, and it says
        how many."""
        error: StoreError | None = None
        lost = 0
        try:
            self._file.run_now(self._flush_locked, doing="saving the last messages")
        except StoreError as exc:
            error, lost = exc, len(self._pending)
        self._file.close()
        if error is not None:
            raise StoreError(f"{error}; {lost} message(s) were not stored", error.reason)

    async def check_writable(self) -> None:
        """Take the write lock and give it back: StoreError (locked, read-only,
        ...) when this process could not write now."""

        def probe() -> None:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("ROLLBACK")

        await self._call(probe, "checking that it can be written")

    # ------------------------------------------------------------ threading

    async def _call(self, fn: Callable[[], T], doing: str = "") -> T:
        return await self._file.call(fn, doing=doing)

    # -------------------------------------------------------------- sessions

    def _upsert_session(
        self, session_id: str, title: str, mode: str, origin: str, status: str, workspace: str
    ) -> None:
        now = time.time()
        self._db.execute(
            "INSERT INTO sessions (id, title, status, mode, origin, created_at, updated_at, "
            "workspace) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
            "title=excluded.title, updated_at=excluded.updated_at, "
            "workspace=CASE WHEN excluded.workspace != '' THEN excluded.workspace "
            "ELSE sessions.workspace END",
            (session_id, title, status, mode, origin, now, now, workspace),
        )

    async def create_session(
        self,
        session_id: str,
        title: str,
        mode: str = "agent",
        origin: str = "chat",
        workspace: str = "",
    ) -> None:
        await self._call(
            lambda: self._upsert_session(session_id, title, mode, origin, "idle", workspace)
        )

    async def set_status(
        self,
        session_id: str,
        status: str,
        *,
        turns: int | None = None,
        usage: dict[str, Any] | None = None,
    ) -> None:
        def write() -> None:
            self._flush_locked()
            owner = this_process() if status == "running" else ""
            sets, args = ["status=?", "updated_at=?", "owner=?"], [status, time.time(), owner]
            if turns is not None:
                sets.append("turns=turns+?")
                args.append(turns)
            if usage is not None:
                # Usage adds up over the session's runs.
                row = self._db.execute(
                    "SELECT usage FROM sessions WHERE id=?", (session_id,)
                ).fetchone()
                total = dict(json.loads(row[0] or "{}")) if row else {}
                for key, value in usage.items():
                    total[key] = int(total.get(key, 0)) + int(value)
                sets.append("usage=?")
                args.append(json.dumps(total))
            self._db.execute(
                f"UPDATE sessions SET {', '.join(sets)} WHERE id=?", (*args, session_id)
            )

        await self._call(write)

    async def set_mode(self, session_id: str, mode: str) -> None:
        """The session's mode changed (``rein acp``'s ``session/set_mode``):
        a load rebuilds it in the new one."""

        def write() -> None:
            self._db.execute("UPDATE sessions SET mode=? WHERE id=?", (mode, session_id))

        await self._call(write)

    async def set_title(self, session_id: str, title: str) -> None:
        def write() -> None:
            self._db.execute("UPDATE sessions SET title=? WHERE id=?", (title, session_id))

        await self._call(write)

    async def list_sessions(self) -> list[SessionRecord]:
        def read() -> list[SessionRecord]:
            rows = self._db.execute(
                "SELECT id, title, status, mode, origin, created_at, updated_at, turns, usage, "
                "workspace FROM sessions ORDER BY updated_at DESC"
            ).fetchall()
            return [
                SessionRecord(
                    id=row[0],
                    title=row[1],
                    status=row[2],
                    mode=row[3],
                    origin=row[4],
                    created_at=row[5],
                    updated_at=row[6],
                    turns=row[7],
                    usage=json.loads(row[8] or "{}"),
                    workspace=row[9],
                )
                for row in rows
            ]

        return await self._call(read)

    async def get_session(self, session_id: str) -> SessionRecord | None:
        for record in await self.list_sessions():
            if record.id == session_id:
                return record
        return None

    # -------------------------------------------------------------- messages

    def _seq(self, session_id: str, memory_key: str) -> int:
        key = (session_id, memory_key)
        if key not in self._next_seq:
            row = self._db.execute(
                "SELECT COALESCE(MAX(seq), -1) FROM messages WHERE session_id=? AND memory_key=?",
                key,
            ).fetchone()
            self._next_seq[key] = int(row[0]) + 1
        seq = self._next_seq[key]
        self._next_seq[key] = seq + 1
        return seq

    def append_now(self, session_id: str, memory_key: str, message: Message) -> None:
        """Queue one message (cheap, no I/O); :meth:`flush` commits."""
        with self._lock:
            self._pending.append(
                (
                    session_id,
                    memory_key,
                    self._seq(session_id, memory_key),
                    message.model_dump_json(),
                    time.time(),
                )
            )

    def _flush_locked(self) -> None:
        """Commit the queued messages; when that fails they stay queued (a
        failed commit may have been rolled back by SQLite already: the
        queue is restored before anything else can raise)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        try:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO messages (session_id, memory_key, seq, body, created_at) VALUES (?, ?, ?, ?, ?)",
                pending,
            )
            self._db.execute("COMMIT")
        except BaseException:
            self._pending = pending + self._pending
            raise

    async def flush(self) -> None:
        if self._pending:
            await self._call(self._flush_locked, "saving messages")

    async def append_messages(
        self, session_id: str, memory_key: str, messages: Sequence[Message]
    ) -> None:
        for message in messages:
            self.append_now(session_id, memory_key, message)
        await self.flush()

    async def replace_message(
        self, session_id: str, memory_key: str, index: int, message: Message
    ) -> None:
        def write() -> None:
            self._flush_locked()
            self._db.execute(
                "UPDATE messages SET body=? WHERE session_id=? AND memory_key=? AND seq=?",
                (message.model_dump_json(), session_id, memory_key, index),
            )

        await self._call(write)

    async def replace_all(
        self, session_id: str, memory_key: str, messages: Sequence[Message]
    ) -> None:
        """Rewrite a memory (after compaction replaced old turns)."""

        def write() -> None:
            self._flush_locked()
            self._db.execute("BEGIN")
            self._db.execute(
                "DELETE FROM messages WHERE session_id=? AND memory_key=?", (session_id, memory_key)
            )
            now = time.time()
            self._db.executemany(
                "INSERT INTO messages (session_id, memory_key, seq, body, created_at) VALUES (?, ?, ?, ?, ?)",
                [
                    (session_id, memory_key, i, m.model_dump_json(), now)
                    for i, m in enumerate(messages)
                ],
            )
            self._db.execute("COMMIT")
            self._next_seq[(session_id, memory_key)] = len(messages)

        await self._call(write)

    async def load_messages(self, session_id: str, memory_key: str) -> list[Message]:
        def read() -> list[Message]:
            self._flush_locked()
            rows = self._db.execute(
                "SELECT body FROM messages WHERE session_id=? AND memory_key=? ORDER BY seq",
                (session_id, memory_key),
            ).fetchall()
            return [MessageAdapter.validate_json(row[0]) for row in rows]

        return await self._call(read)

    async def memory_keys(self, session_id: str) -> list[str]:
        def read() -> list[str]:
            rows = self._db.execute(
                "SELECT DISTINCT memory_key FROM messages WHERE session_id=? ORDER BY memory_key",
                (session_id,),
            ).fetchall()
            return [row[0] for row in rows]

        return await self._call(read)

    # ---------------------------------------------------------------- memory

    async def set_memory_state(
        self, session_id: str, memory_key: str, state: dict[str, Any]
    ) -> None:
        def write() -> None:
            self._db.execute(
                "INSERT INTO memories (session_id, memory_key, state) VALUES (?, ?, ?) "
                "ON CONFLICT(session_id, memory_key) DO UPDATE SET state=excluded.state",
                (session_id, memory_key, json.dumps(state)),
            )

        await self._call(write)

    async def memory_state(self, session_id: str, memory_key: str) -> dict[str, Any]:
        def read() -> dict[str, Any]:
            row = self._db.execute(
                "SELECT state FROM memories WHERE session_id=? AND memory_key=?",
                (session_id, memory_key),
            ).fetchone()
            return dict(json.loads(row[0])) if row else {}

        return await self._call(read)

    # ------------------------------------------------------------------ runs

    async def record_run(self, session_id: str, result: RunResult, usage: dict[str, Any]) -> None:
        """Store how a run ended: its status, reason, turns, ``usage`` and
        the retries of its model requests."""
        retries = json.dumps([r.model_dump(mode="json") for r in result.model_retries])
        row = (result.run_id, session_id, result.status, result.error, result.turns)

        def write() -> None:
            self._flush_locked()
            now = time.time()
            self._db.execute(
                "INSERT INTO runs (id, session_id, status, reason, turns, usage, retries, "
                "started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO "
                "UPDATE SET status=excluded.status, reason=excluded.reason, turns=excluded.turns, "
                "usage=excluded.usage, retries=excluded.retries, ended_at=excluded.ended_at",
                (*row, json.dumps(usage), retries, now, now),
            )

        await self._call(write)

    async def model_retries(self, session_id: str) -> list[dict[str, Any]]:
        """The model retries of a session's runs, oldest run first: each a
        ``model_retry`` event with its ``run_id``."""

        def read() -> list[dict[str, Any]]:
            rows = self._db.execute(
                "SELECT id, retries FROM runs WHERE session_id=? ORDER BY started_at, rowid",
                (session_id,),
            ).fetchall()
            return [{"run_id": run, **r} for run, retries in rows for r in json.loads(retries)]

        return await self._call(read)

    async def mark_interrupted(self) -> list[str]:
        """Sessions left "running" by a process that died: mark them
        "interrupted" and return their ids. A session another live process
        runs (another ``rein run`` on the same storage) is left running."""

        def write() -> list[str]:
            rows = self._db.execute(
                "SELECT id, owner FROM sessions WHERE status='running'"
            ).fetchall()
            ids = [row[0] for row in rows if not owner_alive(row[1])]
            self._db.executemany(
                "UPDATE sessions SET status='interrupted', owner='' "
                "WHERE id=? AND status='running'",
                [(i,) for i in ids],
            )
            return ids

        return await self._call(write)

    # ------------------------------------------------------- a lost database

    async def restore(self, images: Sequence[SessionImage]) -> None:
        """Write ``images`` into the database in one transaction (the
        :attr:`on_replaced` hook's write: it does not wait for itself;
        :func:`~rein.store.session_images.write_images`). Queued messages
        stay queued; a session they belong to that has no image gets a row,
        so they can be committed."""

        def write() -> None:
            write_images(self._db, images, lambda: {p[0] for p in self._pending}, self._next_seq)

        await self._file.call(write, doing="writing the sessions in memory again", check=False)
