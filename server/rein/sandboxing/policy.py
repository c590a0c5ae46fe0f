"""What a sandboxed command may touch: pure, paths in and a policy out.

Inside the sandbox the workspace, the session's temporary folder and the
configured ``sandbox.writable`` folders are writable; the rest of the file
system is read-only; the person's secrets (:data:`DEFAULT_HIDDEN_PATHS`
and ``sandbox.hidden``) are replaced by an empty folder or an empty file.
Inside the workspace, ``.git`` as a whole (so git's hooks, configuration,
``commondir`` and submodules' configuration alike; a commit asks to leave
the sandbox), every git repository below it (their ``.git``, which the
caller finds) and Rein's own configuration files stay read-only; it is a
mount point of its own, so it cannot be moved away or replaced. Protected
paths that do not exist yet cannot be mounted over: :attr:`SandboxPolicy.missing`
lists them, and the sandbox moves aside what a command created there
(:mod:`rein.sandboxing.local`). ``/tmp`` and ``/run`` are private, there
is no network, and the processes see only each other.

The policy is computed again for every command (a few ``stat`` calls), so
what was created since the last one is protected or hidden too.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rein.sandboxing.settings import DEFAULT_HIDDEN_PATHS, SandboxSettings

__all__ = ["HIDDEN_SYSTEM_PATHS", "READ_ONLY_IN_WORKSPACE", "SandboxPolicy", "sandbox_policy"]

#: Paths inside the workspace that stay read-only in the sandbox: what runs
#: commands for the person later (all of git's repository: hooks,
#: configuration, ``commondir``, submodules; the editor's settings, MCP
#: servers and tasks, whose ``runOn: "folderOpen"`` runs when the folder
#: is opened) and Rein's own configuration.
READ_ONLY_IN_WORKSPACE: tuple[str, ...] = (
    ".git",
    ".gitmodules",
    ".rein",
    ".vscode/settings.json",
    ".vscode/mcp.json",
    ".vscode/tasks.json",
    ".mcp.json",
)

#: Root-only files hidden whoever runs Rein (as root the sandbox keeps
#: uid 0 and could read them).
HIDDEN_SYSTEM_PATHS: tuple[str, ...] = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers.d")


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """One workspace's sandbox, as absolute paths (existing ones only)."""

    #: The workspace root: writable, the commands' working folder.
    root: str
    #: The session's temporary folder (``TMPDIR`` inside): writable.
    temp_dir: str
    #: More writable folders (``sandbox.writable``).
    writable: tuple[str, ...] = ()
    #: Paths under a writable folder that stay read-only.
    read_only: tuple[str, ...] = ()
    #: Folders mounted onto themselves (writable) so they cannot be moved
    #: or replaced (none by default: ``.git`` is read-only, a mount point
    #: too).
    pinned: tuple[str, ...] = ()
    #: Protected workspace paths that do not exist (nothing to mount over):
    #: what a command creates there is moved aside after it.
    missing: tuple[str, ...] = ()
    #: Folders replaced by an empty one.
    hidden_dirs: tuple[str, ...] = ()
    #: Files replaced by an empty one.
    hidden_files: tuple[str, ...] = ()
    #: The whole network (never set by :func:`sandbox_policy`; the
    #: sandbox reaches hosts only through the proxy).
    network: bool = False
    #: The allowlist proxy's unix socket (in ``temp_dir``) and the port the
    #: forwarder listens on inside: None without ``sandbox.network``.
    proxy_socket: str | None = None
    proxy_port: int = 3128


def _expand(path: str, home: str) -> str:
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return posixpath.normpath(path)


def _contains(folder: str, path: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _beside_the_way(
    folder: str,
    root: str,
    listdir: Callable[[str], list[str]],
    is_link: Callable[[str], bool],
) -> list[str]:
    """What ``folder`` holds but the way down to the workspace ``root``
    inside it: each entry of each folder on that way, but the next step
    (symlinks left out: a mount would land where they point)."""
    here, found = folder, []
    for step in posixpath.relpath(root, folder).split("/"):
        try:
            names = sorted(listdir(here))
        except OSError:
            break
        found += [
            posixpath.join(here, n)
            for n in names
            if n != step and not is_link(posixpath.join(here, n))
        ]
        here = posixpath.join(here, step)
    return found


def sandbox_policy(
    root: str,
    temp_dir: str,
    settings: SandboxSettings | None = None,
    *,
    home: str | None = None,
    is_dir: Callable[[str], bool] = os.path.isdir,
    exists: Callable[[str], bool] = os.path.lexists,
    resolve: Callable[[str], str] = os.path.realpath,
    listdir: Callable[[str], list[str]] = os.listdir,
    is_link: Callable[[str], bool] = os.path.islink,
    nested_git: Sequence[str] = (),
) -> SandboxPolicy:
    """The policy for ``root``; ``nested_git``: the git repositories below
    it (:mod:`rein.sandboxing.nested_git`), read-only like its own. Paths that do not exist are left out (there
    is nothing to hide or protect; bubblewrap could not mount over them);
    a hidden path that is a symlink hides where it points too. A hidden
    folder that holds the workspace (an isolated run's copy lives in
    Rein's storage folder, ``~/.local/share/rein``) is hidden but the way
    down to the workspace: what lies beside that way is hidden instead."""
    settings = settings or SandboxSettings()
    home = home if home is not None else os.path.expanduser("~")
    root = posixpath.normpath(root)
    hidden_dirs: list[str] = []
    hidden_files: list[str] = []
    wanted = [posixpath.join(home, p) for p in DEFAULT_HIDDEN_PATHS]
    wanted += HIDDEN_SYSTEM_PATHS
    wanted += [_expand(p, home) for p in settings.hidden]
    for path in wanted:
        if not exists(resolve(path)):
            continue  # missing, or a dangling symlink (bubblewrap cannot mount over it)
        for candidate in dict.fromkeys((path, resolve(path))):
            if not exists(candidate) or candidate in (root, "/"):
                continue
            if _contains(candidate, root):
                # Hiding it would hide the workspace: hide what is beside it.
                for beside in _beside_the_way(candidate, root, listdir, is_link):
                    (hidden_dirs if is_dir(beside) else hidden_files).append(beside)
                continue
            (hidden_dirs if is_dir(candidate) else hidden_files).append(candidate)
    read_only = [posixpath.join(root, p) for p in READ_ONLY_IN_WORKSPACE]
    return SandboxPolicy(
        root=root,
        temp_dir=temp_dir,
        writable=tuple(
            _expand(p, home) for p in settings.writable if exists(resolve(_expand(p, home)))
        ),
        read_only=(*(p for p in read_only if exists(p)), *nested_git),
        missing=tuple(p for p in read_only if not exists(p)),
        hidden_dirs=tuple(dict.fromkeys(hidden_dirs)),
        hidden_files=tuple(dict.fromkeys(hidden_files)),
    )
