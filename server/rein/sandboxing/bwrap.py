"""A :class:`~rein.sandboxing.policy.SandboxPolicy` as a bubblewrap
command line (Linux).

Every namespace is unshared (user, pid, network, ipc, uts, cgroup), every
capability dropped (also when Rein runs as root), and the sandbox dies
with Rein (``--die-with-parent``) and cannot reach the terminal
(``--new-session``). Mounts are made in order: the whole file system
read-only, then ``/dev``, ``/proc`` and a private ``/tmp`` and ``/run``
(no daemon's socket under it: D-Bus, docker, the agents), then the
writable folders, then what stays read-only inside them, then what is
hidden. Bubblewrap runs as pid 1 of the new pid namespace, so when the
command ends every process it left behind is killed with it. The command starts under a bound on its processes
(:data:`MAX_PROCESSES`, set inside the sandbox's user namespace, where the
kernel counts only the sandbox's own: a fork bomb stops there, the
person's other processes do not count against it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from rein.sandboxing.policy import SandboxPolicy

__all__ = ["BWRAP", "MAX_PROCESSES", "UNSET_VARIABLES", "bwrap_argv", "isolation_args"]

BWRAP = "bwrap"

#: At most this many processes and threads run in one sandbox at once
#: (``RLIMIT_NPROC``, soft and hard: the command cannot raise it). Set
#: inside, after bubblewrap made the user namespace: set before, the kernel
#: would also count every process the person runs. Root is exempt (the
#: kernel does not apply it to uid 0).
MAX_PROCESSES = 4096

#: Variables that point a program at a daemon's socket (agents, buses):
#: not passed into the sandbox.
UNSET_VARIABLES: tuple[str, ...] = (
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "KRB5CCNAME",
)


def isolation_args(*, network: bool = False) -> list[str]:
    """The options every sandbox starts with: namespaces, no capabilities,
    the file system read-only, a private ``/tmp``, ``/dev`` and ``/proc``."""
    argv = ["--unshare-all"]
    if network:
        argv.append("--share-net")
    argv += ["--cap-drop", "ALL", "--die-with-parent", "--new-session"]
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    argv += ["--tmpfs", "/run"]
    if os.path.isdir("/var/run") and not os.path.islink("/var/run"):
        argv += ["--tmpfs", "/var/run"]  # usually a symlink to /run
    for name in UNSET_VARIABLES:
        argv += ["--unsetenv", name]
    return argv


#: The folders the sandbox replaces with its own empty ones.
PRIVATE_FOLDERS = ("/tmp", "/run", "/var/run")


def under_private_folder(path: str) -> bool:
    """Whether ``path`` lies in a folder the sandbox makes private (it would
    be gone inside unless bound again)."""
    return any(path == f or path.startswith(f + "/") for f in PRIVATE_FOLDERS)


def bwrap_argv(
    policy: SandboxPolicy,
    command: Sequence[str],
    *,
    cwd: str,
    bwrap: str = BWRAP,
    runtime: Sequence[str] = (),
    environment: Sequence[tuple[str, str]] = (),
    unset: Sequence[str] = (),
    max_processes: int = MAX_PROCESSES,
) -> list[str]:
    """``bwrap ... -- command`` running ``command`` in ``cwd`` under ``policy``.
    ``runtime``: folders bound read-only again when they lie in a folder the
    sandbox makes private (Rein's own Python and its forwarder, installed
    under ``/tmp`` say), before the workspace's binds so those still win.
    ``environment``: more variables set inside (name, value); ``unset``:
    more variables removed inside;
    ``max_processes``: the bound on its processes (bash's ``ulimit -u``,
    then ``exec`` of the command)."""
    argv = [bwrap, *isolation_args(network=policy.network)]
    for path in runtime:
        if under_private_folder(path) and os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for path in (policy.root, policy.temp_dir, *policy.writable):
        argv += ["--bind", path, path]
    for path in policy.pinned:
        argv += ["--bind", path, path]
    for path in policy.read_only:
        argv += ["--ro-bind", path, path]
    for path in policy.hidden_dirs:
        argv += ["--tmpfs", path, "--remount-ro", path]
    for path in policy.hidden_files:
        argv += ["--ro-bind", "/dev/null", path]
    if policy.proxy_socket is not None:
        url = f"http://127.0.0.1:{policy.proxy_port}"
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            argv += ["--setenv", name, url]
        argv += ["--unsetenv", "NO_PROXY", "--unsetenv", "no_proxy"]
    for name in unset:
        argv += ["--unsetenv", name]
    for name, value in environment:
        argv += ["--setenv", name, value]
    argv += [
        "--setenv",
        "TMPDIR",
        policy.temp_dir,
        "--setenv",
        "REIN_SANDBOX",
        "1",
        "--chdir",
        cwd,
        "--",
        "bash",
        "-c",
        f'ulimit -u {int(max_processes)} && exec "$@"',
        "rein-sandbox",
        *command,
    ]
    return argv
