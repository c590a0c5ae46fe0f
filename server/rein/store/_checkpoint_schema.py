"""The schema of ``checkpoints.db`` and how it is opened (the SQLite
checkpoint store's private part; :mod:`rein.store.checkpoints` is the store).
"""

from __future__ import annotations

import os
import sqlite3
import zlib
from pathlib import Path

from rein.harness.errors import StoreError

__all__ = ["CHECKPOINT_SCHEMA_VERSION", "LIVE_BLOBS", "compress", "connect", "decompress"]

CHECKPOINT_SCHEMA_VERSION = 1

_MIGRATIONS: dict[int, str] = {
    1: """
        CREATE TABLE blobs (
            hash TEXT PRIMARY KEY,
            data BLOB NOT NULL,
            size INTEGER NOT NULL
        );
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            run_id TEXT NOT NULL,
            workspace TEXT NOT NULL,
            kind TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            started_at REAL NOT NULL,
            pruned_at REAL,
            pruned_reason TEXT NOT NULL DEFAULT '',
            restored_run TEXT,
            restored_turn INTEGER,
            UNIQUE (session_id, run_id)
        );
        CREATE INDEX runs_workspace ON runs (workspace, started_at);
        CREATE TABLE changes (
            id INTEGER PRIMARY KEY,
            run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            turn INTEGER NOT NULL,
            generation INTEGER NOT NULL,
            origin TEXT NOT NULL,
            at REAL NOT NULL
        );
        CREATE INDEX changes_run ON changes (run);
        CREATE TABLE file_versions (
            change INTEGER NOT NULL REFERENCES changes(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            path TEXT NOT NULL,
            before_state TEXT NOT NULL,
            before_blob TEXT,
            before_reason TEXT NOT NULL DEFAULT '',
            after_state TEXT NOT NULL,
            after_blob TEXT,
            after_reason TEXT NOT NULL DEFAULT '',
            renamed_from TEXT,
            PRIMARY KEY (change, idx)
        );
        CREATE INDEX file_versions_before ON file_versions (before_blob);
        CREATE INDEX file_versions_after ON file_versions (after_blob);
        CREATE TABLE reviews (
            session_id TEXT NOT NULL,
            run_id TEXT NOT NULL,
            path TEXT NOT NULL,
            status TEXT NOT NULL,
            PRIMARY KEY (session_id, run_id, path)
        );
        CREATE TABLE hunk_reviews (
            session_id TEXT NOT NULL,
            run_id TEXT NOT NULL,
            path TEXT NOT NULL,
            hunk INTEGER NOT NULL,
            status TEXT NOT NULL,
            PRIMARY KEY (session_id, run_id, path, hunk)
        );
    """,
}

#: The write-ahead log is cut back to this after a checkpoint (bytes), so it
#: does not keep the size of the largest burst of writes.
WAL_LIMIT = 4 * 1024 * 1024

#: The blobs a live (not pruned) run holds, with the run's workspace and session.
LIVE_BLOBS = """
    SELECT DISTINCT r.workspace AS workspace, r.session_id AS session_id, r.id AS run,
           b.hash AS hash, b.size AS size
    FROM runs r
    JOIN changes c ON c.run = r.id
    JOIN file_versions f ON f.change = c.id
    JOIN blobs b ON b.hash = f.before_blob OR b.hash = f.after_blob
    WHERE r.pruned_at IS NULL
"""


def compress(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 6)


def decompress(data: bytes) -> str:
    return zlib.decompress(data).decode("utf-8", "surrogatepass")


def connect(storage: str | os.PathLike[str]) -> tuple[Path, sqlite3.Connection]:
    """Open (or create) ``storage/checkpoints.db`` and bring its schema up
    to date. StoreError names the file and what is wrong; the file is left
    as it was."""
    folder = Path(storage).expanduser()
    path = folder / "checkpoints.db"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the checkpoint folder {folder}: {exc.strerror or exc}"
        ) from exc
    if path.exists() and not os.access(path, os.W_OK):
        raise StoreError(f"the checkpoint database {path} is read-only")
    if not path.exists() and not os.access(folder, os.W_OK):
        raise StoreError(f"the checkpoint folder {folder} is read-only; cannot create {path.name}")
    try:
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the checkpoint database {path}: {exc}") from exc
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > CHECKPOINT_SCHEMA_VERSION:
            raise StoreError(
                f"the checkpoint database {path} was written by a newer Rein (schema "
                f"{version}; this Rein knows up to {CHECKPOINT_SCHEMA_VERSION}); it was left "
                "untouched"
            )
        if version == 0:
            # Only takes effect before the first table is created.
            db.execute("PRAGMA auto_vacuum=INCREMENTAL")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute(f"PRAGMA journal_size_limit={WAL_LIMIT}")
        for target in range(version + 1, CHECKPOINT_SCHEMA_VERSION + 1):
            db.execute("BEGIN")
            for statement in _MIGRATIONS[target].split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version={target}")
            db.execute("COMMIT")
        db.execute("SELECT count(*) FROM runs").fetchone()
    except sqlite3.DatabaseError as exc:
        db.close()
        raise StoreError(
            f"the checkpoint database {path} is corrupt or not a database ({exc}); it was "
            "left untouched"
        ) from exc
    except StoreError:
        db.close()
        raise
    return path, db
