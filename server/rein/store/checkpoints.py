"""Checkpoints in SQLite: ``checkpoints.db`` next to ``sessions.db``.

The :class:`~rein.checkpoints.model.CheckpointStore` port on disk. Texts
are blobs keyed by their SHA-256 (stored once however many runs hold them),
zlib-compressed. A run's changes keep, per path, the versions before and
after (a blob, absent, or unstored with the reason); a review decision is a
row per (run, path).

Why a file of its own rather than more tables in ``sessions.db``: the blobs
are most of the bytes and come and go with the storage limits, so the file
is created with ``auto_vacuum=INCREMENTAL`` (a setting SQLite takes only
before the first table exists) and returns the pages pruning frees to the
file system; pruning and its vacuum never hold the session database's lock
while a transcript is written; and a damaged or newer checkpoint file costs
the checkpoints, not the sessions.

Pruning (:meth:`SqliteCheckpointStore.prune`) drops the content of a
workspace's oldest runs first: the run stays listed with ``pruned_at`` and
the reason, its blobs that no live run holds are deleted.

A secret file's text (``tools.secretFiles``) is never a blob here: it is a
file of its own beside the database (:mod:`rein.checkpoints.secret_keep`),
named ``secret:...`` in the versions, and removed when pruning leaves no
live run naming it.

Writes run on a worker thread, serialised by a lock, as in
:mod:`rein.store.sqlite`; a call that waits on the disk can be abandoned
by its caller's deadline. Every SQLite error is a StoreError with the cause
(the disk is full, the lock another process holds, ...); a file deleted
while open is created again (:attr:`SqliteCheckpointStore.on_replaced`). Schema versions are forward migrations keyed by
``PRAGMA user_version``; a file written by a newer Rein, or not a database,
is refused with an error naming it, and nothing in it is touched.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar, cast

from rein.checkpoints.model import (
    CheckpointChange,
    CheckpointRun,
    FileChange,
    FileVersion,
    HunkStatus,
    ReviewStatus,
    text_hash,
)
from rein.checkpoints.secret_keep import SecretKeep, is_secret_blob
from rein.harness.errors import StoreError
from rein.store._checkpoint_schema import (
    CHECKPOINT_SCHEMA_VERSION,
    LIVE_BLOBS,
    compress,
    connect,
    decompress,
)
from rein.store._database import Database, DatabaseStore

__all__ = ["CHECKPOINT_SCHEMA_VERSION", "SqliteCheckpointStore"]

T = TypeVar("T")
log = logging.getLogger(__name__)

#: The secret texts' blob ids the live runs (of every workspace) hold.
_LIVE_SECRETS = """
    SELECT f.before_blob, f.after_blob FROM runs r
    JOIN changes c ON c.run = r.id
    JOIN file_versions f ON f.change = c.id
    WHERE r.pruned_at IS NULL
      AND (f.before_blob LIKE 'secret:%' OR f.after_blob LIKE 'secret:%')
"""


def _version(
    state: str, blob: str | None, reason: str, mode: int | None, link: str | None
) -> FileVersion:
    return FileVersion.from_json(
        {"state": state, "blob": blob or None, "reason": reason, "mode": mode, "link": link}
    )


class SqliteCheckpointStore(DatabaseStore):
    """Checkpoints in ``storage/checkpoints.db``. Use :meth:`open`."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self._file = Database(
            path,
            connection,
            kind="checkpoint",
            reopen=lambda: connect(path.parent),
            abandon_on_cancel=True,
        )
        #: Secret files' texts, beside the database, never in it.
        self.secrets = SecretKeep(path.parent / "checkpoint-secrets")

    # ------------------------------------------------------------------ open

    @classmethod
    def open(cls, storage: str | os.PathLike[str]) -> SqliteCheckpointStore:
        """Open (or create) ``storage/checkpoints.db``. StoreError names the
        file and what is wrong; the file is left as it was."""
        return cls(*connect(storage))

    def close(self) -> None:
        self._file.close()

    # ------------------------------------------------------------ threading

    async def _call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the worker thread. sqlite3 errors become StoreError
        with the cause; a caller's deadline abandons the wait (the write
        finishes alone)."""
        return await self._file.call(fn)

    # ----------------------------------------------------------------- blobs

    async def put_text(self, text: str) -> str:
        blob = text_hash(text)

        def write() -> None:
            if self._db.execute("SELECT 1 FROM blobs WHERE hash=?", (blob,)).fetchone():
                return
            data = compress(text)
            self._db.execute(
                "INSERT INTO blobs (hash, data, size) VALUES (?, ?, ?)", (blob, data, len(data))
            )

        await self._call(write)
        return blob

    async def put_secret(self, text: str) -> str:
        def write() -> str:
            try:
                return self.secrets.put(text)
            except OSError as exc:
                raise StoreError(
                    f"cannot keep a secret file's text in {self.secrets.folder}: {exc}"
                ) from exc

        return await self._call(write)

    async def get_text(self, blob: str) -> str | None:
        if is_secret_blob(blob):
            return await self._call(lambda: self.secrets.get(blob))

        def read() -> bytes | None:
            row = self._db.execute("SELECT data FROM blobs WHERE hash=?", (blob,)).fetchone()
            return None if row is None else cast(bytes, row[0])

        data = await self._call(read)
        return None if data is None else decompress(data)

    # ------------------------------------------------------------------ runs

    async def begin_run(self, run: CheckpointRun) -> None:
        def write() -> None:
            self._db.execute(
                "INSERT INTO runs (session_id, run_id, workspace, kind, title, started_at, "
                "restored_run, restored_turn) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(session_id, run_id) DO NOTHING",
                (
                    run.session_id,
                    run.run_id,
                    run.workspace,
                    run.kind,
                    run.title,
                    run.started_at,
                    run.restored_run,
                    run.restored_turn,
                ),
            )

        await self._call(write)

    async def record(self, change: CheckpointChange) -> None:
        def write() -> None:
            row = self._db.execute(
                "SELECT id FROM runs WHERE session_id=? AND run_id=?",
                (change.session_id, change.run_id),
            ).fetchone()
            if row is None:
                raise StoreError(f"checkpoint run {change.run_id} was not begun")
            self._db.execute("BEGIN")
            cursor = self._db.execute(
                "INSERT INTO changes (run, turn, generation, origin, at) VALUES (?, ?, ?, ?, ?)",
                (row[0], change.turn, change.generation, change.origin, change.at),
            )
            self._db.executemany(
                "INSERT INTO file_versions (change, idx, path, before_state, before_blob, "
                "before_reason, after_state, after_blob, after_reason, renamed_from, "
                "before_mode, before_link, after_mode, after_link) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        cursor.lastrowid,
                        i,
                        f.path,
                        f.before.state,
                        f.before.blob,
                        f.before.reason,
                        f.after.state,
                        f.after.blob,
                        f.after.reason,
                        f.renamed_from,
                        f.before.mode,
                        f.before.link,
                        f.after.mode,
                        f.after.link,
                    )
                    for i, f in enumerate(change.files)
                ],
            )
            self._db.execute("COMMIT")

        await self._call(write)

    def _run(self, run: int) -> CheckpointRun:
        [found] = self._runs_where("id=?", (run,))
        return found

    def _runs_where(self, where: str, args: Iterable[Any]) -> list[CheckpointRun]:
        rows = self._db.execute(
            "SELECT id, session_id, run_id, workspace, kind, title, started_at, pruned_at, "
            f"pruned_reason, restored_run, restored_turn FROM runs WHERE {where} "
            "ORDER BY started_at, id",
            tuple(args),
        ).fetchall()
        own = self._own_bytes([row[0] for row in rows])
        return [
            CheckpointRun(
                session_id=row[1],
                run_id=row[2],
                workspace=row[3],
                kind=row[4],
                title=row[5],
                started_at=row[6],
                bytes=own.get(row[0], 0),
                pruned_at=row[7],
                pruned_reason=row[8],
                restored_run=row[9],
                restored_turn=row[10],
            )
            for row in rows
        ]

    def _own_bytes(self, run_ids: list[int]) -> dict[int, int]:
        """Per run: the stored bytes of the blobs only it holds (live runs)."""
        if not run_ids:
            return {}
        rows = self._db.execute(
            f"SELECT run, hash, size FROM ({LIVE_BLOBS}) WHERE hash IN "
            f"(SELECT hash FROM ({LIVE_BLOBS}) GROUP BY hash HAVING count(DISTINCT run) = 1)"
        ).fetchall()
        wanted = set(run_ids)
        out: dict[int, int] = {}
        for run, _, size in rows:
            if run in wanted:
                out[run] = out.get(run, 0) + int(size)
        return out

    def _run_own_bytes(self, run: int, workspace: str | None = None) -> int:
        """The stored bytes of the blobs ``run`` holds and no other live run
        does (of ``workspace``, when given)."""
        other = "r2.pruned_at IS NULL AND r2.id != :run" + (
            " AND r2.workspace = :workspace" if workspace is not None else ""
        )
        row = self._db.execute(
            "SELECT COALESCE(SUM(b.size), 0) FROM blobs b WHERE b.hash IN ("
            "  SELECT f.before_blob FROM file_versions f JOIN changes c ON c.id = f.change"
            "  WHERE c.run = :run AND f.before_blob IS NOT NULL"
            "  UNION SELECT f.after_blob FROM file_versions f JOIN changes c ON c.id = f.change"
            "  WHERE c.run = :run AND f.after_blob IS NOT NULL)"
            " AND NOT EXISTS (SELECT 1 FROM file_versions f2 JOIN changes c2 ON c2.id = f2.change"
            f"  JOIN runs r2 ON r2.id = c2.run WHERE f2.before_blob = b.hash AND {other})"
            " AND NOT EXISTS (SELECT 1 FROM file_versions f2 JOIN changes c2 ON c2.id = f2.change"
            f"  JOIN runs r2 ON r2.id = c2.run WHERE f2.after_blob = b.hash AND {other})",
            {"run": run, "workspace": workspace},
        ).fetchone()
        return int(row[0])

    async def runs(self, session_id: str) -> list[CheckpointRun]:
        return await self._call(lambda: self._runs_where("session_id=?", (session_id,)))

    async def changes(self, session_id: str, run_id: str | None = None) -> list[CheckpointChange]:
        def read() -> list[CheckpointChange]:
            where, args = "r.session_id=?", [session_id]
            if run_id is not None:
                where += " AND r.run_id=?"
                args.append(run_id)
            rows = self._db.execute(
                "SELECT c.id, r.session_id, r.run_id, c.turn, c.generation, c.origin, c.at, "
                "f.path, f.before_state, f.before_blob, f.before_reason, f.after_state, "
                "f.after_blob, f.after_reason, f.renamed_from, "
                "f.before_mode, f.before_link, f.after_mode, f.after_link "
                "FROM changes c JOIN runs r ON r.id = c.run "
                "JOIN file_versions f ON f.change = c.id "
                f"WHERE {where} ORDER BY c.generation, c.at, c.id, f.idx",
                args,
            ).fetchall()
            changes: dict[int, tuple[tuple[Any, ...], list[FileChange]]] = {}
            for row in rows:
                files = changes.setdefault(row[0], (row, []))[1]
                files.append(
                    FileChange(
                        row[7],
                        _version(row[8], row[9], row[10], row[15], row[16]),
                        _version(row[11], row[12], row[13], row[17], row[18]),
                        row[14],
                    )
                )
            return [
                CheckpointChange(
                    session_id=head[1],
                    run_id=head[2],
                    turn=head[3],
                    generation=head[4],
                    origin=head[5],
                    files=tuple(files),
                    at=head[6],
                )
                for head, files in changes.values()
            ]

        return await self._call(read)

    # --------------------------------------------------------------- reviews

    async def set_review(
        self, session_id: str, run_id: str, path: str, status: ReviewStatus
    ) -> None:
        def write() -> None:
            self._db.execute(
                "INSERT INTO reviews (session_id, run_id, path, status) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(session_id, run_id, path) DO UPDATE SET status=excluded.status",
                (session_id, run_id, path, status),
            )

        await self._call(write)

    async def reviews(self, session_id: str) -> dict[tuple[str, str], ReviewStatus]:
        def read() -> dict[tuple[str, str], ReviewStatus]:
            rows = self._db.execute(
                "SELECT run_id, path, status FROM reviews WHERE session_id=?", (session_id,)
            ).fetchall()
            return {(row[0], row[1]): row[2] for row in rows}

        return await self._call(read)

    async def set_hunk_review(
        self, session_id: str, run_id: str, path: str, hunk: int, status: HunkStatus
    ) -> None:
        def write() -> None:
            self._db.execute(
                "INSERT INTO hunk_reviews (session_id, run_id, path, hunk, status) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(session_id, run_id, path, hunk) "
                "DO UPDATE SET status=excluded.status",
                (session_id, run_id, path, hunk, status),
            )

        await self._call(write)

    async def hunk_reviews(self, session_id: str) -> dict[tuple[str, str, int], HunkStatus]:
        def read() -> dict[tuple[str, str, int], HunkStatus]:
            rows = self._db.execute(
                "SELECT run_id, path, hunk, status FROM hunk_reviews WHERE session_id=?",
                (session_id,),
            ).fetchall()
            return {(row[0], row[1], int(row[2])): row[3] for row in rows}

        return await self._call(read)

    # ----------------------------------------------------------- the limits

    def _size_locked(self, where: str = "", args: tuple[Any, ...] = ()) -> int:
        row = self._db.execute(
            f"SELECT COALESCE(SUM(size), 0) FROM (SELECT DISTINCT hash, size FROM ({LIVE_BLOBS}) "
            f"{where})",
            args,
        ).fetchone()
        return int(row[0])

    async def size(self, workspace: str | None = None) -> int:
        if workspace is None:
            return await self._call(self._size_locked)
        return await self._call(lambda: self._size_locked("WHERE workspace=?", (workspace,)))

    async def session_size(self, session_id: str) -> int:
        return await self._call(lambda: self._size_locked("WHERE session_id=?", (session_id,)))

    async def prune(
        self, workspace: str, *, max_bytes: int, max_age_s: float, now: float
    ) -> list[CheckpointRun]:
        def write() -> list[CheckpointRun]:
            live = self._db.execute(
                "SELECT id, started_at FROM runs WHERE workspace=? AND pruned_at IS NULL "
                "ORDER BY started_at, id",
                (workspace,),
            ).fetchall()
            dropped: list[tuple[int, int]] = []
            # One transaction: the runs are marked, then the blobs no live run
            # holds go in one statement. The size is measured once and each
            # dropped run's share of it taken off.
            self._db.execute("BEGIN")
            size = self._size_locked("WHERE workspace=?", (workspace,))
            for run, started_at in live:
                too_old = max_age_s > 0 and now - started_at > max_age_s
                if not too_old and size <= max_bytes:
                    break
                reason = (
                    f"older than {max_age_s / 86400:g} days (checkpoints.maxAgeDays)"
                    if too_old
                    else f"over the size limit of {max_bytes / 1048576:g} MB (checkpoints.maxMb)"
                )
                freed = self._run_own_bytes(run)
                size -= self._run_own_bytes(run, workspace)
                self._db.execute(
                    "UPDATE runs SET pruned_at=?, pruned_reason=? WHERE id=?", (now, reason, run)
                )
                dropped.append((run, freed))
            if dropped:
                self._db.execute(
                    f"DELETE FROM blobs WHERE hash NOT IN (SELECT hash FROM ({LIVE_BLOBS}))"
                )
            self._db.execute("COMMIT")
            if not dropped:
                return []
            try:
                self.secrets.keep_only(
                    blob
                    for row in self._db.execute(_LIVE_SECRETS).fetchall()
                    for blob in row
                    if is_secret_blob(blob)
                )
            except OSError:
                log.warning("could not remove pruned secret texts", exc_info=True)
            self._db.execute("PRAGMA incremental_vacuum")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return [replace(self._run(run), bytes=freed) for run, freed in dropped]

        return await self._call(write)
