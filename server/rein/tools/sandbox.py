"""The path sandbox: every path a tool touches resolves inside the workspace.

:meth:`Sandbox.resolve` turns what the model wrote (relative, or absolute
inside the workspace) into a workspace-relative POSIX path, and refuses with
a :class:`~rein.harness.errors.SandboxError` anything that leaves the root:
``..`` past it, absolute paths elsewhere, ``~``, and symlinks (anywhere on
the way) whose target lies outside.

Deny globs (``approval.denyGlobs``, :attr:`ToolSettings.deny_globs
<rein.tools.settings.ToolSettings.deny_globs>`) name files that are never written and
that are read only with the person's approval. A glob matches at any depth
(``.env*``, ``.git/**`` in a nested repository) unless it starts with ``/``
(then from the root), ignores case, and a glob matching a directory covers
what is inside it (:func:`rein.tools._globs.match_path`). Both the path as
written and where it really is (after symlinks) are checked.

Git's internals: a write into a ``.git`` folder or file anywhere, or one
that would make a folder look like a repository (``HEAD``, ``config``,
``objects/``, ``refs/``: two of them side by side, git's bare layout, whose
``config`` may name commands git runs) needs the person's approval even when
writes are allowed (:meth:`Sandbox.git_internals`).

Secret files (``tools.secretFiles``, :mod:`rein.tools.secret_files`) are
never read: :meth:`Sandbox.secret_by` names the glob that covers a path (as
written or after symlinks), and :meth:`Sandbox.read_disk` refuses one with a
:class:`~rein.tools.secret_files.SecretFileError`, whichever tool asked.

Hard links: a regular file with more than one name may have its other name
outside the workspace, and nothing cheap tells where. Such a file is treated
like a protected one: never written, read only with approval.

:meth:`Sandbox.read_disk` opens a file once, by its resolved path and
without following a final symlink, then checks what it opened (its real path
from the descriptor, that it is a regular file, its link count), so a path
swapped for a symlink between the check and the open is never read.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from rein.harness.errors import SandboxError, ToolError
from rein.tools._globs import match_path
from rein.tools.secret_files import (
    DEFAULT_SECRET_RULES,
    SecretFileError,
    SecretFiles,
    secret_refusal,
)
from rein.tools.settings import DEFAULT_DENY_GLOBS, ToolSettings

__all__ = [
    "DEFAULT_DENY_GLOBS",
    "SNIFF_BYTES",
    "DiskFile",
    "Sandbox",
    "hard_link_reason",
    "hard_link_refusal",
]

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    # A FIFO or device is refused after the open; it must not block the open.
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_READ_CHUNK = 1024 * 1024
#: What is read of a file over the limit: enough to tell binary from text.
SNIFF_BYTES = 8192


#: What makes a folder a (bare) git repository, for :meth:`Sandbox.git_internals`.
_REPOSITORY_MARKERS = ("HEAD", "config", "objects", "refs")


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def _posix(rel: str) -> str:
    return "." if rel == "." else PurePosixPath(*rel.split(os.sep)).as_posix()


def _fd_path(fd: int) -> str | None:
    """The path of an open file from the kernel (Linux's /proc), if known."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class DiskFile:
    """What :meth:`Sandbox.read_disk` opened and read."""

    #: Where the opened file really is, relative to the real root.
    real: str
    size: int
    #: Its link count: more than 1 is a hard link.
    links: int
    #: All of it when ``size <= limit`` (up to ``limit + 1`` bytes should it
    #: grow meanwhile), else only its first 8 KB, to tell binary from text.
    data: bytes


class Sandbox:
    def __init__(
        self,
        root: str,
        deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS,
        secret_files: SecretFiles = DEFAULT_SECRET_RULES,
    ) -> None:
        self.root = os.path.normpath(os.path.abspath(root))
        self.real_root = os.path.realpath(self.root)
        self.deny_globs = tuple(deny_globs)
        self.secret_files = secret_files

    @classmethod
    def for_root(cls, root: str, settings: ToolSettings) -> Sandbox:
        return _cached_sandbox(root, settings.deny_globs, settings.secret_files)

    def resolve(self, path: str) -> str:
        """The workspace-relative POSIX path of ``path`` ("." for the root)."""
        raw = path.strip()
        if raw in ("", ".", "./"):
            return "."
        if "\x00" in raw:
            raise SandboxError(f"Path {path!r} contains a NUL character.")
        if raw.startswith("~"):
            raise SandboxError(
                f"Path {path!r} points into a home directory, outside the workspace "
                f"({self.root}). Use a path relative to the workspace root."
            )
        full = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(self.root, raw))
        rel: str | None = None
        for base in (self.root, self.real_root):
            if _inside(full, base):
                rel = os.path.relpath(full, base)
                break
        if rel is None:
            if os.path.isabs(raw):
                raise SandboxError(
                    f"Path {path!r} is outside the workspace ({self.root}). Only files "
                    "inside the workspace can be used; give a path relative to its root."
                )
            raise SandboxError(
                f"Path {path!r} leads outside the workspace ({self.root}) through '..'. "
                "Only files inside the workspace can be used."
            )
        real = os.path.realpath(full)
        if not _inside(real, self.real_root):
            raise SandboxError(
                f"Path {path!r} goes through a symlink that leads outside the workspace "
                f"(to {real}). Only files inside the workspace can be used."
            )
        return _posix(rel)

    def real_relative(self, rel: str) -> str:
        """Where ``rel`` really is (after symlinks), relative to the root."""
        real = os.path.realpath(self.abspath(rel))
        if not _inside(real, self.real_root):
            return rel
        return _posix(os.path.relpath(real, self.real_root))

    def abspath(self, rel: str) -> str:
        return self.root if rel == "." else os.path.join(self.root, *rel.split("/"))

    def denied_by(self, rel: str, real: str | None = None) -> str | None:
        """The deny glob that covers ``rel`` (or its symlink target, ``real``
        when the caller knows it), if any."""
        if rel == ".":
            return None
        candidates = {rel, real if real is not None else self.real_relative(rel)}
        for glob in self.deny_globs:
            if any(match_path(glob, candidate) for candidate in candidates):
                return glob
        return None

    def secret_by(self, rel: str, real: str | None = None) -> str | None:
        """The ``tools.secretFiles`` glob that makes ``rel`` (or its symlink
        target, ``real`` when the caller knows it) a secret file, if any."""
        if rel == "." or not self.secret_files:
            return None
        return self.secret_files.matched_by(
            rel, real if real is not None else self.real_relative(rel)
        )

    def check_not_secret(self, rel: str) -> None:
        """Raise :class:`SecretFileError` (the model reads it) for a secret file."""
        glob = self.secret_by(rel)
        if glob is not None:
            raise SecretFileError(secret_refusal(rel, glob))

    def git_internals(self, rel: str) -> str | None:
        """Why writing ``rel`` touches a git repository's internals (for the
        approval prompt), or None: a ``.git`` folder or file on its way, or
        a ``HEAD``, ``config``, ``objects/`` or ``refs/`` in a folder that
        then has two of them (a bare repository's layout)."""
        parts = rel.split("/")
        if any(part.lower() == ".git" for part in parts):
            return "it is inside a git repository's internals (.git)"
        for depth, name in enumerate(parts):
            if name not in _REPOSITORY_MARKERS:
                continue
            folder = "/".join(parts[:depth])
            base = self.abspath(folder or ".")
            others = [
                marker
                for marker in _REPOSITORY_MARKERS
                if marker != name and os.path.lexists(os.path.join(base, marker))
            ]
            if others:
                where = folder or "the workspace root"
                return (
                    f"it would make {where} look like a git repository ({name} beside "
                    f"{', '.join(sorted(others))}), whose config git reads when a command "
                    "runs git there"
                )
        return None

    def links(self, rel: str) -> int:
        """The link count of the regular file ``rel`` (after symlinks); 0
        when it is missing or not a regular file."""
        try:
            st = os.stat(self.abspath(rel))
        except OSError:
            return 0
        return st.st_nlink if stat.S_ISREG(st.st_mode) else 0

    def check_writable(self, rel: str) -> None:
        glob = self.denied_by(rel)
        if glob is not None:
            raise SandboxError(
                f"Refused: {rel} matches the protected pattern {glob!r} (approval.denyGlobs); "
                "protected files are never written by tools. Leave it unchanged, or tell "
                "the person what should change there."
            )
        links = self.links(rel)
        if links > 1:
            raise SandboxError(hard_link_refusal(rel, links))

    def read_disk(self, rel: str, limit: int) -> DiskFile | None:
        """Open ``rel`` once and read it (a sniff when over ``limit``); None
        when it is not on disk. Raises SandboxError when what was opened
        lies outside the workspace (a symlink swapped in after
        :meth:`resolve`), ToolError when it is not a regular file, and
        SecretFileError for a secret file (by its name or what it opened)."""
        self.check_not_secret(rel)
        real = os.path.realpath(self.abspath(rel))
        if not _inside(real, self.real_root):
            raise SandboxError(
                f"Path {rel!r} goes through a symlink that leads outside the workspace "
                f"(to {real}). Only files inside the workspace can be used."
            )
        try:
            fd = os.open(real, _OPEN_FLAGS)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise SandboxError(
                    f"{rel} was replaced by a symlink while it was opened; it was not read."
                ) from None
            raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}") from exc
        try:
            st = os.fstat(fd)
            opened = _fd_path(fd)
            if opened is None:
                # No /proc: the file at the checked path must be the one opened.
                again = os.stat(real, follow_symlinks=False)
                same = (again.st_dev, again.st_ino) == (st.st_dev, st.st_ino)
                opened = real if same else ""
            if not _inside(opened, self.real_root):
                raise SandboxError(
                    f"{rel} changed while it was opened and now leads outside the workspace; "
                    "it was not read."
                )
            if stat.S_ISDIR(st.st_mode):
                raise ToolError(
                    f"{rel} is a directory, not a file. Use list_dir to see its entries."
                )
            if not stat.S_ISREG(st.st_mode):
                raise ToolError(f"{rel} is not a regular file (a device, pipe or socket).")
            chunks: list[bytes] = []
            left = limit + 1 if st.st_size <= limit else min(limit + 1, SNIFF_BYTES)
            while left > 0:
                chunk = os.read(fd, min(left, _READ_CHUNK))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
        except OSError as exc:
            raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}") from exc
        finally:
            os.close(fd)
        real_rel = _posix(os.path.relpath(opened, self.real_root))
        glob = self.secret_files.matched_by(real_rel) if self.secret_files else None
        if glob is not None:
            raise SecretFileError(secret_refusal(rel, glob))
        return DiskFile(real_rel, st.st_size, st.st_nlink, b"".join(chunks))


def hard_link_refusal(rel: str, links: int) -> str:
    return (
        f"Refused: {rel} is a hard link (the file has {links} names); another of its names "
        "may be outside the workspace, so tools never write it. Leave it unchanged, or "
        "tell the person what should change there."
    )


def hard_link_reason(links: int) -> str:
    """Why reading a hard link needs approval (for the approval prompt)."""
    return f"it is a hard link ({links} names), and another name may be outside the workspace"


@lru_cache(maxsize=32)
def _cached_sandbox(root: str, deny_globs: tuple[str, ...], secret_files: SecretFiles) -> Sandbox:
    return Sandbox(root, deny_globs, secret_files)
