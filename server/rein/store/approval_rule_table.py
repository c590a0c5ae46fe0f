"""A workspace's kept approval rules, in the sessions database.

The rules the person kept ("always allow" for a workspace) outlive every
session, so they are not a session's: one row per rule in the
``approval_rules`` table of ``sessions.db``, keyed by the workspace folder,
an equal rule kept once. :class:`ApprovalRuleTable` reads and writes them
through the store's open :class:`~rein.store._database.Database` (its worker
thread, lock and errors); a store has one,
:attr:`rein.store.sqlite.SqliteStore.approval_rules`. The rule books over
them are :mod:`rein.tools.approval_rules`'s.
"""

from __future__ import annotations

import time

from rein.store._database import Database

__all__ = ["ApprovalRuleTable"]


class ApprovalRuleTable:
    """The ``approval_rules`` rows of the database ``file``. Every failure is
    a StoreError naming the file and the cause, as for the sessions."""

    def __init__(self, file: Database) -> None:
        self._file = file

    async def add(self, rule_id: str, workspace: str, kind: str, pattern: str) -> tuple[str, float]:
        """Keep a workspace's rule; the id and time of the one kept (an
        equal rule kept before stays, with its id)."""

        def write() -> tuple[str, float]:
            db = self._file.connection
            db.execute(
                "INSERT INTO approval_rules (id, workspace, kind, pattern, created_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(workspace, kind, pattern) DO NOTHING",
                (rule_id, workspace, kind, pattern, time.time()),
            )
            row = db.execute(
                "SELECT id, created_at FROM approval_rules WHERE workspace=? AND kind=? "
                "AND pattern=?",
                (workspace, kind, pattern),
            ).fetchone()
            return str(row[0]), float(row[1])

        return await self._file.call(write)

    async def of_workspace(self, workspace: str) -> list[tuple[str, str, str, float]]:
        """A workspace's rules, oldest first: (id, kind, pattern, created_at)."""

        def read() -> list[tuple[str, str, str, float]]:
            rows = self._file.connection.execute(
                "SELECT id, kind, pattern, created_at FROM approval_rules WHERE workspace=? "
                "ORDER BY created_at, id",
                (workspace,),
            ).fetchall()
            return [(str(r[0]), str(r[1]), str(r[2]), float(r[3])) for r in rows]

        return await self._file.call(read)

    async def remove(self, workspace: str, rule_id: str) -> bool:
        """Drop a workspace's rule; False when it has none of that id."""

        def write() -> bool:
            cursor = self._file.connection.execute(
                "DELETE FROM approval_rules WHERE workspace=? AND id=?", (workspace, rule_id)
            )
            return cursor.rowcount > 0

        return await self._file.call(write)
