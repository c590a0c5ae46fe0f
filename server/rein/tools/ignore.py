"""Which workspace paths Rein leaves alone: one filter for the tools'
listings (list_dir, glob, grep), the disk watcher and the analyzer pool.

Skipped are ``.git``, virtual environments (``venv``, ``.venv``, ``env`` and
any folder holding a ``pyvenv.cfg``), build output (``build``, ``dist``),
installed libraries (``site-packages``, ``node_modules``), caches
(``__pycache__``, ``.mypy_cache``, ``.ruff_cache``, ``.tox``) and what the
workspace's ``.gitignore`` files ignore. Paths are workspace-relative POSIX
strings. The filter reads each ``.gitignore`` once per instance: make a new
one when they may have changed (a tool call, a scan).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rein.tools._globs import IgnoreRule, parse_gitignore, path_ignored

__all__ = ["SKIPPED_DIR_NAMES", "WorkspaceFilter", "is_virtualenv"]

#: Directory names never listed, searched, watched or analysed.
SKIPPED_DIR_NAMES = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        "env",
        "build",
        "dist",
        "site-packages",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".tox",
    }
)
_MAX_GITIGNORE_BYTES = 1_000_000


def is_virtualenv(directory: str | os.PathLike[str]) -> bool:
    """A folder Python made with ``venv`` (or virtualenv): it holds ``pyvenv.cfg``."""
    return os.path.isfile(os.path.join(directory, "pyvenv.cfg"))


class WorkspaceFilter:
    """Decides whether a path under ``root`` is skipped."""

    def __init__(self, root: str | os.PathLike[str], *, respect_gitignore: bool = True) -> None:
        self.root = Path(root)
        self.respect_gitignore = respect_gitignore
        self._rules: dict[str, tuple[IgnoreRule, ...]] = {}
        self._dirs: dict[str, bool] = {}
        #: The folders :meth:`walk_files` did not enter (it records them).
        self.skipped_dirs: list[str] = []

    def _abspath(self, rel: str) -> Path:
        return self.root if rel in ("", ".") else self.root / rel

    def rules_for(self, dir_rel: str) -> tuple[IgnoreRule, ...]:
        """The ``.gitignore`` rules for the entries of ``dir_rel``: the
        ancestors' rules followed by the directory's own."""
        key = "" if dir_rel in ("", ".") else dir_rel
        cached = self._rules.get(key)
        if cached is not None:
            return cached
        inherited: tuple[IgnoreRule, ...] = ()
        if key:
            inherited = self.rules_for(key.rsplit("/", 1)[0] if "/" in key else "")
        own: list[IgnoreRule] = []
        if self.respect_gitignore:
            gitignore = self._abspath(key) / ".gitignore"
            try:
                if gitignore.is_file() and gitignore.stat().st_size <= _MAX_GITIGNORE_BYTES:
                    own = parse_gitignore(gitignore.read_text("utf-8", errors="replace"), key)
            except OSError:
                own = []
        rules = inherited + tuple(own)
        self._rules[key] = rules
        return rules

    def entry_skipped(self, path: str, is_dir: bool) -> bool:
        """Whether the entry ``path`` is skipped, its parent not being
        skipped (a walk from the top asks this of every entry it meets)."""
        name = path.rsplit("/", 1)[-1]
        if is_dir and (name in SKIPPED_DIR_NAMES or is_virtualenv(self._abspath(path))):
            return True
        if name == ".git":
            return True
        if not self.respect_gitignore:
            return False
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        return path_ignored(self.rules_for(parent), path, is_dir)

    def skipped(self, path: str, *, below: str = "") -> bool:
        """Whether ``path`` (a file or folder, existing or not) is skipped:
        it or one of its ancestors is. With ``below`` (an ancestor folder,
        named on purpose by the caller) only what lies under it counts."""
        parts = [p for p in path.split("/") if p not in ("", ".")]
        start = len([p for p in below.split("/") if p not in ("", ".")])
        if start >= len(parts):
            return False
        for end in range(start + 1, len(parts)):
            if self._dir_skipped("/".join(parts[:end])):
                return True
        if not parts:
            return False
        full = "/".join(parts)
        return self.entry_skipped(full, os.path.isdir(self._abspath(full)))

    def _dir_skipped(self, rel: str) -> bool:
        cached = self._dirs.get(rel)
        if cached is None:
            cached = self.entry_skipped(rel, True)
            self._dirs[rel] = cached
        return cached

    def walk_files(
        self,
        extensions: frozenset[str] | set[str] | None = None,
        saw: Callable[[str, list[str]], None] | None = None,
    ) -> list[str]:
        """Every file under the root that is not skipped (symlinked folders
        are not entered), in path order; only these extensions when given.
        ``saw`` is told each folder walked and the names of all its files."""
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel_dir = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            rel_dir = "" if rel_dir == "." else rel_dir
            if saw is not None:
                saw(rel_dir, filenames)
            kept: list[str] = []
            for d in sorted(dirnames):
                rel = f"{rel_dir}/{d}" if rel_dir else d
                if os.path.islink(os.path.join(dirpath, d)):
                    continue
                if self.entry_skipped(rel, True):
                    self.skipped_dirs.append(rel)
                    continue
                kept.append(d)
            dirnames[:] = kept
            for name in sorted(filenames):
                if extensions is not None and os.path.splitext(name)[1] not in extensions:
                    continue
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if not self.entry_skipped(rel, False):
                    found.append(rel)
        return found

    def exclude_globs(self) -> list[str]:
        """Globs for an analyzer's own ``exclude`` setting: the skipped
        folder names at any depth, hidden folders, and the folders the last
        :meth:`walk_files` skipped (virtual environments under any name,
        ignored folders)."""
        names = [f"**/{name}" for name in sorted(SKIPPED_DIR_NAMES)]
        return [*names, "**/.*", *sorted(set(self.skipped_dirs))]
