"""A throwaway copy of the workspace for the tests to run in.

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
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "LINKED_WHOLE",
    "MAX_COPIED_BYTES",
    "SKIPPED",
    "Shadow",
    "build_shadow",
    "close_shadow",
    "inside",
    "open_shadow",
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
    }
)
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

    @property
    def private(self) -> Path:
        """The shadow's own temporary folder, beside its root (reports,
        the gate's pytest plugin, an empty ini)."""
        return self.root.parent

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
    workspace-relative POSIX strings."""
    base = Path(tempfile.mkdtemp(prefix="rein-tests-"))
    root = base / source.name
    root.mkdir()
    shadow = Shadow(root=root, source=source)
    try:
        _mirror(source, root, overlay, shadow)
        for rel, text in overlay.items():
            if not inside(root, rel):
                # Under a linked folder: writing would reach the real one.
                shadow.unreachable.append(rel)
                continue
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
            if rel not in overlay:
                _place(here / name, out / name, shadow)


def _place(real: Path, copy: Path, shadow: Shadow) -> None:
    """A copy of ``real`` (its mode and times kept), or a link to it when
    it is too big, dangling or not a regular file."""
    try:
        info = real.stat()
    except OSError:  # a dangling symlink: it dangles in the shadow too
        copy.symlink_to(os.readlink(real))
        return
    if not real.is_file() or info.st_size > MAX_COPIED_BYTES:
        copy.symlink_to(real)
        shadow.linked += 1
        return
    shutil.copy2(real, copy)
    shadow.copied += 1


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
