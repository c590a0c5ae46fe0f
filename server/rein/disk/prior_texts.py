"""What a file said before a change Rein did not make itself.

A tool's edit is announced before it is applied, so the analyzer gate reads
the file's text then (its baseline). A command's (``run_command``: ``sed
-i``, a code generator, a formatter) is seen only after the fact, by the disk
watcher: the text before it is gone from the disk. In a workspace checked
file by file (over ``gates.analyzer.workspaceMaxFiles``) nothing else knows
it either, since the analyzers only looked at the open files.

:class:`TextMemory` keeps the text of each file the analyzers cover as the
pool last read it (compressed: a large project's sources take a few MB),
and for each file changed since :meth:`TextMemory.forget_changes`, its text
before the first of those changes. The pool reads every file once at start
(the import index reads them anyway) and each changed file again as the
change is recorded.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable

__all__ = ["MAX_REMEMBERED_CHARS", "TextMemory"]

#: A file longer than this is not remembered (no text before a change).
MAX_REMEMBERED_CHARS = 1_000_000


def _pack(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 1)


def _unpack(data: bytes) -> str:
    return zlib.decompress(data).decode("utf-8", "surrogatepass")


class TextMemory:
    """Files' texts as last read, and before their first change (see the
    module doc). ``None`` as a text: the file does not exist (or is not
    readable, or too long to remember)."""

    def __init__(self, read: Callable[[str], str | None]) -> None:
        self._read = read
        #: path -> its text as last read (packed); absent: not known.
        self._now: dict[str, bytes | None] = {}
        #: path -> its text before its first change since forget_changes.
        self._before: dict[str, bytes | None] = {}

    def remember(self, paths: Iterable[str]) -> None:
        """Read ``paths`` now (the state before any change)."""
        for path in paths:
            self._now[path] = self._packed(self._read(path))

    @staticmethod
    def _packed(text: str | None) -> bytes | None:
        if text is None or len(text) > MAX_REMEMBERED_CHARS:
            return None
        return _pack(text)

    def text(self, path: str) -> str | None:
        """The text last read of ``path`` (None: unknown or none)."""
        data = self._now.get(path)
        return _unpack(data) if data is not None else None

    def frozen(self) -> Callable[[str], str | None]:
        """:meth:`text` as of now: a later change does not show in it."""
        now = dict(self._now)

        def text(path: str) -> str | None:
            data = now.get(path)
            return _unpack(data) if data is not None else None

        return text

    def read(self, path: str) -> str | None:
        """The text last read of ``path`` when it was read, else read now."""
        return self.text(path) if path in self._now else self._read(path)

    def changed(self, path: str, text: str | None) -> None:
        """``path`` changed and now reads ``text``: what it read before is
        kept when this is its first change."""
        packed = self._packed(text)
        if path not in self._before:
            self._before[path] = self._now.get(path)
        self._now[path] = packed

    def before_change(self, path: str) -> str | None:
        """``path``'s text before its first change since
        :meth:`forget_changes`; None when it did not change or its text then
        is not known (a file the change created, one too long to keep)."""
        if path not in self._before:
            return None
        data = self._before[path]
        if data is None:
            return None
        return _unpack(data)

    def forget_changes(self) -> None:
        """The changes so far were judged: the next change of a file keeps
        the text from then."""
        self._before.clear()
