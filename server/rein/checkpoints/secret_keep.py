"""The content of secret files a checkpoint keeps: beside ``checkpoints.db``,
never in it.

A run the person let delete or overwrite a secret file (``.env``,
``.aws/credentials``; ``tools.secretFiles``) must be undoable like any other,
so the old text is kept; but not in the database, where it would sit in the
clear among every other session's content, be copied with the file, and
outlive its deletion in SQLite's free pages. Each text is a file of its own
in ``storage/checkpoint-secrets/`` (the folder ``0700``, each file ``0600``,
written aside and renamed into place), named by an HMAC of the text under a
key of that folder (``key``, ``0600``): the same text has the same name, so
a run that writes the file back is seen as unchanged, and the name says
nothing of the text to whoever has the database alone. The database holds
only ``secret:<name>``. A file goes when no live checkpoint names it any
more (:meth:`SecretKeep.keep_only`, when the storage limits prune runs):
an unlink, not a row left in a page.

Rein's storage folder is hidden from sandboxed commands, as the database
is. Nothing here raises but OSError, which the store turns into its own
error.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Iterable
from pathlib import Path

__all__ = ["SECRET_PREFIX", "MemorySecretKeep", "SecretKeep", "is_secret_blob"]

#: What a secret text's blob id starts with in the store.
SECRET_PREFIX = "secret:"
#: A file younger than this is never removed by :meth:`SecretKeep.keep_only`
#: (another process may have kept it and not yet recorded the change).
_GRACE_S = 3600.0
_KEY = "key"


def is_secret_blob(blob: str | None) -> bool:
    """Whether ``blob`` names a text kept apart (:data:`SECRET_PREFIX`)."""
    return blob is not None and blob.startswith(SECRET_PREFIX)


def _name(key: bytes, text: str) -> str:
    return hmac.new(key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


class SecretKeep:
    """Secret texts in the folder ``folder`` (created ``0700`` on first use)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._key: bytes | None = None

    def _ready(self) -> bytes:
        if self._key is not None:
            return self._key
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)
        path = self.folder / _KEY
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            self._key = path.read_bytes()
        else:
            key = secrets.token_bytes(32)
            with os.fdopen(fd, "wb") as out:
                out.write(key)
            self._key = key
        if len(self._key) < 16:
            raise OSError(f"{path} is not a key Rein wrote (too short)")
        return self._key

    def put(self, text: str) -> str:
        """Keep ``text``; its blob id (``secret:`` and its name)."""
        name = _name(self._ready(), text)
        path = self.folder / name
        if not path.exists():
            aside = self.folder / f".{name}.{secrets.token_hex(4)}.tmp"
            fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(text.encode("utf-8", "surrogatepass"))
                os.replace(aside, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(aside)
                raise
        return SECRET_PREFIX + name

    def get(self, blob: str) -> str | None:
        """The text of ``blob``; None when it is gone (pruned, never kept)."""
        name = blob.removeprefix(SECRET_PREFIX)
        if not name or not all(c in "0123456789abcdef" for c in name):
            return None
        try:
            return (self.folder / name).read_bytes().decode("utf-8", "surrogatepass")
        except FileNotFoundError:
            return None

    def keep_only(self, live: Iterable[str], *, now: float | None = None) -> int:
        """Remove every kept text no blob id of ``live`` names (those older
        than an hour: one kept just now may not be recorded yet); how many."""
        wanted = {b.removeprefix(SECRET_PREFIX) for b in live if is_secret_blob(b)}
        now = time.time() if now is None else now
        removed = 0
        try:
            entries = list(os.scandir(self.folder))
        except FileNotFoundError:
            return 0
        for entry in entries:
            if entry.name == _KEY or entry.name in wanted:
                continue
            with contextlib.suppress(FileNotFoundError):
                if now - entry.stat(follow_symlinks=False).st_mtime < _GRACE_S:
                    continue
                os.unlink(entry.path)
                removed += 1
        return removed


class MemorySecretKeep:
    """Secret texts in memory (a store in memory, unit tests)."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)
        self._texts: dict[str, str] = {}

    def put(self, text: str) -> str:
        blob = SECRET_PREFIX + _name(self._key, text)
        self._texts.setdefault(blob, text)
        return blob

    def get(self, blob: str) -> str | None:
        return self._texts.get(blob)
