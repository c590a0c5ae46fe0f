"""Process groups: ending a whole group, a parent-death signal so children die
with the server, and the head and tail of long output."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from collections.abc import Iterator

import anyio
from anyio.abc import Process

__all__ = [
    "OutputBuffer",
    "dies_with_us",
    "group_alive",
    "group_members",
    "kill_process_group",
    "reaped",
]

_POLL_S = 0.02
_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


def dies_with_us(argv: list[str]) -> list[str]:
    """``argv`` made to receive SIGKILL when this process dies, even by
    SIGKILL (Linux's parent-death signal, set with util-linux ``setpriv``),
    so a child never outlives a killed server. Unchanged where unavailable."""
    if _SETPRIV is None:
        return argv
    return [_SETPRIV, "--pdeathsig", "KILL", "--", *argv]


#: The subreaper wrapper (:mod:`rein.process.reaper`), run as a script.
_REAPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reaper.py")


def reaped(argv: list[str]) -> list[str]:
    """``argv`` under :mod:`rein.process.reaper`: what it leaves running
    outside its process group (``setsid``, a daemon's double fork), which
    ending the group cannot reach, is ended when it ends. Linux only
    (unchanged elsewhere)."""
    if not sys.platform.startswith("linux"):
        return argv
    return [sys.executable, "-S", _REAPER, "--", *argv]


_KILL_WAIT_S = 5.0


def group_members(pgid: int, *, live_only: bool = False) -> list[str]:
    """The pids (as ``/proc`` entries) of the processes in group ``pgid``
    and of their descendants in other groups (a sandbox's, which bubblewrap
    starts in a session of its own), zombies left out when ``live_only``.
    Linux only: it reads ``/proc``."""
    table = [
        (entry, fields[1].decode(), int(fields[2]), fields[0])
        for entry, fields in _proc_stats()
        if len(fields) > 2
    ]
    found = {pid for pid, _, group, _ in table if group == pgid}
    grew = bool(found)
    while grew:
        more = {pid for pid, parent, _, _ in table if parent in found and pid not in found}
        found |= more
        grew = bool(more)
    return [
        pid
        for pid, _, _, state in table
        if pid in found and not (live_only and state in (b"Z", b"X"))
    ]


def _proc_stats() -> Iterator[tuple[str, list[bytes]]]:
    """Each process's ``/proc`` entry and the fields of its ``stat`` after
    the command name (state, ppid, pgrp, ...), lazily."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ..."; comm may contain spaces and ")".
        yield entry, data[data.rfind(b")") + 2 :].split()


def _scan_group(pgid: int, *, live_only: bool) -> Iterator[str]:
    """The ``/proc`` scan behind :func:`group_alive`, lazily: a caller that
    needs one member stops reading ``/proc`` at the first."""
    for entry, fields in _proc_stats():
        if len(fields) <= 2 or int(fields[2]) != pgid:
            continue
        if live_only and fields[0] in (b"Z", b"X"):
            continue
        yield entry


def group_alive(pgid: int) -> bool:
    """True while a live (non-zombie) process is in group ``pgid`` (polled
    every 20 ms while a group ends: stops at the first live member)."""
    if os.path.isdir("/proc/self"):
        return any(True for _ in _scan_group(pgid, live_only=True))
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def _wait_gone(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        await anyio.sleep(_POLL_S)
    return True


async def kill_process_group(process: Process, grace_s: float) -> bool:
    """End every process of ``process``'s group (it was started with
    ``start_new_session=True``, so the group id is its pid): SIGTERM, then
    SIGKILL after ``grace_s``. Reaps the leader. Returns True when something
    was still running."""
    pgid = process.pid
    was_alive = group_alive(pgid)
    if was_alive:
        _signal_group(pgid, signal.SIGTERM)
        if not await _wait_gone(pgid, grace_s):
            _signal_group(pgid, signal.SIGKILL)
            await _wait_gone(pgid, _KILL_WAIT_S)
    if process.returncode is None:
        await process.wait()
    return was_alive


class OutputBuffer:
    """Keeps the first ``head_chars`` and the last ``tail_chars`` characters
    written, and counts everything."""

    def __init__(self, head_chars: int, tail_chars: int) -> None:
        self.head_chars = head_chars
        self.tail_chars = tail_chars
        self._head: list[str] = []
        self._head_len = 0
        self._tail = ""
        self.total = 0

    def write(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        room = self.head_chars - self._head_len
        if room > 0:
            taken = text[:room]
            self._head.append(taken)
            self._head_len += len(taken)
            text = text[room:]
        if text:
            self._tail += text
            if len(self._tail) > 2 * self.tail_chars:
                self._tail = self._tail[-self.tail_chars :]

    def text(self) -> str:
        head = "".join(self._head)
        tail = self._tail[-self.tail_chars :] if self.tail_chars else ""
        cut = self.total - len(head) - len(tail)
        if cut <= 0:
            return head + tail
        # Cut on line boundaries when one is near.
        newline = head.rfind("\n")
        if newline >= len(head) * 3 // 4:
            cut += len(head) - newline - 1
            head = head[: newline + 1]
        newline = tail.find("\n")
        if 0 <= newline < len(tail) // 4:
            cut += newline + 1
            tail = tail[newline + 1 :]
        if not head.endswith("\n"):
            head += "\n"
        return f"{head}[... {cut:,} characters cut from the middle of the output ...]\n{tail}"
