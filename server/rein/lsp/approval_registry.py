"""Approval rules over LSP: ``rein/approvals`` lists the rules the person
kept ("always allow"), ``rein/approvals/revoke`` drops one (their
handlers are in :mod:`rein.lsp.handlers.approvals`).

:class:`ApprovalRegistry` holds one :class:`~rein.tools.approval_rules.RuleBook`
per session (its session rules live as long as the server) over the
workspace's rules, which are kept in the session store (``sessions.db``),
keyed by the workspace folder. Without a store (it could not be opened; the
person was told) the workspace's rules are kept in memory, like its sessions.

Imported when the server is made: it imports the rest of Rein only when a
handler or a session first needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rein.harness.ports import ApprovalRuleKind
    from rein.store import SqliteStore
    from rein.tools.approval_rules import MemoryRules, RuleBook, StoredRule

__all__ = ["ApprovalRegistry", "ApprovalsServer", "WorkspaceRules"]


class ApprovalsServer(Protocol):
    """What the approval handlers use of the server."""

    async def ready(self) -> None: ...
    async def open_store(self) -> SqliteStore | None: ...
    @property
    def approvals(self) -> ApprovalRegistry: ...


class WorkspaceRules:
    """A workspace's rules in the session store (a ``RuleStore``); in memory
    while there is no store."""

    def __init__(self, workspace: str, store: Callable[[], SqliteStore | None]) -> None:
        from rein.tools.approval_rules import MemoryRules

        self.workspace = workspace
        self._store = store
        self._memory: MemoryRules = MemoryRules("workspace")

    async def list(self) -> list[StoredRule]:
        from rein.tools.approval_rules import StoredRule

        # Rules kept while there was no store stay in memory (and apply).
        kept = await self._memory.list()
        store = self._store()
        if store is None:
            return kept
        rows = await store.approval_rules.of_workspace(self.workspace)
        return [
            StoredRule(rule_id, "workspace", _kind(kind), pattern, created)
            for rule_id, kind, pattern, created in rows
        ] + kept

    async def add(self, kind: ApprovalRuleKind, pattern: str) -> StoredRule:
        from rein.tools.approval_rules import StoredRule, new_rule_id

        store = self._store()
        if store is None:
            return await self._memory.add(kind, pattern)
        rule_id, created = await store.approval_rules.add(
            new_rule_id(), self.workspace, kind, pattern
        )
        return StoredRule(rule_id, "workspace", kind, pattern, created)

    async def remove(self, rule_id: str) -> bool:
        if await self._memory.remove(rule_id):
            return True
        store = self._store()
        return store is not None and await store.approval_rules.remove(self.workspace, rule_id)


def _kind(value: str) -> ApprovalRuleKind:
    if value == "command":
        return "command"
    if value == "write":
        return "write"
    return "mcp"


class ApprovalRegistry:
    """The rule books of a server's sessions over one workspace's rules."""

    def __init__(self, workspace: WorkspaceRules) -> None:
        self.workspace = workspace
        self._books: dict[str, RuleBook] = {}

    def book(self, session_id: str) -> RuleBook:
        """The session's rule book (made on first use, kept for the server's
        life: an evicted session gets its rules back when it is loaded)."""
        from rein.tools.approval_rules import RuleBook

        found = self._books.get(session_id)
        if found is None:
            found = self._books[session_id] = RuleBook(
                self.workspace, root=self.workspace.workspace
            )
        return found

    async def rules(self, session_id: str | None) -> list[dict[str, Any]]:
        """The workspace's rules and the session's (every session's when
        ``session_id`` is None), each with its ``sessionId`` when it is a
        session's."""
        out = [r.to_json() for r in await self.workspace.list()]
        for owner, book in self._books.items():
            if session_id is None or owner == session_id:
                out += [{**r.to_json(), "sessionId": owner} for r in await book.session.list()]
        return out

    async def revoke(self, rule_id: str) -> bool:
        for book in self._books.values():
            if await book.session.remove(rule_id):
                return True
        return await self.workspace.remove(rule_id)
