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

Looking is cheap after the first time: :class:`FolderTree` remembers every
folder with its change time and inode, and a look stats each one and
reads again only the folders whose entries changed (a ``.git`` made or
renamed into a folder changes that folder's change time, which, unlike
its modification time, no command can set back). The first look
reads every folder; a folder changed in the last two seconds when it was
read is read again at the next look (a change in the same tick of the
file system's clock leaves the time as it was). Neither follows symlinks (a link is mounted as what it
points to, and the workspace's own links point where they point for git
too) nor enters a ``.git``. Past :data:`MAX_FOLDERS` folders the first
look stops and logs it (such a workspace's deeper repositories go
unwatched; one found there later, when a command has made room, counts
as there before). A ``.git`` file naming a folder inside the root's own
``.git`` (a submodule's, a worktree's: git made it, and what it names is
read-only) is never taken for planted, when that ``.git`` was there at a
command's start (one a command made is moved aside, and so is what names
it). A symbolic link no start saw that leads out of the root to a folder
whose repository lies where the commands may write (their temporary
folder, the build caches) counts as planted too: git, started in the
link, resolves it and runs that repository's config.

The looks are slow in a large workspace (a first one reads every folder:
seconds with tens of thousands), so a sandbox's commands await them in a
worker thread (:func:`off_loop`: at most :data:`LOOK_THREADS` at once, in
the whole process), never on the server's event loop; one sandbox's looks
take turns (a lock: a tree is never looked at twice at once).
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import anyio
import anyio.to_thread

__all__ = [
    "LOOK_THREADS",
    "MAX_FOLDERS",
    "FolderTree",
    "NestedRepositories",
    "nested_git",
    "off_loop",
]

_T = TypeVar("_T")

log = logging.getLogger(__name__)

#: Folders remembered at most (a workspace with more is looked at that far).
MAX_FOLDERS = 200_000

#: A folder changed this recently (nanoseconds) when it was read is read
#: again at the next look: a change in the same tick of the file system's
#: clock would leave its time as it was.
RECENT_NS = 2_000_000_000

#: Worker threads looking at once, in the whole process (each look holds
#: its sandbox's lock; more sandboxes' looks wait for a thread).
LOOK_THREADS = 2
_LOOKS = anyio.CapacityLimiter(LOOK_THREADS)


async def off_loop(look: Callable[[], _T]) -> _T:
    """``look()`` (a :class:`NestedRepositories` look, or what calls one) in a
    worker thread: the event loop answers meanwhile. Cancelled (an abort),
    the caller goes on at once; the look ends in its thread, under its lock,
    as if it had been awaited (a start's look counts, an end's planted ones
    are found again at the next end)."""
    return await anyio.to_thread.run_sync(look, limiter=_LOOKS, abandon_on_cancel=True)


class FolderTree:
    """The folders below ``root`` as last seen, and the ``.git`` entries
    among them (but the root's own)."""

    def __init__(self, root: str, max_folders: int = MAX_FOLDERS) -> None:
        self.root = root
        self.max_folders = max_folders
        #: folder -> (ctime_ns, inode) when its entries were last read (the
        #: change time: a command can set a folder's modification time back,
        #: never its change time).
        self._seen: dict[str, tuple[int, int]] = {}
        #: Folders the first look left unread at :data:`MAX_FOLDERS`.
        self._unread: set[str] = set()
        #: ``.git`` entries first found below such a folder: there before
        #: any command, as far as anyone can tell (never planted).
        self.late: set[str] = set()
        #: folder -> its child folders then.
        self._children: dict[str, list[str]] = {}
        #: The ``.git`` entries found (absolute paths).
        self._git: set[str] = set()
        #: folder -> the symbolic links in it (but a ``.git``), as last read.
        self._links: dict[str, tuple[str, ...]] = {}
        self._full_logged = False

    def look(self) -> frozenset[str]:
        """Every ``.git`` entry (folder, file or link) below the root now,
        as absolute paths: the folders whose entries changed since the last
        look are read again (all of them the first time)."""
        if not self._seen:
            self._read_new(self.root)
        else:
            for folder in list(self._seen):
                if folder not in self._seen:
                    continue  # dropped with a changed parent's vanished child
                try:
                    st = os.lstat(folder)
                except OSError:
                    self._drop(folder)
                    continue
                if not stat.S_ISDIR(st.st_mode):
                    self._drop(folder)
                elif (st.st_ctime_ns, st.st_ino) != self._seen[folder]:
                    self._read_again(folder, st)
        return frozenset(self._git)

    def links(self) -> set[str]:
        """The symbolic links below the root (but ``.git`` ones) as the last
        look saw them."""
        return {link for links in self._links.values() for link in links}

    def _entries(self, folder: str, st: os.stat_result) -> list[str] | None:
        """Read ``folder`` (stat'ed as ``st`` before): its child folders,
        its ``.git`` noted. None: it cannot be read."""
        try:
            entries = os.scandir(folder)
        except OSError:
            return None
        folders: list[str] = []
        links: list[str] = []
        git = os.path.join(folder, ".git")
        self._git.discard(git)
        with entries:
            for entry in entries:
                if entry.name == ".git":
                    if folder != self.root:
                        self._git.add(entry.path)
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    elif entry.is_symlink():
                        links.append(entry.path)
                except OSError:
                    continue
        recent = time.time_ns() - st.st_ctime_ns < RECENT_NS
        self._seen[folder] = (-1 if recent else st.st_ctime_ns, st.st_ino)
        self._children[folder] = folders
        self._links[folder] = tuple(links)
        return folders

    def _read_new(self, top: str) -> None:
        """Read ``top`` and every folder below it. Below a folder left
        unread at the cap, what is found counts as there before (``late``)."""
        late = top in self._unread
        self._unread.discard(top)
        pending = [top]
        while pending:
            folder = pending.pop()
            if len(self._seen) >= self.max_folders:
                self._unread.update(pending, (folder,))
                if not self._full_logged:
                    self._full_logged = True
                    log.warning(
                        "sandbox: stopped looking for git repositories below %s at %d folders",
                        self.root,
                        self.max_folders,
                    )
                return
            try:
                st = os.lstat(folder)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                known = set(self._git)
                pending.extend(self._entries(folder, st) or ())
                if late:
                    self.late.update(self._git - known)

    def _read_again(self, folder: str, st: os.stat_result) -> None:
        """``folder`` changed: its entries read again, new child folders
        read whole, vanished ones forgotten."""
        before = set(self._children.get(folder, ()))
        now = self._entries(folder, st)
        if now is None:
            self._drop(folder)
            return
        for gone in before - set(now):
            self._drop(gone)
        for new in now:
            if new not in self._seen:
                self._read_new(new)

    def _drop(self, folder: str) -> None:
        """Forget ``folder`` and everything below it."""
        pending = [folder]
        while pending:
            here = pending.pop()
            self._seen.pop(here, None)
            self._links.pop(here, None)
            self._git.discard(os.path.join(here, ".git"))
            pending.extend(self._children.pop(here, ()))


def nested_git(root: str, *, max_folders: int = MAX_FOLDERS) -> frozenset[str]:
    """Every ``.git`` entry below ``root`` but its own, read afresh."""
    return FolderTree(root, max_folders).look()


class NestedRepositories:
    """The nested repositories one sandbox has seen: :meth:`before` at a
    command's start (they stay, read-only), :meth:`planted` at its end
    (the ones no command's start saw: a command made them). A repository
    the person makes between two commands is seen at the next start; one
    gone since is forgotten at the next end. Before any start nothing
    counts as planted (nothing was seen to compare with). Both block (they
    read the file system): a thread may call them, one at a time per
    instance (they take turns)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._tree = FolderTree(root)
        self._known: set[str] = set()
        self._started = False
        #: The root's own ``.git`` (resolved) when a start saw it a folder.
        self._own: str | None = None
        #: The symbolic links a start saw (the person's, as far as anyone can tell).
        self._known_links: set[str] = set()
        #: Commands started (:meth:`running`) and not ended (:meth:`ended`):
        #: while one runs, what a start finds new may be its plant.
        self._running = 0
        #: Held by a look: one at a time (the tree and ``_known`` are shared).
        self._lock = threading.Lock()

    def running(self) -> None:
        """A command whose end will be looked at (:meth:`planted`) started."""
        with self._lock:
            self._running += 1

    def ended(self) -> None:
        """Such a command ended (before its :meth:`planted`)."""
        with self._lock:
            self._running = max(0, self._running - 1)

    def before(self) -> tuple[str, ...]:
        """The nested repositories now (sorted), remembered as not planted,
        but those new since the last look while another command runs (the
        sandbox's commands may run at once: what one planted, another's
        start must not take for there; it is planted at the next end)."""
        with self._lock:
            found = self._tree.look()
            if not self._running:
                self._known |= found
                self._known_links |= self._tree.links()
            self._started = True
            own = os.path.join(self.root, ".git")
            self._own = os.path.realpath(own) if os.path.isdir(own) else None
            return tuple(sorted(found))

    def planted(self, writable: Sequence[str] = ()) -> list[str]:
        """The nested repositories now that no start saw (sorted), and the
        symbolic links no start saw that lead to a folder outside the root
        whose repository (the nearest ``.git`` at or above it, as git finds
        it) lies in one of the folders outside the root that the commands
        may write (``writable``: the sandbox's temporary folder, the build
        caches, ...): git, started in such a link (the person's ``git
        status`` in it, the editor showing a file below it), runs that
        repository's config."""
        with self._lock:
            if not self._started:
                return []
            found = self._tree.look()
            self._known |= self._tree.late
            planted = [p for p in found - self._known if not self._names_roots_own(p)]
            self._known &= found
            links = self._tree.links()
            outside = [os.path.realpath(w) for w in writable]
            planted += [p for p in links - self._known_links if self._leads_out(p, outside)]
            self._known_links &= links
            return sorted(planted)

    def _leads_out(self, link: str, writable: Sequence[str]) -> bool:
        """``link`` leads to a folder outside the root whose nearest
        ``.git`` lies in one of the folders ``writable`` (resolved)."""
        if not os.path.isdir(link):
            return False
        here = os.path.realpath(link)
        root = os.path.realpath(self.root)
        if here == root or here.startswith(root + os.sep):
            return False  # its repositories are looked for where they are
        while True:
            if os.path.lexists(os.path.join(here, ".git")):
                return any(here == w or here.startswith(w + os.sep) for w in writable)
            parent = os.path.dirname(here)
            if parent == here:
                return False
            here = parent

    def _names_roots_own(self, entry: str) -> bool:
        """``entry`` is a ``.git`` file naming a folder inside the root's
        own ``.git`` (a submodule's or a worktree's), which the last start
        saw (not one a command made: that is moved aside, and what names it
        is planted)."""
        try:
            with open(entry, encoding="utf-8", errors="replace") as handle:
                first = handle.read(4096).partition("\n")[0]
        except OSError:
            return False  # a folder (or unreadable): not a pointer
        if not first.startswith("gitdir:"):
            return False
        target = os.path.realpath(os.path.join(os.path.dirname(entry), first[7:].strip()))
        own = os.path.realpath(os.path.join(self.root, ".git"))
        return own == self._own and os.path.isdir(own) and target.startswith(own + os.sep)
