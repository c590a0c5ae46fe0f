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

from rein.harness.errors import ReinError
from rein.isolation._git import GitError, git
from rein.isolation.registry import IsolatedRecord, Registry
from rein.process.environment import remember_git_location
from rein.sandboxing.caches import remove_caches_of

__all__ = ["remove_isolated", "sweep"]

log = logging.getLogger(__name__)


def _registered(top: Path, tree: Path) -> bool:
    """True when git lists ``tree`` among ``top``'s worktrees."""
    listed = git(top, "worktree", "list", "--porcelain", "-z", check=False).stdout
    names = {
        Path(item[len(b"worktree ") :].decode(errors="surrogateescape"))
        for item in listed.split(b"\0")
        if item.startswith(b"worktree ")
    }
    return tree in names or tree.resolve() in {n.resolve() for n in names}


def remove_isolated(registry: Registry, record: IsolatedRecord) -> None:
    """The copy, its worktree registration and the record, gone. Only what
    lies inside the registry's own place for the session is removed: the
    worktree is the session's ``tree/`` and must be one git lists. The
    sandbox's build caches of the copy go too (a copy's path is never used
    again: each run's would stay, hundreds of MB for a real Go module)."""
    place = registry.place(record.session_id)
    remove_caches_of(str(record.root))
    tree = place / "tree"
    if record.kind == "git":
        top = Path(record.top)
        try:
            if top.is_dir() and _registered(top, tree):
                git(top, "worktree", "remove", "--force", str(tree), check=False)
        except GitError as exc:  # git gone: the folders are removed below all the same
            log.warning("removing the worktree %s: %s", tree, exc)
    shutil.rmtree(place, ignore_errors=True)
    if record.kind == "git" and Path(record.top).is_dir():
        try:
            git(Path(record.top), "worktree", "prune", check=False)
        except GitError as exc:
            log.warning("pruning the worktrees of %s: %s", record.top, exc)
    registry.forget(record.session_id)
    remember_git_location(place)


def sweep(registry: Registry, exists: Callable[[str], bool] | None = None) -> list[str]:
    """On start: remove every isolated session whose process died while it
    ran, and (given ``exists``, which says whether the session store has a
    session) every finished one of a stored session the store no longer
    has. A copy kept by an editor's server (its session was never stored)
    stays until it is applied or discarded. Returns the removed ids."""
    removed: list[str] = []
    for record in registry.all():
        gone = Registry.crashed(record) or (
            record.status == "finished"
            and record.stored
            and exists is not None
            and not exists(record.session_id)
        )
        if not gone:
            continue
        try:
            remove_isolated(registry, record)
        except (ReinError, OSError) as exc:  # one bad record never stops the others
            log.warning("removing the isolated session %s: %s", record.session_id, exc)
            continue
        removed.append(record.session_id)
    return removed
