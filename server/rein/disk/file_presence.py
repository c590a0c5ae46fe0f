"""Which changed paths were never files: a command's own temporary file.

``sed -i`` writes its result to a temporary file beside the file it edits
(``pkg/sedAbC123``) and renames it over the file; the disk watcher sees the
temporary path appear and go, and the run's record counts it as changed. A
path that was no file before the run and is none after it changed nothing:
the analyzer gate leaves it out of the run's changes (a path it cannot place
would make what the change can reach "not known").

"Before the run" has to be known before the change, which a command's is
not announced: :class:`FilePresence` keeps every file name of the folders
the pool's start-up scan walked (:meth:`~rein.tools.ignore.WorkspaceFilter.
walk_files`, every suffix), kept up to date by each change the pool is told
of (a tool's, the watcher's). A path's first change since the changes were
last released (validated) finds it in that listing or not. A path in a
folder the scan did not walk (created since, symlinked, skipped) is not
known to have been absent: it stays a change.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["FilePresence"]


def _folder(path: str) -> str:
    return path.rpartition("/")[0]


class FilePresence:
    """The workspace's file names as the scan and the changes since found
    them, and the changed paths that were none at their first change."""

    def __init__(self, root: Path) -> None:
        self.root = root
        #: Every file (any suffix) in the folders walked, as last known.
        self._files: set[str] = set()
        #: The folders the scan walked ("" for the root).
        self._folders: set[str] = set()
        #: Paths changed since :meth:`forget_changes`.
        self._changed: set[str] = set()
        #: Of those, the ones no file in a walked folder at their first change.
        self._absent: set[str] = set()

    def saw_folder(self, folder: str, names: Iterable[str]) -> None:
        """The scan walked ``folder`` and found files ``names`` in it."""
        self._folders.add(folder)
        self._files.update(f"{folder}/{n}" if folder else n for n in names)

    def changed(self, path: str) -> None:
        """``path`` changed (it was told after the fact): whether it was a
        file before is known on its first change since :meth:`forget_changes`."""
        if path not in self._changed:
            self._changed.add(path)
            if path not in self._files and _folder(path) in self._folders:
                self._absent.add(path)
        if os.path.lexists(self.root / path):
            self._files.add(path)
        else:
            self._files.discard(path)

    def named(self, names: frozenset[str]) -> list[str]:
        """The files known now whose names are among ``names`` (ruff's
        settings files, :mod:`rein.disk.ruff_extends`)."""
        return [f for f in self._files if f.rpartition("/")[2] in names]

    def never_there(self, path: str) -> bool:
        """``path`` is no file now and was none before its first change
        since the changes were last released: it changed nothing."""
        return path in self._absent and not os.path.lexists(self.root / path)

    def forget_changes(self) -> None:
        """The changes so far were judged: a path's next change asks again
        whether it was a file."""
        self._changed.clear()
        self._absent.clear()
