"""What a checkpoint keeps of a file besides its text: its mode and, for
a symbolic link, the link itself.

A file's text goes through the :class:`~rein.harness.ports.Workspace` (the
editor's buffer, the disk); its permission bits and whether it is a link
are the disk's own, read and set here with ``lstat``, ``chmod`` and
``symlink`` (:class:`DiskFileMeta`): a script the run deleted comes back
executable, a link the run removed comes back as the link.
:class:`FileMeta` is the seam (unit tests give a workspace in memory none:
:class:`NoFileMeta`, and modes and links are then simply not known).
"""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import anyio

__all__ = ["DiskFileMeta", "FileMeta", "Meta", "NoFileMeta", "format_mode"]


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

    async def set_mode(self, path: str, mode: int) -> None:
        full = self._path(path)

        def chmod() -> None:
            if not stat.S_ISREG(full.lstat().st_mode):
                raise OSError(f"{path} is not a regular file")
            os.chmod(full, mode)

        await anyio.to_thread.run_sync(chmod)

    async def make_link(self, path: str, target: str) -> None:
        full = self._path(path)

        def link() -> None:
            full.parent.mkdir(parents=True, exist_ok=True)
            aside = full.parent / f".{full.name}.{uuid.uuid4().hex[:8]}.rein-tmp"
            os.symlink(target, aside)
            try:
                os.replace(aside, full)  # a folder there refuses (IsADirectoryError)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(aside)
                raise

        await anyio.to_thread.run_sync(link)


def format_mode(mode: int) -> str:
    """``755``: the permission bits as ``chmod`` takes them."""
    return f"{mode:o}" if mode <= 0o777 else f"{mode:04o}"
