"""A workspace's approval rules in the session store: kept across opens,
per workspace, one row per rule, removable; an older database migrates."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from rein.store import SCHEMA_VERSION, SqliteStore
from rein.store.sqlite import _MIGRATIONS


async def test_rules_are_kept_per_workspace_across_opens(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    first, _ = await store.approval_rules.add("rule_a", "/ws/one", "command", "npm test")
    # The same rule again keeps the first one's id.
    again, _ = await store.approval_rules.add("rule_b", "/ws/one", "command", "npm test")
    await store.approval_rules.add("rule_c", "/ws/two", "write", "src/**")
    assert first == again == "rule_a"
    store.close()

    store = SqliteStore.open(tmp_path)
    assert [r[:3] for r in await store.approval_rules.of_workspace("/ws/one")] == [
        ("rule_a", "command", "npm test")
    ]
    assert [r[:3] for r in await store.approval_rules.of_workspace("/ws/two")] == [
        ("rule_c", "write", "src/**")
    ]
    # Another workspace's rule is not removed through this one.
    assert not await store.approval_rules.remove("/ws/one", "rule_c")
    assert await store.approval_rules.remove("/ws/one", "rule_a")
    assert await store.approval_rules.of_workspace("/ws/one") == []
    store.close()


async def test_a_version_3_database_gains_the_rules_table(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "sessions.db")
    for version in (1, 2, 3):
        db.executescript(_MIGRATIONS[version])
    db.execute("PRAGMA user_version=3")
    db.commit()
    db.close()
    store = SqliteStore.open(tmp_path)
    assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6
    await store.approval_rules.add("rule_x", "/ws", "mcp", "time")
    assert [r[0] for r in await store.approval_rules.of_workspace("/ws")] == ["rule_x"]
    store.close()
