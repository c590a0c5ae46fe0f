"""Whether the OS sandbox can start here, and why not: bubblewrap is on
``PATH`` (or where ``sandbox.bwrap`` says), the system is Linux, and a
sandbox like the commands' actually starts (``bwrap ... true``: user
namespaces allowed, no container forbidding them). Checked once per
program and process, then remembered."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from rein.sandboxing.bwrap import isolation_args

__all__ = [
    "PROBE_TIMEOUT_S",
    "SandboxStatus",
    "forget_probes",
    "sandbox_status",
    "unavailable_notice",
]

#: How long the trial sandbox may take to start and exit.
PROBE_TIMEOUT_S = 10.0

_INSTALL = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
)


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """The sandbox works (``why_not`` is None) or not, and why."""

    #: The bubblewrap executable found (None: not found).
    program: str | None
    why_not: str | None = None
    version: str | None = None

    @property
    def works(self) -> bool:
        return self.why_not is None


_known: dict[str, SandboxStatus] = {}


def forget_probes() -> None:
    """Probe again next time (tests)."""
    _known.clear()


def sandbox_status(bwrap: str = "bwrap") -> SandboxStatus:
    """The status of the sandbox with ``bwrap`` (a name on PATH or a path)."""
    known = _known.get(bwrap)
    if known is None:
        known = _known[bwrap] = _probe(bwrap)
    return known


def _probe(bwrap: str) -> SandboxStatus:
    if not sys.platform.startswith("linux"):
        return SandboxStatus(
            None,
            f"Rein sandboxes commands on Linux only (this is {sys.platform}); "
            "the macOS sandbox-exec profile is not used yet",
        )
    program = shutil.which(bwrap)
    if program is None:
        return SandboxStatus(None, f"bubblewrap ({bwrap}) is not installed: {_INSTALL}")
    argv = [program, *isolation_args(), "--", "true"]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return SandboxStatus(program, f"a trial sandbox did not exit within {PROBE_TIMEOUT_S:g} s")
    except OSError as exc:
        return SandboxStatus(program, f"bubblewrap could not be started: {exc}")
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        reason = said[-1] if said else f"exit code {done.returncode}"
        return SandboxStatus(
            program,
            f"bubblewrap cannot create a sandbox here ({reason}); user namespaces may be "
            "off (sysctl kernel.unprivileged_userns_clone, "
            "kernel.apparmor_restrict_unprivileged_userns) or forbidden by a container",
        )
    return SandboxStatus(program, None, _version(program))


def _version(program: str) -> str | None:
    try:
        done = subprocess.run(
            [program, "--version"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def unavailable_notice(
    approval_command: str, bwrap: str = "bwrap", also: Sequence[str] = ()
) -> str | None:
    """What a session says once at its start when its commands should run
    sandboxed (``approval.command`` "sandboxed", or ``sandbox.also`` names
    other commands) and the sandbox cannot: None when it works or is not
    wanted."""
    if approval_command != "sandboxed" and not also:
        return None
    why_not = sandbox_status(bwrap).why_not
    if why_not is None:
        return None
    said = []
    if approval_command == "sandboxed":
        said.append("every command asks")
    if also:
        said.append(f"the commands of {', '.join(also)} (sandbox.also) run unsandboxed")
    return f"sandbox: commands cannot run sandboxed here ({why_not}); {'; '.join(said)}"
