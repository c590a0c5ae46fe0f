"""The preview's processes on the local machine (the PreviewProcess port).

``bash -c COMMAND`` in the workspace root, in its own process group
(``start_new_session``), stdout and stderr merged into one pipe, stdin
closed, ``PYTHONUNBUFFERED=1`` so a Python program's output arrives as it is
printed. Stopping ends the whole group (SIGTERM, then SIGKILL).

A preview must never outlive the server: every live group is also killed by
an ``atexit`` hook and, when the process had no SIGTERM handler of its own,
by a SIGTERM handler installed with the first preview (it then lets SIGTERM
do what it would have done). Only SIGKILL of the server itself escapes this.

The HTTP readiness probe is one plain ``GET`` over a TCP connection to
127.0.0.1 (no HTTP client library outside providers/).

:meth:`SubprocessPreview.files_open_for_writing` lists the workspace files a
process of the group holds open for writing (a log), from ``/proc`` (Linux;
elsewhere none): the preview's own output, which must not count as a change;
:meth:`SubprocessPreview.listening_ports` the TCP ports the group listens on
(:mod:`rein.process.listening`): the program is up.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import anyio
from anyio.abc import Process

from rein.harness.ports import ProcessSandbox, SandboxedStart
from rein.process.environment import child_environment
from rein.process.groups import dies_with_us, group_alive, group_members, kill_process_group
from rein.process.listening import listening_ports

__all__ = ["SubprocessPreview", "SubprocessPreviewFactory", "kill_all_previews"]

log = logging.getLogger(__name__)

#: A line longer than this is cut into pieces.
MAX_LINE_BYTES = 64 * 1024

#: Process group ids of the previews that may still run.
_LIVE: set[int] = set()
_guard_installed = False


def kill_all_previews(grace_s: float = 0.5) -> None:
    """SIGTERM every live preview group, SIGKILL what is left after
    ``grace_s`` (synchronous: for exit paths)."""
    groups = [g for g in list(_LIVE) if group_alive(g)]
    _LIVE.clear()
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while groups and time.monotonic() < deadline:
        groups = [g for g in groups if group_alive(g)]
        if groups:
            time.sleep(0.02)
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def _on_sigterm(signum: int, frame: Any) -> None:
    kill_all_previews()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _install_exit_guard() -> None:
    global _guard_installed
    if _guard_installed:
        return
    _guard_installed = True
    atexit.register(kill_all_previews)
    if threading.current_thread() is threading.main_thread():
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
                signal.signal(signal.SIGTERM, _on_sigterm)


def _open_for_writing(pid: str) -> set[str]:
    """The regular files process ``pid`` holds open with write access."""
    found: set[str] = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if not target.startswith("/") or target.endswith(" (deleted)"):
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as handle:
                flags = next(
                    (int(line.split()[1], 8) for line in handle if line.startswith("flags:")), 0
                )
        except (OSError, ValueError):
            continue
        if flags & (os.O_WRONLY | os.O_RDWR):
            found.add(target)
    return found


class SubprocessPreview:
    """A PreviewProcess over an anyio process in its own process group."""

    def __init__(
        self,
        process: Process,
        root: str | None = None,
        wrapper: str | None = None,
        ended: SandboxedStart | None = None,
    ) -> None:
        self._process = process
        #: Its start in the sandbox, ended once when the program has ended
        #: (the sandbox moves aside what it created where a protected path
        #: was missing, and a git repository it made).
        self._ended = ended
        self._root = os.path.realpath(root) if root is not None else None
        #: The sandbox's program the command runs under (bubblewrap), resolved;
        #: None: not sandboxed.
        self._wrapper = wrapper
        self._buffer = b""
        self._eof = False

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def exit_code(self) -> int | None:
        return self._process.returncode

    async def read_line(self) -> str | None:
        stdout = self._process.stdout
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
                return _decode(line)
            if len(self._buffer) >= MAX_LINE_BYTES:
                line, self._buffer = (
                    self._buffer[:MAX_LINE_BYTES],
                    self._buffer[MAX_LINE_BYTES:],
                )
                return _decode(line)
            if self._eof or stdout is None:
                if self._buffer:
                    line, self._buffer = self._buffer, b""
                    return _decode(line)
                return None
            try:
                self._buffer += await stdout.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._eof = True

    async def _end(self) -> None:
        ended, self._ended = self._ended, None
        if ended is not None:
            await ended.ended()

    async def wait(self) -> int:
        code = await self._process.wait()
        await self._end()
        return code

    def send_signal(self, signum: int) -> None:
        """``signum`` to the program's processes (a reload). In the sandbox,
        to those inside it: bubblewrap, outside and as the sandbox's first
        process, forwards no signal (the outer one would die of a SIGHUP
        and end the sandbox), and the program runs in a session of its own."""
        if self._wrapper is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signum)
            return
        for pid in group_members(self._process.pid, live_only=True):
            try:
                if os.path.realpath(f"/proc/{pid}/exe") == self._wrapper:
                    continue
                os.kill(int(pid), signum)
            except (ProcessLookupError, PermissionError, OSError):
                continue

    async def stop(self, grace_s: float) -> None:
        with anyio.CancelScope(shield=True):
            await kill_process_group(self._process, grace_s)
            _LIVE.discard(self._process.pid)
            await self._end()
            # Close the output pipe (and so the process's transport) now,
            # not at its end of file: a process outside the group may hold
            # it a while longer (the sandbox's, as its namespace ends), and
            # a transport left open is closed by the garbage collector,
            # after its event loop ("Exception ignored ... __del__").
            with contextlib.suppress(Exception):
                await self._process.aclose()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)
        _LIVE.discard(self._process.pid)
        # A shutdown: nothing else waits for the look.
        ended, self._ended = self._ended, None
        if ended is not None:
            ended.ended_now()

    def files_open_for_writing(self) -> set[str]:
        """Workspace-relative paths of the files in the workspace that a
        process of the group holds open for writing now (empty without
        ``/proc`` or once the group is gone)."""
        if self._root is None or not os.path.isdir("/proc/self/fd"):
            return set()
        base = self._root.rstrip("/") + "/"
        paths: set[str] = set()
        for pid in group_members(self._process.pid):
            for target in _open_for_writing(pid):
                if target.startswith(base):
                    paths.add(target[len(base) :])
        return paths

    def listening_ports(self) -> set[int]:
        """The TCP ports a process of the group listens on now (the
        readiness rule when none is configured)."""
        return listening_ports(self._process.pid)


def _program(name: str) -> str:
    """The file ``name`` runs (looked up on ``PATH``), resolved."""
    return os.path.realpath(shutil.which(name) or name)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").rstrip("\r")


class SubprocessPreviewFactory:
    """Starts previews in ``root``; ``env`` is added to the environment."""

    def __init__(
        self,
        root: str,
        env: dict[str, str] | None = None,
        sandbox: ProcessSandbox | None = None,
    ) -> None:
        self.root = root
        self.env = dict(env or {})
        #: The sandbox the preview runs in (``sandbox.also``); None: none.
        self.sandbox = sandbox

    async def start(self, command: str) -> SubprocessPreview:
        _install_exit_guard()
        env = child_environment({"PYTHONUNBUFFERED": "1", **self.env}, cwd=self.root)
        argv = ["bash", "-c", command]
        wrapper = None
        ended: SandboxedStart | None = None
        if self.sandbox is not None:
            # What it creates where a protected path is missing goes when it
            # ends (the sandbox logs it).
            ended = await self.sandbox.start(argv, cwd=self.root)
            wrapped = ended.argv
            if wrapped != argv:
                wrapper = _program(wrapped[0])
            argv = wrapped
        try:
            process = await anyio.open_process(
                dies_with_us(argv),
                cwd=self.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except BaseException:
            if ended is not None:  # it never ran: its end is its start's
                with anyio.CancelScope(shield=True):
                    await ended.ended()
            raise
        _LIVE.add(process.pid)
        log.info("preview started: pid %s: %s", process.pid, command)
        return SubprocessPreview(process, self.root, wrapper, ended)

    async def http_ready(self, url: str, timeout_s: float) -> bool:
        parts = urlsplit(url)
        host = parts.hostname or "127.0.0.1"
        port = parts.port or 80
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        request = (
            f"GET {target} HTTP/1.0\r\nHost: {host}:{port}\r\nUser-Agent: rein-preview\r\n"
            "Connection: close\r\n\r\n"
        ).encode("ascii")
        data = b""
        try:
            with anyio.fail_after(timeout_s):
                async with await anyio.connect_tcp(host, port) as stream:
                    await stream.send(request)
                    while b"\r\n" not in data and len(data) < 4096:
                        data += await stream.receive()
        except (OSError, TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError):
            if b"\r\n" not in data:
                return False
        fields = data.split(b"\r\n", 1)[0].split()
        if len(fields) < 2 or not fields[0].startswith(b"HTTP/") or not fields[1].isdigit():
            return False
        return int(fields[1]) < 500
