"""Run as ``python -S reaper.py -- COMMAND...`` (Linux): COMMAND runs as
this process's child, and this process is the subreaper of everything it
starts (``PR_SET_CHILD_SUBREAPER``): a process that left COMMAND's process
group (``setsid``, a daemon's double fork) comes back to it when its parent
ends, instead of to init, where nothing would know it came from COMMAND.

When COMMAND ends, every process that left the group is killed (with its
own group), and a line on stderr says so; the processes still in the group
are the caller's to end (it ends the whole group and says so). Signals that
end a command (SIGTERM, SIGINT, SIGHUP) reach this process through the
group like the others: it waits for COMMAND to end, then does the same. It
dies with its parent (``PR_SET_PDEATHSIG``), and COMMAND with it. It exits
as COMMAND did (its code, or the same signal).

Standard library only, no Rein import: it starts in a few milliseconds.
Sandboxed commands need none of it: the sandbox's pid namespace ends
every process when the command ends.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: How long the escaped processes (and what they start meanwhile) are
#: hunted after COMMAND ends.
HUNT_S = 2.0

_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


# Not shared with testgate/warm_scripts.py: that runs in the project's interpreter (no Rein), ends every child.
def _children() -> list[int]:
    """The live children of this process (reparented ones included)."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me and fields[0] not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _end_escaped() -> int:
    """Kill the children outside this process group, and theirs as they
    come back, until none is left or :data:`HUNT_S` passed; how many."""
    group = os.getpgrp()
    killed: set[int] = set()
    deadline = time.monotonic() + HUNT_S
    while time.monotonic() < deadline:
        escaped = []
        for pid in _children():
            try:
                if os.getpgid(pid) != group:
                    escaped.append(pid)
            except ProcessLookupError:
                continue
        if not escaped:
            break
        for pid in escaped:
            killed.add(pid)
            try:
                os.killpg(os.getpgid(pid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)
        _reap()
    _reap()
    return len(killed)


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "--":
        print("usage: reaper.py -- COMMAND...", file=sys.stderr)
        return 2
    _die_with_parent()
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        # The group's signal reaches COMMAND itself; this one outlives it
        # to end what escaped (a handler, not SIG_IGN: COMMAND gets the default).
        signal.signal(signum, lambda _s, _f: None)
    child = subprocess.Popen(argv[1:], preexec_fn=_die_with_parent)
    while True:
        try:
            code = child.wait()
            break
        except InterruptedError:  # pragma: no cover - PEP 475 retries
            continue
    killed = _end_escaped()
    if killed:
        print(
            f"[Rein stopped {killed} process(es) the command left running in a session "
            "of their own (setsid, a daemon).]",
            file=sys.stderr,
        )
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return 128 - code
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
