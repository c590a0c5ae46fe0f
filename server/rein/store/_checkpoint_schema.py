"""The schema of ``checkpoints.db`` and how it is opened (the SQLite
checkpoint store's private part; :mod:`rein.store.checkpoints` is the store).
"""

from __future__ import annotations

import os
import sqlite3
import zlib
from pathlib import Path

from rein.store._sqlite_open import open_database

__all__ = ["CHECKPOINT_SCHEMA_VERSION", "LIVE_BLOBS", "compress", "connect", "decompress"]

CHECKPOINT_SCHEMA_VERSION = 2

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
    # Each version's permission bits and symbolic link (rein.checkpoints.file_meta);
    # NULL in the rows of version 1: not known.
    2: """
        ALTER TABLE file_versions ADD COLUMN before_mode INTEGER;
        ALTER TABLE file_versions ADD COLUMN before_link TEXT;
        ALTER TABLE file_versions ADD COLUMN after_mode INTEGER;
        ALTER TABLE file_versions ADD COLUMN after_link TEXT;
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
    return open_database(
        storage,
        filename="checkpoints.db",
        kind="checkpoint",
        schema_version=CHECKPOINT_SCHEMA_VERSION,
        migrations=_MIGRATIONS,
        probe_table="runs",
        # auto_vacuum only takes effect before the first table is created.
        fresh_pragmas=("auto_vacuum=INCREMENTAL",),
        pragmas=(f"journal_size_limit={WAL_LIMIT}",),
    )
