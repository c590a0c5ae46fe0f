"""Remove isolated copies: one when its session is applied or discarded,
and on start every one whose session is gone (its process died while it
ran, or the session is no longer stored). A worktree is removed with
``git worktree remove --force`` then ``git worktree prune``, so ``git
worktree list`` shows none of Rein's afterwards."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path

from rein.isolation._git import GitError, git
from rein.isolation.registry import IsolatedRecord, Registry

__all__ = ["remove_isolated", "sweep"]

log = logging.getLogger(__name__)


def remove_isolated(registry: Registry, record: IsolatedRecord) -> None:
    """The copy, its worktree registration and the record, gone."""
    if record.kind == "git":
        top = Path(record.top)
        try:
            if top.is_dir():
                git(top, "worktree", "remove", "--force", record.tree, check=False)
        except GitError as exc:  # git gone: the folders are removed below all the same
            log.warning("removing the worktree %s: %s", record.tree, exc)
    shutil.rmtree(registry.place(record.session_id), ignore_errors=True)
    if record.kind == "git" and Path(record.top).is_dir():
        try:
            git(Path(record.top), "worktree", "prune", check=False)
        except GitError as exc:
            log.warning("pruning the worktrees of %s: %s", record.top, exc)
    registry.forget(record.session_id)


def sweep(registry: Registry, exists: Callable[[str], bool] | None = None) -> list[str]:
    """On start: remove every isolated session whose process died while it
    ran, and (given ``exists``, which says whether a session is stored)
    every finished one whose session is gone. Returns the removed ids."""
    removed: list[str] = []
    for record in registry.all():
        gone = Registry.crashed(record) or (
            record.status == "finished" and exists is not None and not exists(record.session_id)
        )
        if gone:
            remove_isolated(registry, record)
            removed.append(record.session_id)
    return removed
