"""A session as the session database holds it, as values: its row
(:class:`SessionRecord`, as ``rein sessions`` lists it) and the whole of it
as the process holds it (:class:`SessionImage`), and the images written
into a database created again after it was deleted or replaced while open
(:func:`write_images`, :meth:`rein.store.sqlite.SqliteStore.restore`)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rein.harness.messages import Message
from rein.process.identity import this_process

__all__ = ["SessionImage", "SessionRecord", "write_images"]


@dataclass(frozen=True, slots=True)
class SessionRecord:
    id: str
    title: str
    status: str
    mode: str
    origin: str
    created_at: float
    updated_at: float
    turns: int
    usage: dict[str, Any]
    #: The workspace folder (absolute; "" for a session stored before it was kept).
    workspace: str = ""


@dataclass(frozen=True, slots=True)
class SessionImage:
    """A session as the process holds it, to write again into a database
    that was deleted under it (:meth:`~rein.store.sqlite.SqliteStore.restore`):
    its row, its memories' transcripts and their states."""

    record: SessionRecord
    memories: dict[str, list[Message]]
    states: dict[str, dict[str, Any]]


def write_images(
    db: sqlite3.Connection,
    images: Sequence[SessionImage],
    queued: Callable[[], set[str]],
    next_seq: dict[tuple[str, str], int],
) -> None:
    """Write ``images`` into ``db`` in one transaction; ``queued`` gives the
    sessions with messages queued and not committed (asked at the end, just
    before the commit, so a message queued during the write counts), each
    given a row if it has no image (so they can be committed); ``next_seq`` (each memory's
    next message number) is raised past the messages written."""
    db.execute("BEGIN")
    for image in images:
        r = image.record
        db.execute(
            "INSERT OR REPLACE INTO sessions (id, title, status, mode, origin, "
            "created_at, updated_at, turns, usage, workspace, owner) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                r.id,
                r.title,
                r.status,
                r.mode,
                r.origin,
                r.created_at,
                r.updated_at,
                r.turns,
                json.dumps(r.usage),
                r.workspace,
                this_process() if r.status == "running" else "",
            ),
        )
        now = time.time()
        for key, messages in image.memories.items():
            db.execute("DELETE FROM messages WHERE session_id=? AND memory_key=?", (r.id, key))
            db.executemany(
                "INSERT INTO messages (session_id, memory_key, seq, body, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [(r.id, key, i, m.model_dump_json(), now) for i, m in enumerate(messages)],
            )
            seq = next_seq.get((r.id, key), 0)
            next_seq[(r.id, key)] = max(seq, len(messages))
        for key, state in image.states.items():
            db.execute(
                "INSERT OR REPLACE INTO memories (session_id, memory_key, state) VALUES (?, ?, ?)",
                (r.id, key, json.dumps(state)),
            )
    now = time.time()
    for session_id in queued() - {i.record.id for i in images}:
        db.execute(
            "INSERT OR IGNORE INTO sessions (id, created_at, updated_at) VALUES (?, ?, ?)",
            (session_id, now, now),
        )
    db.execute("COMMIT")
