"""What a checkpoint keeps of a file besides its text: its mode and, for
a symbolic link, the link itself.

A file's text goes through the :class:`~rein.harness.ports.Workspace` (the
editor's buffer, the disk); its permission bits and whether it is a link
are the disk's own, read and set here with ``lstat``, ``fchmod`` and
``symlink`` (:class:`DiskFileMeta`; set through descriptors opened without
following a link, so a path swapped for a link meanwhile is refused, never
followed out of the workspace): a script the run deleted comes back
executable, a link the run removed comes back as the link.
:class:`FileMeta` is the seam (unit tests give a workspace in memory none:
:class:`NoFileMeta`, and modes and links are then simply not known).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import stat
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import anyio

__all__ = ["DiskFileMeta", "FileMeta", "Meta", "NoFileMeta", "format_mode", "led_to"]

_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW
_FILE = _NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY


def led_to(path: str, link: str) -> str | None:
    """The workspace-relative path the symbolic link at ``path`` (itself
    workspace-relative) names with ``link``, one step, not followed
    further; None when it names a path outside the workspace or an
    absolute one."""
    if posixpath.isabs(link):
        return None
    target = posixpath.normpath(posixpath.join(posixpath.dirname(path), link))
    if target in (".", "..") or target.startswith("../"):
        return None
    return target


@dataclass(frozen=True, slots=True)
class Meta:
    """A path on disk as ``lstat`` sees it."""

    #: The permission bits (``stat.S_IMODE``: read, write and execute for
    #: the owner, group and others, and setuid, setgid, sticky) of a
    #: regular file; None for a link or anything else.
    mode: int | None = None
    #: The target of a symbolic link, as the link says it (relative or not).
    link: str | None = None


class FileMeta(Protocol):
    """Modes and links of a workspace's files (paths workspace-relative)."""

    async def meta(self, path: str) -> Meta | None:
        """The path's :class:`Meta` (the link itself, not followed); None
        when nothing is there or it cannot be known."""
        ...

    async def set_mode(self, path: str, mode: int) -> None:
        """Set the permission bits of the regular file ``path`` (OSError)."""
        ...

    async def make_link(self, path: str, target: str) -> None:
        """Make ``path`` a symbolic link to ``target``, replacing what is
        there in one step (a link made aside, then renamed over it; OSError)."""
        ...


class NoFileMeta:
    """A workspace with no disk behind it: nothing is known, nothing set."""

    async def meta(self, path: str) -> Meta | None:
        return None

    async def set_mode(self, path: str, mode: int) -> None:
        raise OSError("this workspace has no file modes")

    async def make_link(self, path: str, target: str) -> None:
        raise OSError("this workspace cannot make symbolic links")


class DiskFileMeta:
    """:class:`FileMeta` of the folder ``root`` on disk. A path that leaves
    the root (``..``, absolute, or through a linked folder) is never read
    or changed: :meth:`meta` answers None, the others raise OSError."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._root = Path(os.path.realpath(root))

    def _path(self, rel: str) -> Path:
        """``rel`` under the root, its folder resolved, the last part not
        followed (the link itself)."""
        if os.path.isabs(rel) or ".." in Path(rel).parts:
            raise OSError(f"{rel!r} is not a path inside the workspace")
        full = self._root / rel
        parent = Path(os.path.realpath(full.parent))
        if parent != self._root and self._root not in parent.parents:
            raise OSError(f"{rel!r} leads outside the workspace")
        return parent / full.name

    def _meta(self, rel: str) -> Meta | None:
        try:
            path = self._path(rel)
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                return Meta(link=os.readlink(path))
        except OSError:
            return None
        return Meta(mode=stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None)

    async def meta(self, path: str) -> Meta | None:
        return await anyio.to_thread.run_sync(self._meta, path)

    def _open_folder(self, folder: Path, create: bool = False) -> int:
        """A descriptor of ``folder`` (under the root), opened one part at a
        time from the root without following a link: a folder swapped for a
        link after :meth:`_path` looked is refused (OSError), never followed
        out. ``create`` makes the missing parts (``mkdir`` by descriptor)."""
        fd = os.open(self._root, _FOLDER)
        try:
            for part in folder.relative_to(self._root).parts:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=fd)
                inner = os.open(part, _FOLDER, dir_fd=fd)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _chmod(self, rel: str, mode: int) -> None:
        full = self._path(rel)
        folder = self._open_folder(full.parent)
        try:
            # O_NOFOLLOW: a link there now is refused (ELOOP), never chmodded
            # through; O_NONBLOCK: a fifo does not hold the open.
            try:
                fd = os.open(full.name, _FILE | os.O_RDONLY, dir_fd=folder)
            except PermissionError:  # not readable by its owner: opened to write
                fd = os.open(full.name, _FILE | os.O_WRONLY, dir_fd=folder)
        finally:
            os.close(folder)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(f"{rel} is not a regular file")
            os.fchmod(fd, mode)
        finally:
            os.close(fd)

    async def set_mode(self, path: str, mode: int) -> None:
        await anyio.to_thread.run_sync(self._chmod, path, mode)

    def _symlink(self, rel: str, target: str) -> None:
        full = self._path(rel)
        folder = self._open_folder(full.parent, create=True)
        try:
            aside = f".{full.name}.{uuid.uuid4().hex[:8]}.rein-tmp"
            os.symlink(target, aside, dir_fd=folder)
            try:
                # A folder there refuses (IsADirectoryError).
                os.replace(aside, full.name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(aside, dir_fd=folder)
                raise
        finally:
            os.close(folder)

    async def make_link(self, path: str, target: str) -> None:
        await anyio.to_thread.run_sync(self._symlink, path, target)


def format_mode(mode: int) -> str:
    """``755``: the permission bits as ``chmod`` takes them."""
    return f"{mode:o}" if mode <= 0o777 else f"{mode:04o}"
