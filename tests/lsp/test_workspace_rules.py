"""The workspace's approval rules behind the language server: in the
session store when there is one, in memory while there is none (the
person was told the store is unusable)."""

from __future__ import annotations

from pathlib import Path

from rein.harness.ports import ApprovalRule
from rein.lsp.approval_registry import ApprovalRegistry, WorkspaceRules
from rein.store import SqliteStore


async def test_rules_go_to_the_store_of_their_workspace(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    rules = WorkspaceRules("/ws", lambda: store)
    kept = await rules.add("command", "npm test")
    assert [r[0] for r in await store.approval_rules.of_workspace("/ws")] == [kept.id]
    assert await store.approval_rules.of_workspace("/other") == []
    assert [r.pattern for r in await rules.list()] == ["npm test"]
    assert await rules.remove(kept.id)
    assert await rules.list() == []
    store.close()


async def test_without_a_store_rules_are_kept_in_memory_and_stay_after_it_opens(
    tmp_path: Path,
) -> None:
    holder: list[SqliteStore] = []
    rules = WorkspaceRules("/ws", lambda: holder[0] if holder else None)
    early = await rules.add("write", "src/**")
    holder.append(SqliteStore.open(tmp_path))
    late = await rules.add("mcp", "time")
    assert [(r.pattern, r.scope) for r in await rules.list()] == [
        ("time", "workspace"),
        ("src/**", "workspace"),
    ]
    assert await rules.remove(early.id) and await rules.remove(late.id)
    assert await rules.list() == []
    holder[0].close()


async def test_the_registry_lists_and_revokes_session_and_workspace_rules() -> None:
    registry = ApprovalRegistry(WorkspaceRules("/ws", lambda: None))
    await registry.book("ses_a").remember("session", [ApprovalRule("command", "make")])
    await registry.book("ses_b").remember("workspace", [ApprovalRule("command", "ls")])
    every = await registry.rules(None)
    assert sorted((r["scope"], r["pattern"], r.get("sessionId")) for r in every) == [
        ("session", "make", "ses_a"),
        ("workspace", "ls", None),
    ]
    assert [r["pattern"] for r in await registry.rules("ses_b")] == ["ls"]
    session_rule = next(r for r in every if r["scope"] == "session")
    assert await registry.revoke(session_rule["id"])
    assert not await registry.revoke(session_rule["id"])
    # ses_b's book sees the workspace rule ses_b kept; so does a new session.
    assert await registry.book("ses_c").uncovered("command", "ls") is None
