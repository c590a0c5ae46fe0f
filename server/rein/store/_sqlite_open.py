"""Opening a Rein SQLite file: create its folder, refuse what cannot be
written, migrate the schema up step by step and check the result reads.

Both stores (``sessions.db`` and ``checkpoints.db``) open through here, so
they give the same errors for the same trouble.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

from rein.harness.errors import StoreError
from rein.store._sqlite_errors import LOCK_WAIT_S, store_error

__all__ = ["FileIdentity", "file_identity", "open_database"]

#: What makes a database file the same file: (device, inode).
FileIdentity = tuple[int, int]


def file_identity(path: Path) -> FileIdentity | None:
    """The file at ``path`` now (None: there is none): a database deleted
    or replaced under an open connection has another one."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _run_script(db: sqlite3.Connection, script: str) -> None:
    """Run a migration statement by statement: executescript() would COMMIT
    the open transaction first, and a migration must be all-or-nothing."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def open_database(
    storage: str | os.PathLike[str],
    *,
    filename: str,
    kind: str,
    schema_version: int,
    migrations: Mapping[int, str],
    probe_table: str,
    pragmas: Sequence[str] = (),
    fresh_pragmas: Sequence[str] = (),
) -> tuple[Path, sqlite3.Connection]:
    """Open (or create) ``storage/filename`` and bring its schema up to
    ``schema_version``. ``kind`` names the file in errors ("the session
    database ..."); ``fresh_pragmas`` run only on a file with no schema yet
    (before the first table), ``pragmas`` on every open. StoreError names the
    file and what is wrong; the file is left as it was."""
    folder = Path(storage).expanduser()
    path = folder / filename
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the {kind} folder {folder}: {exc.strerror or exc}", "io"
        ) from exc
    if path.exists() and not os.access(path, os.W_OK):
        raise StoreError(f"the {kind} database {path} is read-only", "read_only")
    if not path.exists() and not os.access(folder, os.W_OK):
        raise StoreError(
            f"the {kind} folder {folder} is read-only; cannot create {path.name}", "read_only"
        )
    try:
        db = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=LOCK_WAIT_S
        )
    except sqlite3.Error as exc:
        raise store_error(exc, kind=kind, path=path, doing="opening it") from exc
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > schema_version:
            raise StoreError(
                f"the {kind} database {path} was written by a newer Rein (schema {version}; "
                f"this Rein knows up to {schema_version}); it was left untouched",
                "newer",
            )
        if version == 0:
            for pragma in fresh_pragmas:
                db.execute(f"PRAGMA {pragma}")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        for pragma in pragmas:
            db.execute(f"PRAGMA {pragma}")
        for target in range(version + 1, schema_version + 1):
            db.execute("BEGIN")
            _run_script(db, migrations[target])
            db.execute(f"PRAGMA user_version={target}")
            db.execute("COMMIT")
        db.execute(f"SELECT count(*) FROM {probe_table}").fetchone()
    except sqlite3.Error as exc:
        with contextlib.suppress(sqlite3.Error):
            db.close()  # an open migration is rolled back
        error = store_error(exc, kind=kind, path=path, doing="opening it")
        if error.reason == "corrupt" or (error.reason == "" and type(exc) is sqlite3.DatabaseError):
            raise StoreError(
                f"the {kind} database {path} is corrupt or not a database ({exc}); it was left "
                "untouched",
                "corrupt",
            ) from exc
        raise error from exc
    except StoreError:
        db.close()
        raise
    return path, db
