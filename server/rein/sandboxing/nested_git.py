"""Git repositories below the workspace root, which a sandboxed command
must neither change nor plant.

Git finds a repository by looking upward from where it runs, so a
``.git`` folder (or a ``.git`` file naming one) anywhere under the
workspace is the repository of whatever is below it: the person's
``git status`` there, and the editor's (which opens the repository of
every file shown), read its ``config`` and run its ``core.fsmonitor``
with the person's rights. The workspace's own ``.git`` is read-only in
the sandbox (:data:`rein.sandboxing.policy.READ_ONLY_IN_WORKSPACE`); this
module finds the others: the ones there before a command are made
read-only for it, and one it creates is moved aside after it
(:func:`rein.sandboxing.local.move_aside`).

The walk does not follow symlinks (a link is mounted as what it points
to, and the workspace's own links point where they point for git too)
and does not enter a ``.git``. It is bounded: past :data:`MAX_FOLDERS`
folders it stops and logs it (such a workspace's deeper repositories go
unwatched).
"""

from __future__ import annotations

import logging
import os

__all__ = ["MAX_FOLDERS", "NestedRepositories", "nested_git"]

log = logging.getLogger(__name__)

#: Folders walked at most per look (a workspace with more is walked that far).
MAX_FOLDERS = 200_000


def nested_git(root: str, *, max_folders: int = MAX_FOLDERS) -> frozenset[str]:
    """Every ``.git`` entry (folder, file or link) below ``root``, as
    absolute paths, but ``root``'s own."""
    found: list[str] = []
    pending = [root]
    walked = 0
    while pending:
        folder = pending.pop()
        walked += 1
        if walked > max_folders:
            log.warning(
                "sandbox: stopped looking for git repositories below %s after %d folders",
                root,
                max_folders,
            )
            break
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name == ".git":
                    if folder != root:
                        found.append(entry.path)
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                except OSError:
                    continue
    return frozenset(found)


class NestedRepositories:
    """The nested repositories one sandbox has seen: :meth:`before` at a
    command's start (they stay, read-only), :meth:`planted` at its end
    (the ones no command's start saw: a command made them). A repository
    the person makes between two commands is seen at the next start; one
    gone since is forgotten at the next end. Before any start nothing
    counts as planted (nothing was seen to compare with)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._known: set[str] = set()
        self._started = False

    def before(self) -> tuple[str, ...]:
        """The nested repositories now (sorted), remembered as not planted."""
        found = nested_git(self.root)
        self._known |= found
        self._started = True
        return tuple(sorted(found))

    def planted(self) -> list[str]:
        """The nested repositories now that no start saw (sorted)."""
        if not self._started:
            return []
        found = nested_git(self.root)
        planted = sorted(found - self._known)
        self._known &= found
        return planted
