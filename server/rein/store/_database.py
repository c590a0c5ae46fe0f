"""One open database file of a store (``sessions.db``, ``checkpoints.db``):
its calls run on a worker thread one at a time, its SQLite errors come out
as StoreError with the cause, and the file is watched for being deleted or
replaced under the open connection.

A deleted database goes on accepting writes through the connection that
still holds it, and all of them vanish when the process ends: so before
every call the file's identity (device, inode) is compared with the one
opened. When it differs the file is opened again (created empty, its
schema made) and the store's ``on_replaced`` hook writes again what the
process holds in memory, once, before that call or any other goes on.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import sqlite3
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread

from rein.harness.errors import StoreError
from rein.store._sqlite_errors import store_error
from rein.store._sqlite_open import file_identity

__all__ = ["Database", "DatabaseStore"]

log = logging.getLogger(__name__)

T = TypeVar("T")


#: Set while the ``on_replaced`` hook runs: its own calls do not wait for it.
_IN_HOOK: contextvars.ContextVar[bool] = contextvars.ContextVar("rein_store_in_hook", default=False)


class _Replaced(Exception):
    """The file was opened again: the owner's hook runs before the call.
    Control flow caught in this module, never raised to a caller, so
    outside the ReinError tree."""


class Database:
    """``connection`` open on ``path``; ``reopen`` opens (creates) the file
    again. ``kind`` names it in errors ("session"); ``abandon_on_cancel``:
    a caller's deadline abandons a call that waits on the disk (it finishes
    alone). Set :attr:`on_replaced` to write again what the file lost."""

    def __init__(
        self,
        path: Path,
        connection: sqlite3.Connection,
        *,
        kind: str,
        reopen: Callable[[], tuple[Path, sqlite3.Connection]],
        abandon_on_cancel: bool = False,
    ) -> None:
        self.path = path
        self.kind = kind
        self.connection = connection
        #: Held by every use of the connection (also outside :meth:`call`).
        self.lock = threading.Lock()
        self._reopen = reopen
        self._abandon = abandon_on_cancel
        self._limiter = anyio.CapacityLimiter(1)
        self._identity = file_identity(path)
        #: Why the file was opened again, until ``on_replaced`` has run.
        self._replaced: str | None = None
        self._rebuild = anyio.Lock()
        #: Called (once per replacement, before any other call goes on) with
        #: why the file was opened again: "was deleted", "was replaced ...".
        self.on_replaced: Callable[[str], Awaitable[None]] | None = None

    # ------------------------------------------------------------ the file

    def _check_file(self) -> None:
        """Under :attr:`lock`: open the file again if it is not the one open."""
        now = file_identity(self.path)
        if now == self._identity:
            return
        reason = "was deleted" if now is None else "was replaced by another file"
        log.warning(
            "the %s database %s %s while open: opening it again", self.kind, self.path, reason
        )
        with contextlib.suppress(sqlite3.Error):
            self.connection.close()
        if now is None:
            # The deleted file's log and index must not be read as the new file's.
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{self.path}{suffix}")
        self.path, self.connection = self._reopen()
        self._identity = file_identity(self.path)
        self._replaced = reason

    def run_locked(self, fn: Callable[[], T], *, doing: str = "", check: bool = True) -> T:
        """``fn`` under :attr:`lock` (on this thread); sqlite3 errors become
        StoreError, an open transaction is rolled back. With ``check``, a
        file opened again since the last call raises ``_Replaced`` (for
        :meth:`call`, which runs the owner's hook first)."""
        with self.lock:
            if check:
                self._check_file()
                if self._replaced is not None:
                    raise _Replaced(self._replaced)
            return self._run(fn, doing)

    def run_now(self, fn: Callable[[], T], *, doing: str = "") -> T:
        """``fn`` under :attr:`lock`, on this thread, with no hook to run (a
        store closing): a file deleted or replaced since the last call is
        StoreError, and ``fn`` does not run."""
        with self.lock:
            self._check_file()
            if self._replaced is not None:
                raise StoreError(
                    f"the {self.kind} database {self.path} {self._replaced} while open",
                    "missing",
                )
            return self._run(fn, doing)

    def _run(self, fn: Callable[[], T], doing: str) -> T:
        try:
            return fn()
        except sqlite3.Error as exc:
            if self.connection.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self.connection.execute("ROLLBACK")
            raise store_error(exc, kind=self.kind, path=self.path, doing=doing) from exc

    async def call(self, fn: Callable[[], T], *, doing: str = "", check: bool = True) -> T:
        """``fn`` on the worker thread (see :meth:`run_locked`). The calls
        the ``on_replaced`` hook makes (or ``check=False``) skip the check."""
        check = check and not _IN_HOOK.get()
        while True:
            try:
                return await anyio.to_thread.run_sync(
                    lambda: self.run_locked(fn, doing=doing, check=check),
                    limiter=self._limiter,
                    abandon_on_cancel=self._abandon,
                )
            except _Replaced:
                await self._rebuilt()

    async def _rebuilt(self) -> None:
        async with self._rebuild:
            reason = self._replaced
            if reason is None:
                return  # another call ran the hook
            if self.on_replaced is not None:
                token = _IN_HOOK.set(True)
                try:
                    await self.on_replaced(reason)  # if it raises, the next call tries again
                finally:
                    _IN_HOOK.reset(token)
            self._replaced = None

    def close(self) -> None:
        with self.lock, contextlib.suppress(sqlite3.Error):
            self.connection.close()


class DatabaseStore:
    """A store over one :class:`Database` (``_file``, made by the store's
    ``__init__``): the file's path, its connection and the hook for a file
    deleted or replaced while open, once for both stores."""

    _file: Database

    @property
    def path(self) -> Path:
        return self._file.path

    @property
    def _db(self) -> sqlite3.Connection:
        return self._file.connection

    @property
    def on_replaced(self) -> Callable[[str], Awaitable[None]] | None:
        """Called when the database was deleted or replaced while open (with
        why), after it was created again (empty) and before any other call
        goes on: the owner writes back what the process holds in memory
        (sessions, with ``SqliteStore.restore``) or tells what was lost
        (checkpoints)."""
        return self._file.on_replaced

    @on_replaced.setter
    def on_replaced(self, hook: Callable[[str], Awaitable[None]] | None) -> None:
        self._file.on_replaced = hook
