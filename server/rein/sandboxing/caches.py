"""The build tools' caches inside the sandbox.

The home folder is read-only in the sandbox, so a tool that must write
its cache there fails: ``go test`` cannot compile a changed package
(``~/.cache/go-build``), npm cannot install (``~/.npm``). Making the
person's caches writable would let a sandboxed command plant a build
product that the person's own builds later use, so each workspace gets
caches of its own instead, kept between sessions so a second ``go test``
is as warm as outside: ``$XDG_CACHE_HOME/rein/sandbox/<name>-<hash>``
(:func:`workspace_cache_folder`), bound writable into that workspace's
sandboxes, with the tools' cache variables (:data:`BUILD_CACHES`) pointed
into it. Only sandboxed commands of that workspace write it; nothing
outside the sandbox reads it.

A variable the person set to a folder the sandbox may write anyway (under
the workspace or ``sandbox.writable``) is left as it is, and so is one
that names no absolute path (``GOCACHE=off``). Module and crate stores
(``GOMODCACHE``, ``CARGO_HOME``) are not moved: the commands read the
person's, read-only (a download needs ``sandbox.writable`` for them). The
dependency installs' sandbox keeps its own caches in its temporary folder
(:data:`rein.sandboxing.others.INSTALL_CACHES`).

pnpm's store is named by ``npm_config_store_dir``, which npm (11) does not
know: every npm command it reaches warns ``Unknown env config
"store-dir"`` (and says it will stop working), in the gates' output the
model reads too. So the variable is set only in a workspace that uses pnpm
(:func:`uses_pnpm`: a ``pnpm-lock.yaml`` or ``pnpm-workspace.yaml`` in its
root), here and in the installs' sandbox.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import posixpath
import shutil
import stat
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "BUILD_CACHES",
    "PNPM_VARIABLES",
    "STALE_EMPTY_S",
    "cache_environment",
    "remove_caches_of",
    "remove_if_unused",
    "uses_pnpm",
    "workspace_cache_folder",
]

log = logging.getLogger(__name__)

#: Each cache: its folder in the workspace's cache folder, and the
#: variables that name it (the first is set, the others unset, so an
#: upper-case spelling the tool also reads cannot point elsewhere).
BUILD_CACHES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("go-build", ("GOCACHE",)),
    ("npm", ("npm_config_cache", "NPM_CONFIG_CACHE")),
    ("pnpm-store", ("npm_config_store_dir", "NPM_CONFIG_STORE_DIR")),
    ("yarn", ("YARN_CACHE_FOLDER",)),
    ("pip", ("PIP_CACHE_DIR",)),
    ("uv", ("UV_CACHE_DIR",)),
)

#: The variables that name pnpm's store: set only where pnpm is used.
PNPM_VARIABLES = frozenset({"npm_config_store_dir", "NPM_CONFIG_STORE_DIR"})
#: The files that say a workspace uses pnpm.
PNPM_MARKERS = ("pnpm-lock.yaml", "pnpm-workspace.yaml")


def uses_pnpm(root: str) -> bool:
    """The workspace ``root`` uses pnpm (its lock file or workspace file is
    in the root)."""
    return any(os.path.isfile(os.path.join(root, name)) for name in PNPM_MARKERS)


def workspace_cache_folder(root: str, environ: Mapping[str, str] = os.environ) -> str:
    """Where the sandboxed commands of the workspace ``root`` keep their
    build caches (not made here)."""
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    digest = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:16]
    name = posixpath.basename(root.rstrip("/")) or "root"
    return os.path.join(base, "rein", "sandbox", f"{name}-{digest}")


#: An empty cache folder untouched this long is a leftover (its session's
#: process was killed before it could remove it): removed when another
#: workspace's folder is made.
STALE_EMPTY_S = 24 * 3600


def _remove_stale_empty(parent: str, keep: str) -> None:
    """Remove the empty folders of ``parent`` (never ``keep``, never a link,
    only this user's) untouched for :data:`STALE_EMPTY_S`: a session killed
    before its sandbox was dropped leaves its unused folder behind (a test
    suite that kills its servers, hundreds of them)."""
    now = time.time()
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        path = os.path.join(parent, name)
        if path == keep:
            continue
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if (
            stat.S_ISDIR(info.st_mode)
            and info.st_uid == os.getuid()
            and info.st_nlink == 2  # no subfolder
            and now - info.st_mtime > STALE_EMPTY_S
        ):
            with contextlib.suppress(OSError):
                os.rmdir(path)  # fails unless empty


def _own_folder(path: str) -> bool:
    """``path`` is a real folder (not a link) of this user's, made if missing
    (then the stale empty ones beside it go)."""
    try:
        os.makedirs(path, mode=0o700)
    except FileExistsError:
        pass
    else:
        _remove_stale_empty(os.path.dirname(path), path)
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()


def _under(path: str, folders: Sequence[str]) -> bool:
    path = posixpath.normpath(path)
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def cache_environment(
    root: str, writable: Sequence[str], environ: Mapping[str, str] = os.environ
) -> tuple[str | None, list[tuple[str, str]], list[str]]:
    """The workspace's cache folder to bind writable (None when it cannot be
    used: then nothing is moved), the variables to set and those to unset.
    ``writable``: the folders the sandbox may write besides it."""
    folder = workspace_cache_folder(root, environ)
    if not _own_folder(folder):
        log.warning("sandbox: %s is not a folder of Rein's: build caches stay read-only", folder)
        return None, [], []
    setting: list[tuple[str, str]] = []
    unsetting: list[str] = []
    pnpm = uses_pnpm(root)
    for name, variables in BUILD_CACHES:
        if not pnpm and PNPM_VARIABLES.issuperset(variables):
            continue  # npm would warn of an unknown setting
        chosen = next((environ[v] for v in variables if environ.get(v)), None)
        if chosen is not None and (not os.path.isabs(chosen) or _under(chosen, writable)):
            continue  # the person's, and usable inside as it is
        setting.append((variables[0], os.path.join(folder, name)))
        unsetting += variables[1:]
    return folder, setting, unsetting


def remove_if_unused(folder: str) -> None:
    """Remove ``folder`` when no command wrote anything in it (so trying a
    workspace leaves no empty cache folder behind)."""
    with contextlib.suppress(OSError):
        os.rmdir(folder)


def remove_caches_of(root: str, environ: Mapping[str, str] = os.environ) -> None:
    """Remove the build caches of the workspace ``root`` when it goes for
    good (an isolated run's copy, :func:`rein.isolation.cleanup.remove_isolated`):
    its path is never used again, so they would only fill the disk. Only a
    real folder of this user's is removed (never where a link points)."""
    folder = workspace_cache_folder(root, environ)
    try:
        info = os.lstat(folder)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
        shutil.rmtree(folder, ignore_errors=True)
