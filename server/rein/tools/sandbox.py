"""The path sandbox: every path a tool touches resolves inside the workspace.

:meth:`Sandbox.resolve` turns what the model wrote (relative, or absolute
inside the workspace) into a workspace-relative POSIX path, and refuses with
a :class:`~rein.harness.errors.SandboxError` anything that leaves the root:
``..`` past it, absolute paths elsewhere, ``~``, and symlinks (anywhere on
the way) whose target lies outside.

Deny globs (``approval.denyGlobs``, :attr:`ToolSettings.deny_globs
<rein.tools.settings.ToolSettings.deny_globs>`) name files that are never written and
that are read only with the person's approval. A glob without ``/`` matches
a name at any depth (``.env*``, ``*.pem``); one with ``/`` matches from the
root (``.git/**``); a glob matching a directory covers what is inside it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import PurePosixPath

from rein.harness.errors import SandboxError
from rein.tools._globs import match_path
from rein.tools.settings import DEFAULT_DENY_GLOBS, ToolSettings

__all__ = ["DEFAULT_DENY_GLOBS", "Sandbox"]


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


class Sandbox:
    def __init__(self, root: str, deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS) -> None:
        self.root = os.path.normpath(os.path.abspath(root))
        self.real_root = os.path.realpath(self.root)
        self.deny_globs = tuple(deny_globs)

    @classmethod
    def for_root(cls, root: str, settings: ToolSettings) -> Sandbox:
        return _cached_sandbox(root, settings.deny_globs)

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
        return "." if rel == "." else PurePosixPath(*rel.split(os.sep)).as_posix()

    def real_relative(self, rel: str) -> str:
        """Where ``rel`` really is (after symlinks), relative to the root."""
        real = os.path.realpath(self.abspath(rel))
        if not _inside(real, self.real_root):
            return rel
        out = os.path.relpath(real, self.real_root)
        return "." if out == "." else PurePosixPath(*out.split(os.sep)).as_posix()

    def abspath(self, rel: str) -> str:
        return self.root if rel == "." else os.path.join(self.root, *rel.split("/"))

    def denied_by(self, rel: str) -> str | None:
        """The deny glob that covers ``rel`` (or its symlink target), if any."""
        if rel == ".":
            return None
        candidates = {rel, self.real_relative(rel)}
        for glob in self.deny_globs:
            if any(match_path(glob, candidate) for candidate in candidates):
                return glob
        return None

    def check_writable(self, rel: str) -> None:
        glob = self.denied_by(rel)
        if glob is not None:
            raise SandboxError(
                f"Refused: {rel} matches the protected pattern {glob!r} (approval.denyGlobs); "
                "protected files are never written by tools. Leave it unchanged, or tell "
                "the person what should change there."
            )


@lru_cache(maxsize=32)
def _cached_sandbox(root: str, deny_globs: tuple[str, ...]) -> Sandbox:
    return Sandbox(root, deny_globs)
