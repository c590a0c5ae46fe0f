"""Which process owns something that outlives a call: its pid and when it
started, so a pid the system gave to another process since is not taken
for the owner (an isolated run's copy, a session stored as running)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["alive", "owner_alive", "process_start", "this_process"]


def process_start(pid: int) -> str:
    """When process ``pid`` started, in the system's clock ticks since boot
    (``/proc/PID/stat``); "" where that cannot be read (no ``/proc``)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rindex(")") + 2 :].split()[19]
    except (OSError, ValueError, IndexError):
        return ""


def alive(pid: int, started: str = "") -> bool:
    """True while ``pid`` runs and (when known) is the process that started at ``started``."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    now = process_start(pid) if started else ""
    return not now or now == started


def this_process() -> str:
    """This process as an owner: ``"PID:START"``."""
    pid = os.getpid()
    return f"{pid}:{process_start(pid)}"


def owner_alive(owner: str) -> bool:
    """Whether the process ``owner`` (from :func:`this_process`) still runs;
    False for "" or anything else."""
    pid, _, started = owner.partition(":")
    return pid.isdigit() and alive(int(pid), started)
