"""Secret files found by a bounded walk: those a folder holds (a move or
delete of the folder asks every time, naming one) and the secret file a hard
link is another name of (its read's approval prompt says so; a command
naming it asks, :mod:`rein.tools.secret_commands`).

A glob names files, not folders (``.aws/credentials``, not ``.aws``), so a
check of the two paths of a move does not see a folder holding one; moved
out of the glob (``.aws`` to ``aws``), the file is no longer secret and
``read_file`` would show it. Past :data:`WALK_BOUND` entries the walk stops
and the answer is "may hold one": asked all the same.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections import OrderedDict

from rein.tools.sandbox import Sandbox
from rein.tools.secret_files import SecretFiles

__all__ = [
    "TREE_BOUND",
    "WALK_BOUND",
    "SecretInodeTree",
    "SecretInodes",
    "secret_in_folder",
    "secret_inodes",
    "secret_name_of",
    "workspace_secret_inodes",
]

#: The workspace's secret files by (device, inode) -> (path, glob).
SecretInodes = dict[tuple[int, int], tuple[str, str]]

#: The most entries a walk looks at before it gives up (and asks); for a
#: :class:`SecretInodeTree`, the most entries one look reads.
WALK_BOUND = 5000
#: The most entries a :class:`SecretInodeTree` remembers (a larger
#: workspace: "may be one", asked).
TREE_BOUND = 200_000
#: A folder changed this recently (nanoseconds) when it was read is read
#: again at the next look: a change in the same tick of the file system's
#: clock would leave its change time as it was.
RECENT_NS = 2_000_000_000
#: The workspaces (root and rules) whose trees are kept.
_TREES_KEPT = 8


def _files(top: str, bound: int) -> tuple[list[str], bool]:
    """The files under the folder ``top`` (relative POSIX paths, symlinks not
    followed) and whether the walk stopped at ``bound`` entries."""
    found: list[str] = []
    seen = 0
    for folder, dirs, names in os.walk(top, followlinks=False):
        seen += len(dirs) + len(names)
        if seen > bound:
            return found, True
        base = os.path.relpath(folder, top)
        for name in names:
            found.append(name if base == "." else f"{base}/{name}".replace(os.sep, "/"))
    return found, False


def secret_in_folder(
    sandbox: Sandbox, rel: str, new: str | None = None, bound: int | None = None
) -> str | None:
    """Why moving (to ``new``) or deleting the folder ``rel`` asks every
    time: a file under it that is secret where it is or where it goes, or a
    folder too large to look through; None for a file or a folder holding
    none."""
    if not sandbox.secret_files:
        return None
    top = sandbox.abspath(rel)
    try:
        if not stat.S_ISDIR(os.lstat(top).st_mode):
            return None
    except OSError:
        return None
    bound = WALK_BOUND if bound is None else bound
    files, stopped = _files(top, bound)
    for name in files:
        for path in (f"{rel}/{name}", *((f"{new}/{name}",) if new else ())):
            glob = sandbox.secret_files.matched_by(path)
            if glob is not None:
                after = (
                    f"; once moved it is {new}/{name}, which no secret glob names, so the "
                    "agent can read it"
                    if new and sandbox.secret_files.matched_by(f"{new}/{name}") is None
                    else ""
                )
                return (
                    f"the folder {rel} holds {path}, a secret file "
                    f"(tools.secretFiles: {glob!r}){after}"
                )
    if stopped:
        return (
            f"the folder {rel} has more than {bound} entries, too many to look for secret "
            "files (tools.secretFiles) in"
        )
    return None


def secret_inodes(
    root: str, rules: SecretFiles, bound: int = WALK_BOUND
) -> tuple[SecretInodes, bool]:
    """The secret files under ``root`` (names the globs make secret, symlinks
    not followed) by device and inode, and whether the walk stopped at
    ``bound`` entries (then more may be there)."""
    files, stopped = _files(root, bound)
    found: SecretInodes = {}
    for name in files:
        glob = rules.matched_by(name)
        if glob is None:
            continue
        try:
            other = os.stat(os.path.join(root, *name.split("/")), follow_symlinks=False)
        except OSError:
            continue
        found.setdefault((other.st_dev, other.st_ino), (name, glob))
    return found, stopped


def secret_name_of(sandbox: Sandbox, rel: str, bound: int | None = None) -> str | None:
    """Why the hard link ``rel`` asks as a secret file: another of its names
    in the workspace is one (the same inode), or the workspace is too large
    to look; None when no name of it found is secret."""
    if not sandbox.secret_files:
        return None
    try:
        st = os.stat(sandbox.abspath(rel), follow_symlinks=False)
    except OSError:
        return None
    bound = WALK_BOUND if bound is None else bound
    inodes, stopped = secret_inodes(sandbox.root, sandbox.secret_files, bound)
    other = inodes.get((st.st_dev, st.st_ino))
    if other is not None:
        name, glob = other
        return f"it is another name of {name}, a secret file (tools.secretFiles: {glob!r})"
    if stopped:
        return (
            f"the workspace has more than {bound} entries, too many to look for the secret "
            "file (tools.secretFiles) it may be another name of"
        )
    return None


class SecretInodeTree:
    """The secret files below ``root`` by device and inode, as last seen,
    for a command naming a hard link (:mod:`rein.tools.secret_commands`).

    The first looks walk the workspace, at most :data:`WALK_BOUND` entries
    each (the rest waits for the next look; meanwhile the answer is "may be
    one", asked); later looks ``lstat`` each folder remembered and read
    again only those whose change time (or inode) moved: an entry added,
    removed or renamed in a folder (a new hard link, an editor's save by
    rename) moves it, and a command can set a folder's modification time
    back, never its change time. A folder read in the same tick as its
    last change is read again at the next look. Symlinks are not followed.
    Past :data:`TREE_BOUND` entries remembered the answer stays "may be
    one"."""

    def __init__(self, root: str, rules: SecretFiles) -> None:
        self.root = root
        self.rules = rules
        #: folder (relative, "" the root) -> (change time or -1, inode).
        self._seen: dict[str, tuple[int, int]] = {}
        #: folder -> its child folders, its entry count, its secret files.
        self._children: dict[str, list[str]] = {}
        self._counts: dict[str, int] = {}
        self._total = 0
        self._secrets: dict[str, SecretInodes] = {}
        #: Folders to read (new, or changed since read).
        self._pending: list[str] = [""]
        self._lock = threading.Lock()

    def look(self, budget: int | None = None) -> tuple[SecretInodes, bool]:
        """The secret files by inode now, and whether the tree is not whole
        yet (then more may be there); at most ``budget`` entries read
        (:data:`WALK_BOUND`)."""
        budget = WALK_BOUND if budget is None else budget
        with self._lock:
            for folder in list(self._seen):
                if folder not in self._seen:
                    continue  # dropped with a vanished parent
                try:
                    st = os.lstat(self._abs(folder))
                except OSError:
                    self._drop(folder)
                    continue
                if not stat.S_ISDIR(st.st_mode):
                    self._drop(folder)
                elif (st.st_ctime_ns, st.st_ino) != self._seen[folder]:
                    self._pending.append(folder)
            while self._pending and self._total <= TREE_BOUND:
                folder = self._pending.pop()
                read = self._read(folder, budget)
                if read is None:
                    self._pending.append(folder)
                    break  # the look's budget is spent: the rest waits
                budget -= read
            found: SecretInodes = {}
            for secrets in self._secrets.values():
                for key, value in secrets.items():
                    found.setdefault(key, value)
            return found, bool(self._pending) or self._total > TREE_BOUND

    def _abs(self, folder: str) -> str:
        return os.path.join(self.root, *folder.split("/")) if folder else self.root

    def _read(self, folder: str, budget: int) -> int | None:
        """Read ``folder``'s entries (at most ``budget``): its entry count,
        or None when it holds more (nothing of it kept)."""
        try:
            st = os.lstat(self._abs(folder))
            if not stat.S_ISDIR(st.st_mode):
                self._drop(folder)
                return 0
            entries = os.scandir(self._abs(folder))
        except OSError:
            self._drop(folder)
            return 0
        children: list[str] = []
        secrets: SecretInodes = {}
        count = 0
        with entries:
            for entry in entries:
                count += 1
                if count > budget:
                    return None
                rel = f"{folder}/{entry.name}" if folder else entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        children.append(rel)
                        continue
                    glob = self.rules.matched_by(rel)
                    if glob is not None:
                        other = entry.stat(follow_symlinks=False)
                        secrets.setdefault((other.st_dev, other.st_ino), (rel, glob))
                except OSError:
                    continue
        recent = time.time_ns() - st.st_ctime_ns < RECENT_NS
        self._seen[folder] = (-1 if recent else st.st_ctime_ns, st.st_ino)
        for gone in set(self._children.get(folder, ())) - set(children):
            self._drop(gone)
        self._children[folder] = children
        self._total += count - self._counts.get(folder, 0)
        self._counts[folder] = count
        self._secrets[folder] = secrets
        self._pending.extend(c for c in children if c not in self._seen)
        return count

    def _drop(self, folder: str) -> None:
        """Forget ``folder`` and everything below it."""
        pending = [folder]
        while pending:
            here = pending.pop()
            self._seen.pop(here, None)
            self._total -= self._counts.pop(here, 0)
            self._secrets.pop(here, None)
            pending.extend(self._children.pop(here, ()))


#: The trees of the workspaces last looked at, by root and rules.
_TREES: OrderedDict[tuple[str, SecretFiles], SecretInodeTree] = OrderedDict()
_TREES_LOCK = threading.Lock()


def workspace_secret_inodes(root: str, rules: SecretFiles) -> tuple[SecretInodes, bool]:
    """:meth:`SecretInodeTree.look` of the workspace ``root``'s tree, kept
    between calls (for the :data:`_TREES_KEPT` workspaces last asked)."""
    with _TREES_LOCK:
        key = (root, rules)
        tree = _TREES.get(key)
        if tree is None:
            tree = _TREES[key] = SecretInodeTree(root, rules)
        _TREES.move_to_end(key)
        while len(_TREES) > _TREES_KEPT:
            _TREES.popitem(last=False)
    return tree.look()
