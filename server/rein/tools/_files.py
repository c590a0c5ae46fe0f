"""Walking the workspace tree on disk, ``.gitignore``-aware.

The Workspace port has no listing method: listing, globbing and the Python
grep fallback read the disk under the workspace root (a file that exists only
in an open buffer does not matter for them). What the workspace filter
(:mod:`rein.tools.ignore`) skips is left out: ``.git``, virtual
environments, build output, caches and what a ``.gitignore`` ignores; a
skipped directory is not entered, nor is a symlinked one.

Walk order is depth first with each directory's entries sorted by name,
which equals sorting whole paths by their components (``a/b.py`` before
``a.py``), as ``rg --sort=path`` does; grep's two backends rely on that.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rein.tools._globs import IgnoreRule
from rein.tools.ignore import WorkspaceFilter

__all__ = ["ALWAYS_SKIPPED", "Entry", "FileTree", "format_size", "plural"]

#: Directory names never listed or searched, whatever the settings.
ALWAYS_SKIPPED = frozenset({".git"})


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``1 file``, ``2 files``."""
    if count == 1:
        return f"1 {noun}"
    return f"{count:,} {plural_form or noun + 's'}"


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


@dataclass(frozen=True, slots=True)
class Entry:
    #: Workspace-relative POSIX path.
    path: str
    is_dir: bool
    is_symlink: bool = False
    size: int = 0

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def _join(parent: str, name: str) -> str:
    return name if parent in ("", ".") else f"{parent}/{name}"


class FileTree:
    """The files under ``root``. ``.gitignore`` files are read once per
    instance (an instance lives for one tool call)."""

    def __init__(self, root: str | os.PathLike[str], *, respect_gitignore: bool = True) -> None:
        self.root = Path(root)
        self.respect_gitignore = respect_gitignore
        self.filter = WorkspaceFilter(root, respect_gitignore=respect_gitignore)

    def abspath(self, rel: str) -> Path:
        return self.root if rel in ("", ".") else self.root / rel

    # ------------------------------------------------------------- ignores

    def rules_for(self, dir_rel: str) -> tuple[IgnoreRule, ...]:
        """The rules that apply to the entries of directory ``dir_rel``: the
        ancestors' rules followed by the directory's own ``.gitignore``."""
        return self.filter.rules_for(dir_rel)

    # -------------------------------------------------------------- listing

    def list_dir(self, dir_rel: str) -> tuple[list[Entry], int]:
        """The entries of one directory, sorted by name, and how many were
        left out because the workspace filter (:mod:`rein.tools.ignore`:
        ``.git``, virtual environments, build output, ``.gitignore``) skips
        them."""
        entries: list[Entry] = []
        skipped = 0
        try:
            with os.scandir(self.abspath(dir_rel)) as it:
                raw = sorted(it, key=lambda e: e.name)
        except OSError:
            return [], 0
        for item in raw:
            entry = self._entry(dir_rel, item)
            if entry is None:
                continue
            if item.name in ALWAYS_SKIPPED or self.filter.entry_skipped(entry.path, entry.is_dir):
                skipped += 1
                continue
            entries.append(entry)
        return entries, skipped

    def walk(self, start_rel: str = "", *, max_depth: int | None = None) -> Iterator[Entry]:
        """Every entry below ``start_rel`` (files and directories), depth
        first in name order. ``max_depth`` 1 means the direct children."""
        yield from self._walk("" if start_rel == "." else start_rel, 1, max_depth)

    def files(self, start_rel: str = "", *, max_depth: int | None = None) -> Iterator[Entry]:
        return (e for e in self.walk(start_rel, max_depth=max_depth) if not e.is_dir)

    def _walk(self, dir_rel: str, depth: int, max_depth: int | None) -> Iterator[Entry]:
        entries, _ = self.list_dir(dir_rel)
        for entry in entries:
            yield entry
            if entry.is_dir and not entry.is_symlink and (max_depth is None or depth < max_depth):
                yield from self._walk(entry.path, depth + 1, max_depth)

    @staticmethod
    def _entry(dir_rel: str, item: os.DirEntry[str]) -> Entry | None:
        try:
            is_symlink = item.is_symlink()
            is_dir = item.is_dir(follow_symlinks=True)
            size = 0 if is_dir else item.stat(follow_symlinks=False).st_size
        except OSError:
            return None
        return Entry(_join(dir_rel, item.name), is_dir, is_symlink, size)
