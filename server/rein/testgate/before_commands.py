"""What the workspace's files said before a command changed them, for the
tests gate's baseline and its "undone" rule.

A tool's change is announced before it is made (the gate keeps the file's
text then); a command's (``run_command``) is seen only after it ran, by
the disk watcher, so its files' earlier texts were unknown and a test a
``sed`` broke could only be "unverified" (failing before the run too, as
far as the gate could tell). :class:`TextsBeforeCommands` walks the
workspace before each command and at the next verdict, as the selection
walks it (hidden folders, virtual environments and ``SKIP_DIRS`` left
out), keeping each file's stamp (modification time, size) and, for the
text files a test may read (:data:`KEPT_SUFFIXES`, up to
:data:`MAX_TEXT_BYTES`), its text, compressed. A walk returns what changed
since the one before it: each changed or removed file's earlier text
(None for a file that was not there), which the gate keeps as the file's
text before the run unless it knows an earlier one.

Bounded: at most :data:`MAX_FILES` files are walked and
:data:`MAX_KEPT_BYTES` of text kept; past that, files are only known by
their stamp and a change of theirs is "not known", as before.
"""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path

from rein.testgate.selection import SKIP_DIRS

__all__ = ["KEPT_SUFFIXES", "TextsBeforeCommands"]

#: Files whose text is kept: Python sources and the data and configuration
#: files tests most often read.
KEPT_SUFFIXES = (
    *(".py", ".pyi", ".cfg", ".toml", ".ini", ".txt", ".json", ".yaml", ".yml"),
    # Test data (a CSV a ``sed`` changed left a verdict unverified).
    *(".csv", ".tsv", ".jsonl", ".xml", ".html", ".sql"),
)
#: A larger file is known by its stamp only.
MAX_TEXT_BYTES = 1_000_000
#: Text kept in all (compressed size).
MAX_KEPT_BYTES = 64_000_000
#: Files walked at most.
MAX_FILES = 50_000

Stamp = tuple[int, int]
#: A file's stamp and its compressed text (None: not kept: binary, too
#: large, another suffix, over the budget).
_Entry = tuple[Stamp, bytes | None]


class TextsBeforeCommands:
    """The workspace's files as the last walk found them (see the module
    docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: dict[str, _Entry] = {}
        self._kept_bytes = 0
        #: The last walk saw every file (none left out by MAX_FILES).
        self._complete = False
        self._walked = False
        #: Every path a walk found (a file deleted since is still "was there").
        self._seen: set[str] = set()
        #: The folders the walks went through ("" for the root).
        self._folders: set[str] = set()
        #: The regular files of the current walk (the others are not read).
        self._regular: set[str] = set()

    def walk(self) -> dict[str, str | None]:
        """Walk the workspace now: each file that changed, appeared or
        went since the last walk, with its text then (None: it was not
        there); files whose earlier text was not kept are left out. The
        first walk only learns the files."""
        found = self._stamps()
        self._seen.update(found)
        changed: dict[str, str | None] = {}
        first = not self._walked
        for path, stamp in found.items():
            entry = self._files.get(path)
            if entry is not None and entry[0] == stamp:
                continue
            if entry is not None:
                self._note(changed, path, entry)
            elif not first and self._complete:
                changed[path] = None  # created since
            self._keep(path, stamp)
        if not first and self._complete:
            for path in [p for p in self._files if p not in found]:
                self._note(changed, path, self._files[path])
                self._forget(path)
        self._complete = len(found) < MAX_FILES
        self._walked = True
        return changed

    def never_there(self, path: str) -> bool:
        """``path`` was in no walk while every walk was complete, and its
        folder was walked: it did not exist before (a command's own
        temporary file)."""
        if not self._walked or not self._complete or path in self._seen:
            return False
        return path.rpartition("/")[0] in self._folders

    def _note(self, changed: dict[str, str | None], path: str, entry: _Entry) -> None:
        if entry[1] is not None:
            changed[path] = zlib.decompress(entry[1]).decode("utf-8")

    def _keep(self, path: str, stamp: Stamp) -> None:
        self._forget(path)
        packed: bytes | None = None
        if path in self._regular and path.endswith(KEPT_SUFFIXES) and stamp[1] <= MAX_TEXT_BYTES:
            text = _read(self.root / path)
            if text is not None:
                packed = zlib.compress(text.encode("utf-8"), 1)
                if self._kept_bytes + len(packed) > MAX_KEPT_BYTES:
                    packed = None
                else:
                    self._kept_bytes += len(packed)
        self._files[path] = (stamp, packed)

    def _forget(self, path: str) -> None:
        entry = self._files.pop(path, None)
        if entry is not None and entry[1] is not None:
            self._kept_bytes -= len(entry[1])

    def _stamps(self) -> dict[str, Stamp]:
        """Every entry's stamp (a link's own, never what it points to);
        which of them are regular files (only those are read)."""
        found: dict[str, Stamp] = {}
        self._regular = set()
        for folder, dirs, names in os.walk(self.root):
            if "pyvenv.cfg" in names:  # a virtual environment
                dirs[:] = []
                continue
            dirs[:] = [d for d in dirs if not _skipped(d)]
            rel = os.path.relpath(folder, self.root)
            self._folders.add("" if rel == "." else rel.replace(os.sep, "/"))
            prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            for name in names:
                if len(found) >= MAX_FILES:
                    return found
                try:
                    info = os.stat(os.path.join(folder, name), follow_symlinks=False)
                except OSError:
                    continue
                found[prefix + name] = (info.st_mtime_ns, info.st_size)
                if stat.S_ISREG(info.st_mode):
                    self._regular.add(prefix + name)
        return found


def _read(path: Path) -> str | None:
    """A regular file's UTF-8 text, read at most to the size limit (it may
    have grown since its stamp); None when it cannot be."""
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_TEXT_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_TEXT_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _skipped(name: str) -> bool:
    return name.startswith(".") or name in SKIP_DIRS or name.endswith(".egg")
