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

from rein.tools.sandbox import Sandbox
from rein.tools.secret_files import SecretFiles

__all__ = ["WALK_BOUND", "SecretInodes", "secret_in_folder", "secret_inodes", "secret_name_of"]

#: The workspace's secret files by (device, inode) -> (path, glob).
SecretInodes = dict[tuple[int, int], tuple[str, str]]

#: The most entries a walk looks at before it gives up (and asks).
WALK_BOUND = 5000


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
