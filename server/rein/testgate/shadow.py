"""A copy of the workspace for the tests to run in.

A shadow tree copies the workspace under a private temporary directory:
real directories and real files (a test that writes a file of the
workspace writes the copy, and ``Path(__file__).resolve()`` stays in the
shadow), the *overlaid* files written from their text. For the state
being judged the overlay is the workspace port's text of every changed
file (what the editor or the ACP client holds, unsaved or not); for the
baseline it is each changed file's text before the run's first change,
created files left out, deleted ones restored. The person's files and
buffers are never written.

Two kinds of things are symlinks to the real ones rather than copies:
environment folders (:data:`LINKED_WHOLE`, and any folder holding a
``pyvenv.cfg``), so an interpreter or a package in them still works, and a
file bigger than :data:`MAX_COPIED_BYTES`; a symlinked folder of the
workspace stays a symlink too. A test that writes into one of these writes
the real one. An overlaid path under such a link cannot be written without
reaching the real folder: it is left out and named in
:attr:`Shadow.unreachable`. A repository's metadata and caches are left
out (:data:`SKIPPED`).

A :class:`ShadowTree` is kept between runs and brought up to date before
each (:meth:`ShadowTree.sync`): only what changed in the workspace or the
overlay is placed again, and what a run left behind is undone, so each run
sees a fresh shadow without a new copy. :func:`build_shadow` is a tree's
first sync, owned by the :class:`Shadow` it returns (a throwaway shadow).
"""

from __future__ import annotations

import asyncio
import fcntl
import functools
import logging
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from rein.testgate.pycache import (
    TREE_PREFIX,
    drop_compiled,
    drop_foreign,
    drop_mirror,
    mirror,
    shared_prefix,
)

__all__ = [
    "LINKED_WHOLE",
    "MAX_COPIED_BYTES",
    "SKIPPED",
    "Seen",
    "Shadow",
    "ShadowTree",
    "build_shadow",
    "close_shadow",
    "in_tool_cache",
    "inside",
    "open_shadow",
    "seen_now",
    "source_seen",
    "sync_shadow",
]

log = logging.getLogger(__name__)

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
        # pytest-benchmark's saved runs (a `run_command` of pytest writes them).
        ".benchmarks",
    }
)


def in_tool_cache(path: str) -> bool:
    """``path`` (relative to the workspace) lies in a folder the shadow
    leaves out (:data:`SKIPPED`): no test the gate runs can read it."""
    return any(part in SKIPPED for part in path.split("/")[:-1])


#: Folders linked whole (a symlink to the real folder, never walked).
LINKED_WHOLE = frozenset({"node_modules", ".venv", "venv", "site-packages"})
#: A file bigger than this is a symlink to the real one, not a copy.
MAX_COPIED_BYTES = 8 * 1024 * 1024
#: How long the verdict waits for a shadow's deletion (it goes on after).
REMOVE_WAIT_S = 30.0


@dataclass(slots=True)
class Shadow:
    """A built shadow tree; :meth:`remove` deletes it (never the workspace)."""

    root: Path
    #: The workspace it mirrors.
    source: Path
    #: Files copied, linked (too big) and written, for the detail and the bench.
    copied: int = 0
    linked: int = 0
    written: int = 0
    #: Overlaid paths under a linked folder: not in the shadow as overlaid.
    unreachable: list[str] = field(default_factory=list)
    #: Where the tests' interpreter keeps compiled modules
    #: (``PYTHONPYCACHEPREFIX``, :mod:`rein.testgate.pycache`), so no
    #: ``__pycache__`` is written near a source file, the workspace's included.
    pycache: Path | None = None
    #: The tree's owner lock (held while the shadow lives; see :class:`ShadowTree`).
    owner: IO[bytes] | None = field(default=None, repr=False)
    #: What the sync saw of the workspace: the overlaid paths, and each
    #: other path's kind and stat (:func:`source_seen` walked then, minus
    #: the overlay). A later walk that differs: the workspace changed.
    seen: Seen | None = field(default=None, repr=False)

    @property
    def private(self) -> Path:
        """The shadow's own temporary folder, beside its root (reports,
        the gate's pytest plugin, an empty ini)."""
        return self.root.parent

    def own(self, name: str) -> Path:
        """A file or folder of the gate's own in :attr:`private`, beside the
        tree: named after the tree (which is named as the workspace), so
        never the tree itself, whatever the workspace is called (one named
        ``plugin`` had the gate's plugin written into its copy)."""
        return self.private / f"{self.root.name}.{name}"

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
        if self.pycache is not None:
            drop_mirror(self.private, [self.pycache])
        shutil.rmtree(self.private, ignore_errors=True)
        if self.owner is not None:
            self.owner.close()


def inside(root: Path, rel: str) -> bool:
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
    workspace-relative POSIX strings. :meth:`Shadow.remove` deletes it."""
    tree = ShadowTree(source)
    tree.keep()
    try:
        return tree.sync(overlay)
    except BaseException:
        tree.remove()
        raise


#: What a path of the shadow must be: a folder, a link (to its target;
#: counted as a linked file or not), a copy of a source file (its stat), or
#: an overlaid text.
_Want = (
    tuple[Literal["dir"]]
    | tuple[Literal["link"], str, bool]
    | tuple[Literal["file"], tuple[int, int, int]]
    | tuple[Literal["text"], str]
)


#: What a sync saw of the workspace (:attr:`Shadow.seen`).
Seen = tuple[frozenset[str], dict[str, _Want]]


def _stat(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_size, info.st_mtime_ns, info.st_ino


def source_seen(source: Path) -> dict[str, _Want]:
    """What a sync of ``source`` copies, links and makes: each path (but the
    :data:`SKIPPED` folders and what linked folders hold) with its kind and,
    for a copied file, its stat (size, mtime in ns, inode)."""
    wanted: dict[str, _Want] = {}
    for folder, dirs, files in os.walk(source):
        here = Path(folder)
        rel_folder = here.relative_to(source).as_posix()
        prefix = "" if rel_folder == "." else f"{rel_folder}/"
        kept: list[str] = []
        for name in dirs:
            path = here / name
            if name in SKIPPED:
                continue
            if name in LINKED_WHOLE or path.is_symlink() or _is_environment(path):
                wanted[prefix + name] = ("link", str(path), False)
                continue
            wanted[prefix + name] = ("dir",)
            kept.append(name)
        dirs[:] = kept
        for name in files:
            wanted[prefix + name] = _file_want(here / name)
    return wanted


def seen_with(source: Path, overlay: Mapping[str, str | None]) -> Seen:
    """What a sync with ``overlay`` sees of ``source`` now: an overlaid
    path is not the source's (a folder is: it holds others)."""
    return frozenset(overlay), {
        rel: want
        for rel, want in source_seen(source).items()
        if rel not in overlay or want[0] == "dir"
    }


def seen_now(source: Path, seen: Sequence[Seen]) -> bool:
    """Whether the workspace is now as each of these syncs saw it (one
    walk; False with no sync: nothing says what it was)."""
    if not seen:
        return False
    now = source_seen(source)
    for overlay, saw in seen:
        if {p: w for p, w in now.items() if p not in overlay or w[0] == "dir"} != saw:
            return False
    return True


class ShadowTree:
    """A shadow kept between runs (a verdict's, a run's verdicts'): each
    :meth:`sync` makes it the workspace with an overlay again. A file it
    placed (a copy, an overlaid text) stays when neither its source nor the
    shadow's file changed since; anything else is placed again, and what
    the runs left behind (files and folders a test created, changed or
    deleted) is undone. The compiled modules of the runs (the interpreter's
    and pytest's rewritten test modules, :mod:`rein.testgate.pycache`)
    stay, so a later run imports them; a placed module's compiled files
    are deleted with it (their stamp is the size and the whole second: a
    same-size text placed in the same second would not invalidate them),
    and so are a removed folder's.

    The tree's folder holds an owner lock (:data:`OWNER`, an exclusive
    ``flock`` held while the tree lives): a new tree deletes the trees
    whose lock no process holds (their owner was killed before it could
    delete them), with their compiled modules."""

    def __init__(self, source: Path, shared_pycache: Path | None = None) -> None:
        self.source = source
        #: The runs' ``PYTHONPYCACHEPREFIX``: the user's, shared
        #: (:func:`~rein.testgate.pycache.shared_prefix`), and the tree's own
        #: (named apart from the root) for a sandboxed run.
        self.shared_pycache = shared_pycache if shared_pycache is not None else shared_prefix()
        sweep_orphans(self.shared_pycache)
        base = Path(tempfile.mkdtemp(prefix=TREE_PREFIX))
        self._owner = _own(base)
        self.root = base / source.name
        self.root.mkdir()
        self.own_pycache = base / f"{source.name}.pycache"
        #: rel -> (what was placed there, the placed file's stat or None).
        self._held: dict[str, tuple[_Want, tuple[int, int, int] | None]] = {}
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _delete, base, self.shared_pycache, self._owner)

    @property
    def _prefixes(self) -> tuple[Path, Path]:
        return self.shared_pycache, self.own_pycache

    def keep(self) -> None:
        """Leave the folder when this object goes (a :class:`Shadow` owns it)."""
        self._finalizer.detach()

    def remove(self) -> None:
        """Delete the tree (after a sync still going on in another thread)."""
        with self._lock:
            _delete(self.root.parent, self.shared_pycache, self._owner)
            self._held = {}

    def sync(self, overlay: Mapping[str, str | None], *, shared: bool = True) -> Shadow:
        """The tree made ``source`` with ``overlay`` (as :func:`build_shadow`);
        ``shared``: its runs use the user's compiled modules, else the
        tree's own (a sandboxed run writes only the tree's folder)."""
        with self._lock:
            pycache = self.shared_pycache if shared else self.own_pycache
            shadow = Shadow(root=self.root, source=self.source, pycache=pycache, owner=self._owner)
            wanted = self._wanted(overlay, shadow)
            # What earlier runs compiled of paths no tree owns or links to.
            drop_foreign(pycache, [Path(w[1]) for w in wanted.values() if w[0] == "link"])
            held, self._held = self._held, {}  # a sync that fails places all again
            kept = self._prune(wanted, held)
            self._held = self._place(wanted, kept, held, shadow)
            return shadow

    def _wanted(self, overlay: Mapping[str, str | None], shadow: Shadow) -> dict[str, _Want]:
        shadow.seen = seen_with(self.source, overlay)
        wanted = dict(shadow.seen[1])
        for rel, text in overlay.items():
            if not _reachable(rel, wanted):
                # Under a linked folder: writing would reach the real one.
                shadow.unreachable.append(rel)
                continue
            if text is None:
                continue
            parts = rel.split("/")
            for depth in range(1, len(parts)):
                wanted.setdefault("/".join(parts[:depth]), ("dir",))
            wanted[rel] = ("text", text)
        return wanted

    def _prune(
        self, wanted: dict[str, _Want], held: dict[str, tuple[_Want, tuple[int, int, int] | None]]
    ) -> set[str]:
        """Delete what is not as wanted; the paths kept."""
        kept: set[str] = set()
        for folder, dirs, files in os.walk(self.root):
            here = Path(folder)
            rel_folder = here.relative_to(self.root).as_posix()
            prefix = "" if rel_folder == "." else f"{rel_folder}/"
            walk: list[str] = []
            for name in dirs:
                rel, path = prefix + name, here / name
                if name == "__pycache__" and not path.is_symlink():
                    continue  # the interpreter's: kept, not walked
                want = wanted.get(rel)
                if path.is_symlink():
                    if want is not None and want[0] == "link" and os.readlink(path) == want[1]:
                        kept.add(rel)
                    else:
                        path.unlink()
                elif want == ("dir",):
                    kept.add(rel)
                    walk.append(name)
                else:
                    drop_mirror(path, self._prefixes)  # a test's modules in it
                    shutil.rmtree(path)
            dirs[:] = walk
            for name in files:
                rel, path = prefix + name, here / name
                want = wanted.get(rel)
                if path.is_symlink():
                    ok = want is not None and want[0] == "link" and os.readlink(path) == want[1]
                else:
                    ok = want is not None and held.get(rel) == (want, _stat(path.lstat()))
                if ok:
                    kept.add(rel)
                else:
                    path.unlink()
                    self._drop_compiled(path)
        return kept

    def _drop_compiled(self, module: Path) -> None:
        drop_compiled(module, self._prefixes)

    def _place(
        self,
        wanted: dict[str, _Want],
        kept: set[str],
        held: dict[str, tuple[_Want, tuple[int, int, int] | None]],
        shadow: Shadow,
    ) -> dict[str, tuple[_Want, tuple[int, int, int] | None]]:
        """Place what ``wanted`` has and the shadow lacks; what it now holds."""
        now: dict[str, tuple[_Want, tuple[int, int, int] | None]] = {}
        for rel in sorted(wanted):  # a folder before what it holds
            want = wanted[rel]
            if rel in kept:
                now[rel] = held.get(rel, (want, None))
                continue
            target = self.root / rel
            if want[0] == "dir":
                target.mkdir()
            elif want[0] == "link":
                target.symlink_to(want[1])
                shadow.linked += want[2]
            elif want[0] == "file":
                shutil.copy2(self.source / rel, target)
                shadow.copied += 1
            else:
                target.write_text(want[1], encoding="utf-8", newline="")
                shadow.written += 1
            if want[0] in ("file", "text"):
                self._drop_compiled(target)
                now[rel] = (want, _stat(target.lstat()))
            else:
                now[rel] = (want, None)
        return now


def _file_want(real: Path) -> _Want:
    """A copy of ``real`` (its mode and times kept), or a link to it when
    it is too big, dangling or not a regular file."""
    try:
        info = real.stat()
    except OSError:  # a dangling symlink: it dangles in the shadow too
        return ("link", os.readlink(real), False)
    if not real.is_file() or info.st_size > MAX_COPIED_BYTES:
        return ("link", str(real), True)
    return ("file", _stat(info))


def _reachable(rel: str, wanted: Mapping[str, _Want]) -> bool:
    """``rel`` lies in the shadow's own folders: no part of it is ``..``
    and no folder on its way is a link to a real one."""
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return False
    for depth in range(1, len(parts)):
        want = wanted.get("/".join(parts[:depth]))
        if want is not None and want[0] != "dir":
            return False
    return True


#: The owner lock's file in a tree's folder.
OWNER = ".owner"


def _own(base: Path) -> IO[bytes]:
    """The lock of the tree in ``base``, held (by this open file): taken
    before it has its name, so no sweep finds it free."""
    lock = (base / f"{OWNER}.new").open("wb")
    fcntl.flock(lock, fcntl.LOCK_EX)
    (base / f"{OWNER}.new").rename(base / OWNER)
    return lock


def _delete(base: Path, shared: Path, owner: IO[bytes] | None) -> None:
    """A tree's folder and the shared prefix's compiled modules of it."""
    drop_mirror(base, [shared])
    shutil.rmtree(base, ignore_errors=True)
    if owner is not None:
        owner.close()


def sweep_orphans(shared: Path | None = None) -> list[Path]:
    """Delete the trees in the temporary folder whose owner lock no process
    holds, and the shared prefix's modules of trees that are gone; the
    trees deleted. A tree without a lock file is left (it may be one being
    made, or another version's)."""
    shared = shared if shared is not None else shared_prefix()
    temp = Path(tempfile.gettempdir())
    swept: list[Path] = []
    for base in temp.glob(TREE_PREFIX + "*"):
        try:
            lock = (base / OWNER).open("rb")
        except OSError:
            continue
        with lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its owner lives
            _delete(base, shared, None)
            swept.append(base)
    for folder in {temp, temp.resolve()}:
        for mirrored in mirror(shared, folder).glob(TREE_PREFIX + "*"):
            if not (folder / mirrored.name).exists():
                shutil.rmtree(mirrored, ignore_errors=True)
    return swept


async def sync_shadow(
    tree: ShadowTree, overlay: Mapping[str, str | None], *, shared: bool = True
) -> Shadow:
    """:meth:`ShadowTree.sync` off the event loop. Cancelled meanwhile, the
    sync goes on in its thread; the tree's next sync or removal waits for it."""
    return await asyncio.to_thread(functools.partial(tree.sync, overlay, shared=shared))


async def open_shadow(source: Path, overlay: Mapping[str, str | None]) -> Shadow:
    """:func:`build_shadow` off the event loop. Cancelled meanwhile (or the
    loop ending), the shadow the thread goes on to build is deleted, never
    left behind: by the thread itself when it finishes after the cancel,
    else at the cancel."""
    lock = threading.Lock()
    abandoned = False
    built: Shadow | None = None

    def build() -> Shadow:
        nonlocal built
        shadow = build_shadow(source, overlay)
        with lock:
            if abandoned:
                shadow.remove()
            else:
                built = shadow
        return shadow

    task = asyncio.ensure_future(asyncio.to_thread(build))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with lock:
            abandoned = True
            orphan = built
        if orphan is not None:
            _remove_soon(orphan)
        raise


def _remove_soon(shadow: Shadow) -> None:
    try:
        asyncio.get_running_loop().run_in_executor(None, shadow.remove)
    except RuntimeError:  # the loop's executor is shutting down: delete it here
        shadow.remove()


async def close_shadow(shadow: Shadow, wait_s: float = REMOVE_WAIT_S) -> None:
    """Delete ``shadow`` in a worker thread, waiting at most ``wait_s``
    (a big tree on a slow disk); the deletion goes on after that, and the
    event loop's executor is waited for when it shuts down. Cancelled
    meanwhile, it goes on too."""
    removal = asyncio.ensure_future(asyncio.to_thread(shadow.remove))
    try:
        await asyncio.wait_for(asyncio.shield(removal), wait_s)
    except TimeoutError:
        log.debug("tests gate: %s is still being deleted", shadow.private)
