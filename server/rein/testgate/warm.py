"""A warm pytest: one kept process per gate that has imported pytest and
forks a fresh child for each run of the tests.

Most of a small pytest run is the interpreter's start, pytest's import and
its plugins' (0.3-0.4 s on this project's machines); a kept process pays
that once. The gate starts it when a run first changes a file (its
:class:`ProcessLauncher` port: the child environment, no secrets, its own
process group, killed when Rein dies; in the gates' OS sandbox when they
run in one, with this folder and the shadow trees' bound writable, so its
forks run in it; one started in another sandbox, or none, than the one
the launcher names now serves no run and is replaced at the next start),
and a run of the tests is then the
same shell command through the gates' ``CommandRunner`` as a cold one,
with a small *client* in place of ``-m pytest``:

* the client (``python -I -S client.py <socket> <token> <pytest args>``)
  connects to the kept process over a Unix socket in a private folder and
  hands it the token, its working folder, its environment and its
  standard input, output and error (the file descriptors themselves), then
  waits for pytest's exit code and exits with it. The request is
  NUL-separated fields (no argument or environment entry holds a NUL):
  the client imports ``_socket`` alone, not ``json`` and ``socket``, whose
  imports were a quarter of its start (7 of 28 ms at a load of 7); a
  request that does not parse (its count of arguments more than its
  fields), ends early or cannot be read is refused, with why (the client
  runs cold and says so). The token is random, in
  the kept process's and the gate's command's argv only: a command of the
  agent's own sandbox (its own process namespace) that can reach the
  socket is refused;
* the kept process forks a handler (a session of its own) that forks
  pytest once more, in a process group of its own, in the client's folder,
  environment and ``sys.path`` (the folder, then ``PYTHONPATH``, then the
  interpreter's own), with ``__main__`` as ``python -m pytest`` has it (a
  test's spawned multiprocessing workers start from pytest's, never from
  the kept process's script), and waits for it or for the client's
  connection to end (a client killed at the time limit, or by an abort or
  a steer with its process group); then it kills pytest's process group:
  what a test started in the background ends with its run;
* when the kept process is not ready, is gone, refuses the client, or a
  module it has imported lies in the project's own folders (the project
  *is* one of pytest's dependencies), the client runs pytest itself
  (``exec python -m pytest``): a cold run, the same as without the warm
  process, which the client marks beside the report (``<report>.cold``,
  why) for the gate to say. A handler that ends without an exit code makes
  the client exit with 3 (pytest's internal error): the verdict is then
  unverified, never "passed".

Each run is a fresh fork of a process that has imported only pytest, never
the project: the project's modules, its ``conftest.py`` and its tests are
imported by the child from the shadow, as in a cold run. Forked children
share the kept process's hash seed (``random`` is seeded again). What the
kept process holds is collected, then frozen (``gc.freeze``) before it
serves (a test that walks ``gc.get_objects`` or ``gc.get_referrers`` does
not see those objects in a warm run): a child's
garbage collections do not walk it, nor write to each of its pages to do
so (pytest's collection at its end took 20 ms of a small run's 0.2 s at
a load of 7; 1 ms frozen). Whether a module it has imported lies in the
project's folders is one listing per folder, not two file checks per
module and folder (6 ms). A child
writes and reads bytecode as the client's environment says
(``PYTHONDONTWRITEBYTECODE``, ``PYTHONPYCACHEPREFIX``), as a cold
interpreter started there would.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import shutil
import tempfile
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = ["ProcessLauncher", "WarmClient", "WarmPytest"]

log = logging.getLogger(__name__)

#: How long the kept process may take to import pytest and say it is ready.
READY_TIMEOUT_S = 60.0

_SERVER_SOURCE = r'''"""Written by Rein's tests gate: a warm pytest, forked per run."""
import gc
import hmac
import importlib
import importlib.util
import os
import select
import signal
import socket
import struct
import sys
import traceback
import types

import pytest
from _pytest.config import default_plugins

for _name in default_plugins:
    try:
        importlib.import_module("_pytest." + _name)
    except Exception:
        pass

_OWN = set(os.environ.get("PYTHONPATH", "").split(os.pathsep))
_BASE = [p for p in sys.path[1:] if p not in _OWN]
_WARM = sorted({name.split(".")[0] for name in sys.modules if not name.startswith("_")})
# What is imported now lives as long as this process: a child's garbage
# collections (pytest's at its end among them) need not walk it, nor copy
# each page of it to mark it. Its garbage is collected first, not frozen
# for good (nor copied into every child).
gc.collect()
gc.freeze()


def _collides(folders):
    # One listing per folder, not two stats per warm module in each.
    for folder in folders:
        try:
            entries = set(os.listdir(folder))
        except OSError:
            continue
        for name in _WARM:
            if (name + ".py" in entries and os.path.isfile(os.path.join(folder, name + ".py"))) or (
                name in entries and os.path.isfile(os.path.join(folder, name, "__init__.py"))
            ):
                return True
    return False


def _receive(conn):
    data, fds, _flags, _address = socket.recv_fds(conn, 1 << 16, 3)
    if len(data) < 4:
        raise EOFError
    size = struct.unpack("!I", data[:4])[0]
    data = data[4:]
    while len(data) < size:
        more = conn.recv(1 << 16)
        if not more:
            raise EOFError
        data += more
    # token, folder, the number of arguments, the arguments, then the
    # environment's NAME=value entries: NUL-separated (neither holds a NUL).
    fields = [os.fsdecode(f) for f in data[:size].split(b"\0")]
    count = int(fields[2])
    if not 0 <= count <= len(fields) - 3:
        raise ValueError(f"it names {count} arguments of {len(fields) - 3} fields")
    env = dict(entry.partition("=")[::2] for entry in fields[3 + count :])
    request = {"token": fields[0], "cwd": fields[1], "args": fields[3 : 3 + count], "env": env}
    return request, fds


def _as_python_m_pytest():
    # A test's multiprocessing (spawn, forkserver) starts its workers from
    # ``__main__``: pytest's, as ``python -m pytest`` has it, never this file.
    main = types.ModuleType("__main__")
    main.__spec__ = importlib.util.find_spec("pytest.__main__")
    main.__file__ = main.__spec__.origin
    sys.modules["__main__"] = main
    return main.__file__


def _pytest(request, paths):
    os.setpgid(0, 0)  # its group: what the run leaves behind is killed with it
    os.chdir(request["cwd"])
    sys.path[:] = [request["cwd"], *paths, *_BASE]
    sys.argv = [_as_python_m_pytest(), *request["args"]]
    # Bytecode as a cold interpreter would have it in this environment.
    sys.dont_write_bytecode = bool(request["env"].get("PYTHONDONTWRITEBYTECODE"))
    sys.pycache_prefix = request["env"].get("PYTHONPYCACHEPREFIX") or None
    import random

    random.seed()
    try:
        code = pytest.main(request["args"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 3
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


def _refuse(conn, why):
    # "R" and why; the client runs pytest itself and says so.
    try:
        conn.sendall(b"R" + why.encode("utf-8", "replace")[:400])
    except OSError:
        pass


def _handle(conn, token):
    os.setsid()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    conn.settimeout(10)
    try:
        request, fds = _receive(conn)
    except (ValueError, IndexError) as exc:  # not the gate's own client's request
        _refuse(conn, f"a malformed request ({exc or type(exc).__name__})")
        return
    except EOFError:
        _refuse(conn, "the request ended early")
        return
    except OSError as exc:
        _refuse(conn, f"the request could not be read ({exc})")
        return
    conn.settimeout(None)
    if not hmac.compare_digest(str(request.get("token", "")).encode(), token.encode()):
        for fd in fds:
            os.close(fd)
        _refuse(conn, "not the gate's own client (its token)")
        return
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    paths = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    if _collides([request["cwd"], *paths]):
        conn.sendall(b"C")
        return
    pid = os.fork()
    if pid == 0:
        conn.close()
        _pytest(request, paths)
    done = os.pidfd_open(pid)
    select.select([conn, done], [], [])  # pytest's end, or the client's
    try:  # pytest's group (the child, until reaped, keeps its id)
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _, status = os.waitpid(pid, 0)
    conn.sendall(b"X" + struct.pack("!i", os.waitstatus_to_exitcode(status)))


def main(path, token):
    # What a handler needs (Python 3.9, Linux 5.3): without it, no "ready".
    os.close(os.pidfd_open(os.getpid()))
    _needed = (socket.recv_fds, os.waitstatus_to_exitcode)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(16)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        ready, _, _ = select.select([server, sys.stdin], [], [])
        if sys.stdin in ready and not os.read(0, 4096):
            return  # Rein is gone
        if server in ready:
            conn, _ = server.accept()
            if os.fork() == 0:
                server.close()
                try:
                    _handle(conn, token)
                finally:
                    os._exit(0)
            conn.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
'''

_CLIENT_SOURCE = r'''"""Written by Rein's tests gate: pytest run by the warm process."""
import os
import sys

import _socket  # not socket, nor json: their imports were most of this client's start

_ARGS = sys.argv[3:]


def _cold(why):
    report = os.environ.get("REIN_TESTS_REPORT")
    if report:  # the gate says the run was cold, and why
        try:
            with open(report + ".cold", "w", encoding="utf-8") as marker:
                marker.write(why)
        except OSError:
            pass
    os.execv(sys.executable, [sys.executable, "-m", "pytest", *_ARGS])


try:
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    conn.connect(sys.argv[1])
    fields = [sys.argv[2], os.getcwd(), str(len(_ARGS)), *_ARGS]
    fields += [f"{name}={value}" for name, value in os.environ.items()]
    body = b"\0".join(os.fsencode(f) for f in fields)
    fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))
    ancillary = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)]
    message = len(body).to_bytes(4, "big") + body
    sent = conn.sendmsg([message], ancillary)  # the descriptors go with the first bytes
    if sent < len(message):
        conn.sendall(message[sent:])
except (OSError, AttributeError) as exc:
    _cold(f"the warm process could not be reached ({exc})")
answer = b""
# "X" and the exit code; "C"; "R" and why, to the connection's end.
while (len(answer) < 5 or answer[:1] == b"R") and len(answer) < 1024:
    more = conn.recv(1024)
    if not more:
        break
    answer += more
if answer[:1] == b"C":
    _cold("a module the warm process has imported is in the project's own folders")
if answer[:1] == b"R":
    why = answer[1:].decode("utf-8", "replace")
    _cold("the warm process refused this client: " + (why or "(no reason)"))
if len(answer) < 5:
    sys.stderr.write("rein: the warm pytest process ended without an exit code\n")
    sys.exit(3)
sys.exit(int.from_bytes(answer[1:5], "big", signed=True))
'''


class KeptProcess(Protocol):
    """A started process (``asyncio.subprocess.Process`` is one)."""

    @property
    def stdout(self) -> asyncio.StreamReader | None: ...

    @property
    def returncode(self) -> int | None: ...

    def kill(self) -> None: ...

    async def wait(self) -> int: ...


class ProcessLauncher(Protocol):
    """Starts a kept process: ``argv`` in ``cwd`` with the child
    environment (no secrets), stdin a pipe that ends when Rein does,
    stdout a pipe, in its own process group, killed when Rein dies; in
    the gates' sandbox when they run in one, where it may also write the
    ``writable`` folders (Rein's scratch folders)."""

    def under(self) -> object | None:
        """The sandbox a process launched now starts in (None: none). A
        kept process launched under another one no longer serves."""
        ...

    async def launch(
        self, argv: Sequence[str], cwd: str, *, writable: Sequence[str] = ()
    ) -> KeptProcess: ...


@dataclass(frozen=True, slots=True)
class WarmClient:
    """How a run reaches the warm process: the client script, the socket
    and the token the kept process asks of its clients."""

    script: str
    socket: str
    token: str

    @property
    def folder(self) -> str:
        """The kept process's folder (its socket, the client): bound into
        the gates' sandbox so a sandboxed run's client reaches it."""
        return os.path.dirname(self.socket)


class WarmPytest:
    """The gate's kept pytest process (see the module docstring)."""

    def __init__(
        self,
        python: str,
        launcher: ProcessLauncher,
        scratch: Callable[[], Awaitable[Sequence[str]]] | None = None,
    ) -> None:
        self.python = python
        self.launcher = launcher
        #: The folders its runs write (the shadow trees'), made if need be:
        #: bound into its sandbox when it starts in one.
        self.scratch = scratch
        #: The sandbox it was launched under (see :meth:`ProcessLauncher.under`).
        self._under: object | None = None
        self._folder: Path | None = None
        self._process: KeptProcess | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = False
        self._finalizer: weakref.finalize[..., WarmPytest] | None = None
        self._token = secrets.token_hex(16)

    def start(self) -> None:
        """Start the kept process in the background (once; again when the
        sandbox it would start in is no longer the one it was started in:
        the old one is stopped first)."""
        if self._task is not None:
            if self.launcher.under() is self._under:
                return
            task, process, finalizer = self._task, self._process, self._finalizer
            old_folder = self._folder
            self._task = self._process = self._folder = self._finalizer = None
            self._ready = False
            old = asyncio.get_running_loop().create_task(
                _retire(task, process, finalizer, old_folder)
            )
        else:
            old = None
        folder = Path(tempfile.mkdtemp(prefix="rein-warm-pytest-"))
        (folder / "server.py").write_text(_SERVER_SOURCE, encoding="utf-8")
        (folder / "client.py").write_text(_CLIENT_SOURCE, encoding="utf-8")
        self._folder = folder
        self._under = self.launcher.under()
        self._task = asyncio.get_running_loop().create_task(self._launch(folder, old))

    async def _launch(self, folder: Path, old: asyncio.Task[None] | None) -> None:
        if old is not None:
            await asyncio.shield(old)  # stopped even when this start is cancelled
        argv = [self.python, str(folder / "server.py"), str(folder / "socket"), self._token]
        try:
            writable = [str(folder)]
            if self._under is not None and self.scratch is not None:
                writable += await self.scratch()
            process = await self.launcher.launch(argv, str(folder), writable=writable)
        except OSError as exc:
            log.info("tests gate: no warm pytest (%s)", exc)
            return
        self._process = process
        self._finalizer = weakref.finalize(self, _stop, process, folder)
        try:
            assert process.stdout is not None
            line = await asyncio.wait_for(process.stdout.readline(), READY_TIMEOUT_S)
        except (TimeoutError, OSError, ValueError):
            line = b""
        if line.strip() == b"ready":
            self._ready = True
        else:
            log.info("tests gate: the warm pytest did not start; pytest runs cold")
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    async def wait_ready(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the kept process to be ready."""
        if self._task is not None and not self._task.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._task), timeout_s)
        return self.client() is not None

    def client(self) -> WarmClient | None:
        """How to reach the kept process, None when it is not ready."""
        process, folder = self._process, self._folder
        if not self._ready or process is None or folder is None or process.returncode is not None:
            return None
        if self.launcher.under() is not self._under:
            return None  # started in another sandbox (or none) than the runs' now
        return WarmClient(
            script=str(folder / "client.py"), socket=str(folder / "socket"), token=self._token
        )

    async def close(self) -> None:
        """Stop the kept process (waited for, so its pipes are closed on
        this event loop) and remove its folder."""
        task, process = self._task, self._process
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._finalizer is not None:
            self._finalizer()
        elif self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
        if process is not None:
            with contextlib.suppress(TimeoutError, ProcessLookupError):
                await asyncio.wait_for(process.wait(), 10)
        self._task = self._process = self._folder = self._finalizer = None
        self._ready = False


async def _retire(
    task: asyncio.Task[None],
    process: KeptProcess | None,
    finalizer: weakref.finalize[..., WarmPytest] | None,
    folder: Path | None,
) -> None:
    """Stop a kept process started in another sandbox than the runs' now
    (waited for, so its pipes are closed on this event loop)."""
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    if finalizer is not None:
        finalizer()
    elif folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
    if process is not None:
        with contextlib.suppress(TimeoutError, ProcessLookupError):
            await asyncio.wait_for(process.wait(), 10)


def _stop(process: KeptProcess, folder: Path) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    shutil.rmtree(folder, ignore_errors=True)
