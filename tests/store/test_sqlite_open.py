"""Both SQLite files (``sessions.db`` and ``checkpoints.db``) open through
:mod:`rein.store._sqlite_open`: the same refusals for a newer or damaged
file, each left as it was, and each file's own pragmas."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rein.harness.errors import StoreError
from rein.store import SCHEMA_VERSION, SqliteStore
from rein.store._checkpoint_schema import WAL_LIMIT
from rein.store.checkpoints import CHECKPOINT_SCHEMA_VERSION, SqliteCheckpointStore

#: (file name, newest schema this Rein knows, how the store opens a folder)
STORES: dict[str, tuple[str, int, Callable[[Path], Any]]] = {
    "sessions": ("sessions.db", SCHEMA_VERSION, SqliteStore.open),
    "checkpoints": ("checkpoints.db", CHECKPOINT_SCHEMA_VERSION, SqliteCheckpointStore.open),
}


@pytest.mark.parametrize("which", sorted(STORES))
def test_a_newer_schema_is_refused_and_left_untouched(tmp_path: Path, which: str) -> None:
    name, version, open_store = STORES[which]
    path = tmp_path / name
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE future (x)")
    db.execute(f"PRAGMA user_version={version + 1}")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError) as info:
        open_store(tmp_path)
    assert str(path) in str(info.value) and "newer Rein" in str(info.value)
    assert path.read_bytes() == before


@pytest.mark.parametrize("which", sorted(STORES))
def test_a_corrupt_file_is_refused_with_its_name_and_left_untouched(
    tmp_path: Path, which: str
) -> None:
    name, _, open_store = STORES[which]
    path = tmp_path / name
    garbage = b"this is not a database\x00" * 100
    path.write_bytes(garbage)
    with pytest.raises(StoreError, match="corrupt or not a database") as info:
        open_store(tmp_path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == garbage


def _pragma(path: Path, name: str) -> Any:
    db = sqlite3.connect(path)
    try:
        return db.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        db.close()


def test_checkpoints_db_vacuums_incrementally_and_bounds_its_wal(tmp_path: Path) -> None:
    store = SqliteCheckpointStore.open(tmp_path)
    assert store._db.execute("PRAGMA journal_size_limit").fetchone()[0] == WAL_LIMIT
    assert store._db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    store.close()
    assert _pragma(tmp_path / "checkpoints.db", "auto_vacuum") == 2  # INCREMENTAL
    assert _pragma(tmp_path / "checkpoints.db", "journal_mode") == "wal"


def test_sessions_db_keeps_the_default_vacuum_and_uses_wal(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    assert store._db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    store.close()
    assert _pragma(tmp_path / "sessions.db", "auto_vacuum") == 0
    assert _pragma(tmp_path / "sessions.db", "journal_mode") == "wal"
