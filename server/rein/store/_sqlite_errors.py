"""What a SQLite error means for the person: every ``sqlite3.Error`` of
either store becomes a :class:`~rein.harness.errors.StoreError` naming the
file and the cause ("the disk is full", "locked by another process (pid N:
rein serve)"), with the cause in a word as ``reason``.

Who holds a lock is read from the system's lock table (``/proc/locks`` on
Linux): SQLite locks its files with POSIX advisory locks, and the writer of
a WAL database holds the write lock of its ``-shm`` file. Elsewhere the
message says another process holds it without naming it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from rein.harness.errors import StoreError

__all__ = ["LOCK_WAIT_S", "lock_holders", "store_error"]

#: How long a store call waits for another process's lock before it gives
#: up with a StoreError (SQLite's busy timeout). Rein's own transactions
#: last milliseconds; a lock held longer is another program's.
LOCK_WAIT_S = 2.0

# SQLite's primary result codes (the low byte of an extended code).
_BUSY, _LOCKED, _NOMEM, _READONLY, _IOERR, _CORRUPT = 5, 6, 7, 8, 10, 11
_FULL, _CANTOPEN, _NOTADB = 13, 14, 26
_IOERR_WRITE = _IOERR | (3 << 8)

#: The most of a holder's command line shown.
_COMMAND_CHARS = 120


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    words = [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]
    # "python -m rein serve ..." and ".../bin/rein serve ..." both read "rein serve ...".
    for i, word in enumerate(words):
        if word == "rein" or word.endswith("/rein"):
            words = ["rein", *words[i + 1 :]]
            break
    text = " ".join(words)
    return text if len(text) <= _COMMAND_CHARS else text[: _COMMAND_CHARS - 1] + "…"


def lock_holders(database: Path, *, locks: Path = Path("/proc/locks")) -> list[tuple[int, str]]:
    """The other processes holding a write lock on ``database`` (or its
    ``-wal``/``-shm`` files): (pid, command line), by pid. Empty when the
    system does not say (no ``/proc/locks``) or nobody holds one."""
    files: set[tuple[int, int, int]] = set()
    for suffix in ("", "-wal", "-shm"):
        try:
            st = os.stat(f"{database}{suffix}")
        except OSError:
            continue
        files.add((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))
    try:
        table = locks.read_text()
    except OSError:
        return []
    pids: set[int] = set()
    for line in table.splitlines():
        fields = line.split()
        # "1: POSIX  ADVISORY  WRITE 8306 fe:00:2155661 120 120"; a waiter's line has "->".
        if len(fields) < 6 or fields[1] == "->" or fields[3] != "WRITE":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            key = (int(major, 16), int(minor, 16), int(inode))
            pid = int(fields[4])
        except ValueError:
            continue
        if key in files and pid != os.getpid():
            pids.add(pid)
    return [(pid, _command(pid)) for pid in sorted(pids)]


def _who(database: Path) -> str:
    holders = lock_holders(database)
    if not holders:
        return "by another process"
    named = ", ".join(f"pid {pid}" + (f": {cmd}" if cmd else "") for pid, cmd in holders)
    return f"by another process ({named})"


def store_error(exc: sqlite3.Error, *, kind: str, path: Path, doing: str = "") -> StoreError:
    """``exc`` as the person should read it: which database (``kind``:
    "session", "checkpoint"), what Rein was doing, and the cause."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc)
    if primary in (_BUSY, _LOCKED) or "database is locked" in text:
        reason = "locked"
        cause = (
            f"the database is locked {_who(path)}; Rein waited {LOCK_WAIT_S:g} s for it "
            "(end that process or wait for it to finish)"
        )
    elif primary == _FULL or "disk is full" in text:
        reason, cause = "disk_full", "the disk is full (SQLite: database or disk is full)"
    elif primary == _READONLY:
        reason, cause = "read_only", f"the database cannot be written ({text})"
    elif code == _IOERR_WRITE:
        reason = "io"
        cause = (
            f"a write to the disk failed: the disk may be full or the file at a size limit ({text})"
        )
    elif primary == _IOERR:
        reason, cause = "io", f"a disk I/O error ({text})"
    elif primary in (_CORRUPT, _NOTADB):
        reason, cause = "corrupt", f"the file is corrupt or not a database ({text})"
    elif primary == _CANTOPEN:
        reason, cause = "missing", f"the file cannot be opened ({text})"
    elif primary == _NOMEM:
        reason, cause = "memory", "out of memory"
    else:
        reason, cause = "", text
    where = f" ({doing})" if doing else ""
    return StoreError(f"the {kind} database {path}{where}: {cause}", reason)
