"""A throwaway copy of the workspace for the tests to run in.

A shadow tree mirrors the workspace under a temporary directory: real
directories, a symlink per file, and the *overlaid* files written for real.
For the state being judged the overlay is the workspace port's text of
every changed file (what the editor or the ACP client holds, unsaved or
not); for the baseline it is each changed file's text before the run's
first change, created files left out, deleted ones restored. The person's
files and buffers are never written.

Folders nobody's tests read file by file (an environment, ``node_modules``,
a build's ``target``) are one symlink each, so an interpreter or a package
in them still works; a repository's metadata and caches are left out.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LINKED_WHOLE", "SKIPPED", "Shadow", "build_shadow"]

#: Folders left out of the shadow.
SKIPPED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".hypothesis",
    }
)
#: Folders linked whole (a symlink to the real folder, never walked).
LINKED_WHOLE = frozenset({"node_modules", ".venv", "venv", "target", "site-packages"})


@dataclass(slots=True)
class Shadow:
    """A built shadow tree; :meth:`remove` deletes it (never the workspace)."""

    root: Path
    #: The workspace it mirrors.
    source: Path
    #: Files linked and written, for the gate's detail and the bench.
    linked: int = 0
    written: int = 0

    def relative(self, path: str) -> str | None:
        """A path a test reported (absolute, in the shadow or the workspace,
        or relative to the shadow's root) as a workspace-relative path, or
        None when it is outside both (a library's file)."""
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        for base in (self.root, self.source):
            try:
                rel = candidate.relative_to(base)
            except ValueError:
                continue
            parts = rel.parts
            if not parts or parts[0] in SKIPPED or parts[0] in LINKED_WHOLE:
                return None
            if "site-packages" in parts:
                return None
            return rel.as_posix()
        return None

    def remove(self) -> None:
        shutil.rmtree(self.root.parent, ignore_errors=True)

    def discard(self) -> None:
        """:meth:`remove` in a thread of its own: deleting a big tree's
        links takes seconds on a slow disk, and the verdict need not wait."""
        threading.Thread(target=self.remove, name="rein-tests-shadow", daemon=True).start()


def _writable(root: Path, rel: str) -> bool:
    """``rel`` lies in the shadow's own folders: no part of it is ``..``
    and no folder on its way is a link to a real one."""
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return False
    here = root
    for part in parts[:-1]:
        here = here / part
        if here.is_symlink():
            return False
    return True


def _is_environment(path: Path) -> bool:
    return (path / "pyvenv.cfg").is_file()


def build_shadow(source: Path, overlay: Mapping[str, str | None]) -> Shadow:
    """A shadow of ``source`` with ``overlay`` applied: path -> text to
    write, or None for a file that must not exist. Paths are
    workspace-relative POSIX strings."""
    base = Path(tempfile.mkdtemp(prefix="rein-tests-"))
    root = base / source.name
    root.mkdir()
    shadow = Shadow(root=root, source=source)
    try:
        _mirror(source, root, overlay, shadow)
        for rel, text in overlay.items():
            if not _writable(root, rel):
                continue  # under a linked folder: writing would reach the real one
            target = root / rel
            if target.is_symlink() or target.exists():
                target.unlink()
            if text is None:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="")
            shadow.written += 1
    except BaseException:
        shadow.remove()
        raise
    return shadow


def _mirror(source: Path, root: Path, overlay: Mapping[str, str | None], shadow: Shadow) -> None:
    for folder, dirs, files in os.walk(source):
        here = Path(folder)
        out = root / here.relative_to(source)
        kept: list[str] = []
        for name in dirs:
            path = here / name
            if name in SKIPPED:
                continue
            if name in LINKED_WHOLE or path.is_symlink() or _is_environment(path):
                (out / name).symlink_to(path, target_is_directory=True)
                continue
            (out / name).mkdir()
            kept.append(name)
        dirs[:] = kept
        rel_folder = here.relative_to(source).as_posix()
        for name in files:
            rel = name if rel_folder == "." else f"{rel_folder}/{name}"
            if rel in overlay:
                continue
            (out / name).symlink_to(here / name)
            shadow.linked += 1
