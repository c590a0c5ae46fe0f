"""Which folders the disk watcher watches, and how, so that it never
follows a symlink.

The OS watch (watchfiles, over the ``notify`` crate) follows symlinked
folders when it watches a tree recursively: a link to ``/`` or to a folder
outside the workspace would put the whole target under watch. The plan
walks the tree without following links: a folder whose subtree holds no
symlinked folder and no skipped folder (``.git``, virtual environments,
build output: :data:`rein.tools.ignore.SKIPPED_DIR_NAMES`) is watched
recursively; a folder that holds one is watched on its own (its entries, not
below) and its clean subfolders recursively. A symlinked folder is never
watched through its link; where its target lies inside the workspace, it is
watched there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rein.tools.ignore import SKIPPED_DIR_NAMES

__all__ = ["UNWATCHED_NAMES", "WatchPlan", "plan_watch"]

#: Folders never watched (what is in them is never reported).
UNWATCHED_NAMES = SKIPPED_DIR_NAMES | {".rein"}


@dataclass(frozen=True, slots=True)
class WatchPlan:
    #: Folders watched with everything below them.
    recursive: tuple[Path, ...]
    #: Folders watched on their own: their entries, not what is below.
    flat: tuple[Path, ...]


def plan_watch(top: Path) -> WatchPlan:
    """The plan for the tree under ``top`` (a real folder, not a link)."""
    recursive: list[Path] = []
    flat: list[Path] = []
    if _clean(top, recursive, flat):
        recursive.append(top)
    return WatchPlan(tuple(recursive), tuple(flat))


def _clean(folder: Path, recursive: list[Path], flat: list[Path]) -> bool:
    """True when ``folder`` can be watched recursively; else its part of the
    plan is added to ``recursive`` and ``flat``."""
    clean = True
    clean_children: list[Path] = []
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return False  # unreadable: not watched
    for entry in entries:
        try:
            if entry.is_symlink():
                clean = clean and not entry.is_dir(follow_symlinks=True)
                continue
            if not entry.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        if entry.name in UNWATCHED_NAMES:
            clean = False
            continue
        child = Path(entry.path)
        if _clean(child, recursive, flat):
            clean_children.append(child)
        else:
            clean = False
    if clean:
        return True
    recursive.extend(clean_children)
    flat.append(folder)
    return False
