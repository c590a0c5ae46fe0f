"""A warm run handed to the kept pytest process by the gate itself: no
sandbox start, no shell, no client interpreter.

A warm run through the gates' ``CommandRunner`` starts the sandbox
(bubblewrap), two shells and the warm client's interpreter before the
kept process forks pytest: 40-80 ms of each run on a loaded machine
(docs/performance.md), against a few ms for the fork. The kept process is
already in the gates' sandbox, started with the child environment (no
secrets), so the gate connects to its socket and sends what the client
would: the token, the run's folder and pytest's arguments, and, in place
of the client's environment, the run's changes to the kept process's own
(:meth:`~rein.testgate.pytest_call.PytestCall.edits`: the same variables
as the shell command gives), with its standard input (``/dev/null``),
output and error (one pipe, read here) as file descriptors.

The kept process forks pytest as for its client (its own process group,
the run's folder and environment, in the kept process's sandbox and
namespace) and answers with its exit code. At the time limit, or when the
run is cancelled (an abort, a steer), the gate ends its side of the
connection: the kept process kills pytest's process group, reaps it and
answers, which the gate waits for (at most :data:`KILL_WAIT_S`), so no
test of the run is left when it returns. The sandbox's look before and
after a command (what a run creates where a protected path was missing is
moved aside) is made around the run as around a command
(:attr:`~rein.testgate.warm.WarmClient.watch`).

When the kept process cannot be reached (gone between two runs), the run
goes through the client (:class:`Unreached`), which then runs cold and
says so; when it refuses the run (:class:`Refused`: a module it has
imported is the project's), when its sandbox protects other paths than one
started now would (:data:`~rein.testgate.warm.STALE`), or when it gives no
exit code within :data:`KILL_WAIT_S` (:data:`~rein.testgate.warm.HUNG`: it
is stopped with its sandbox before the look, and replaced), the gate runs
pytest cold.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import os
import socket
import time

import anyio

from rein.harness.errors import ReinError
from rein.harness.process_ports import CommandResult
from rein.testgate.pytest_call import PytestCall
from rein.testgate.warm import HUNG, STALE, WarmClient

__all__ = [
    "CONNECT_TIMEOUT_S",
    "KILL_WAIT_S",
    "TAIL_BYTES",
    "Refused",
    "Unreached",
    "run_direct",
]

#: How long the gate waits to reach the kept process's socket.
CONNECT_TIMEOUT_S = 5.0
#: How long the gate waits, once it ended its side, for the kept process
#: to say pytest's process group was killed and reaped.
KILL_WAIT_S = 10.0
#: What is kept of pytest's output: its end (the gate shows the last lines).
TAIL_BYTES = 8_000


class Unreached(ReinError):
    """The kept process could not be reached: the run goes through the client."""


class Refused(ReinError):
    """The kept process refused the run (why): pytest runs cold."""


async def run_direct(warm: WarmClient, call: PytestCall, timeout_s: float) -> CommandResult:
    """Run ``call`` (``python -m pytest ...``) forked by the kept process
    that ``warm`` reaches. Raises :class:`Unreached` or :class:`Refused` before pytest starts."""
    if call.argv[1:3] != ("-m", "pytest") or warm.watch is None:
        raise Unreached("not a run of python -m pytest")
    started = time.monotonic()
    args = call.argv[3:]
    fields = ["edits", warm.token, call.cwd, str(len(args)), *args]
    fields += [f"=PWD={call.cwd}", *call.edits()]  # PWD: as the shell's cd sets it
    body = b"\0".join(os.fsencode(field) for field in fields)
    conn = await _connect(warm.socket)
    try:
        watch = await warm.watch()
    except BaseException:
        conn.close()
        raise
    if watch is None:  # its sandbox protects other paths than one started now
        conn.close()
        raise Refused(STALE)
    try:
        output = await _send(conn, len(body).to_bytes(4, "big") + body)
    except BaseException:
        conn.close()
        with anyio.CancelScope(shield=True):
            await watch.ended()
        raise
    answer = b""
    timed_out = False
    unanswered = False
    try:
        with anyio.move_on_after(timeout_s) as scope:
            answer = await _answer(conn)
        if scope.cancelled_caught:
            timed_out = True
    finally:
        with anyio.CancelScope(shield=True):
            if not _complete(answer):
                # Our side ends: the kept process kills pytest's group and
                # answers once it is reaped.
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_WR)
                with anyio.move_on_after(KILL_WAIT_S):
                    answer += await _answer(conn)
            conn.close()
            output.close()
            if not _complete(answer):
                # Hung, gone, or what the run left could not be ended: the
                # kept process and its sandbox are stopped before the look.
                unanswered = True
                if warm.hung is not None:
                    await warm.hung()
            ended = await watch.ended()
    if unanswered:  # its look's note is logged (rein.sandboxing.others)
        raise Refused(HUNG)
    if timed_out:
        output.write(f"\n[timed out after {timeout_s:g} s; the process group was killed]\n")
    if answer[:1] == b"C":
        raise Refused("a module the warm process has imported is in the project's own folders")
    if answer[:1] == b"R":
        why = answer[1:].decode("utf-8", "replace") or "(no reason)"
        raise Refused(f"the warm process refused this run: {why}")
    code = int.from_bytes(answer[1:5], "big", signed=True)
    text = output.text()
    notes = [ended] + ([watch.failure_note(text)] if code != 0 and not timed_out else [])
    for note in notes:
        if note is not None:
            text = f"{text.rstrip()}\n{note}\n"
    return CommandResult(
        exit_code=-1 if timed_out else code,
        output=text,
        timed_out=timed_out,
        duration_s=time.monotonic() - started,
    )


async def _connect(path: str) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.setblocking(False)
    try:
        with anyio.fail_after(CONNECT_TIMEOUT_S):
            await asyncio.get_running_loop().sock_connect(conn, path)
    except (OSError, TimeoutError) as exc:
        conn.close()
        raise Unreached(f"the warm process could not be reached ({exc})") from exc
    return conn


class _Output:
    """pytest's output and error: a pipe read on the event loop as it
    comes, and to its end when the run is over (pytest reaped: all it
    wrote is in the pipe; a process it left holding the pipe is not
    waited for)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.tail = bytearray()
        self.cut = False
        self.loop = asyncio.get_running_loop()
        os.set_blocking(fd, False)
        self.loop.add_reader(fd, self._read)

    def _read(self, reads: int = -1) -> None:
        while reads != 0:
            reads -= 1
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.loop.remove_reader(self.fd)
                return
            self.write(chunk)

    def write(self, chunk: bytes | str) -> None:
        self.tail += chunk.encode() if isinstance(chunk, str) else chunk
        if len(self.tail) > 2 * TAIL_BYTES:
            del self.tail[:-TAIL_BYTES]
            self.cut = True

    def text(self) -> str:
        text = self.tail[-TAIL_BYTES:].decode("utf-8", errors="replace")
        return "[...]\n" + text if self.cut or len(self.tail) > TAIL_BYTES else text

    def close(self) -> None:
        self._read(64)  # bounded: a process the run left may write on
        self.loop.remove_reader(self.fd)
        os.close(self.fd)


async def _send(conn: socket.socket, message: bytes) -> _Output:
    """The request, with pytest's standard input (``/dev/null``), output
    and error (one pipe, whose reading end is returned) as descriptors."""
    read_end, write_end = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fds = array.array("i", [null, write_end, write_end])
        try:
            # The descriptors go with the first bytes; a fresh connection's
            # buffer holds the request (a few kB) but for a long one.
            sent = conn.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        except OSError as exc:
            os.close(read_end)
            raise Unreached(f"the warm process could not be sent the run ({exc})") from exc
    finally:
        os.close(null)
        os.close(write_end)
    output = _Output(read_end)
    try:
        with anyio.fail_after(CONNECT_TIMEOUT_S):
            await asyncio.get_running_loop().sock_sendall(conn, message[sent:])
    except (OSError, TimeoutError) as exc:
        output.close()
        raise Unreached(f"the warm process could not be sent the run ({exc})") from exc
    except BaseException:
        output.close()
        raise
    return output


def _complete(answer: bytes) -> bool:
    """Whether ``answer`` is the kept process's last word."""
    return answer[:1] in (b"C", b"R") or len(answer) >= 5


async def _answer(conn: socket.socket) -> bytes:
    """The answer: "X" and the exit code; "C"; "R" and why, to the end."""
    loop = asyncio.get_running_loop()
    answer = b""
    while (len(answer) < 5 or answer[:1] == b"R") and len(answer) < 1024:
        try:
            more = await loop.sock_recv(conn, 1024)
        except OSError:  # reset: the kept process is gone
            more = b""
        if not more:
            break
        answer += more
    return answer
