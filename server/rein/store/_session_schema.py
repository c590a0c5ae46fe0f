"""The schema of ``sessions.db``: its version and the forward migrations
that reach it (the SQLite session store's private part;
:mod:`rein.store.sqlite` is the store)."""

from __future__ import annotations

__all__ = ["SCHEMA_VERSION"]

SCHEMA_VERSION = 6

_MIGRATIONS: dict[int, str] = {
    1: """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'idle',
            mode TEXT NOT NULL DEFAULT 'agent',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE messages (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            memory_key TEXT NOT NULL,
            seq INTEGER NOT NULL,
            body TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (session_id, memory_key, seq)
        );
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            status TEXT NOT NULL,
            reason TEXT,
            turns INTEGER NOT NULL DEFAULT 0,
            usage TEXT NOT NULL DEFAULT '{}',
            started_at REAL NOT NULL,
            ended_at REAL
        );
    """,
    2: """
        ALTER TABLE sessions ADD COLUMN origin TEXT NOT NULL DEFAULT 'chat';
        ALTER TABLE sessions ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE sessions ADD COLUMN usage TEXT NOT NULL DEFAULT '{}';
        CREATE TABLE memories (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            memory_key TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (session_id, memory_key)
        );
    """,
    # The workspace folder a session works in: checkpoint limits are per
    # workspace, and `rein undo` finds the workspace's latest session.
    3: """
        ALTER TABLE sessions ADD COLUMN workspace TEXT NOT NULL DEFAULT '';
    """,
    # Approval rules the person kept for a workspace ("always allow").
    4: """
        CREATE TABLE approval_rules (
            id TEXT PRIMARY KEY,
            workspace TEXT NOT NULL,
            kind TEXT NOT NULL,
            pattern TEXT NOT NULL,
            created_at REAL NOT NULL,
            UNIQUE (workspace, kind, pattern)
        );
    """,
    # The process a "running" session runs in ("PID:START",
    # rein.process.identity): a start marks "interrupted" only the running
    # sessions whose process is gone, not another live run's.
    5: """
        ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
    """,
    # The retries of a run's model requests (its model_retry events, JSON):
    # a stored session says that a run waited on a failing provider.
    6: """
        ALTER TABLE runs ADD COLUMN retries TEXT NOT NULL DEFAULT '[]';
    """,
}
