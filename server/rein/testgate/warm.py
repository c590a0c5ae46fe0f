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
and a run of the tests is then handed to it by the gate itself
(:mod:`rein.testgate.direct`: no sandbox start, shell or client), or,
where the gate cannot reach it or Rein's environment changed since it
started (:meth:`ProcessLauncher.same_environment`), the same shell command
through the gates' ``CommandRunner`` as a cold one, with a small *client*
in place of ``-m pytest``:

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
  a steer with its process group); then it kills pytest's process group,
  and, as the subreaper of the run (``PR_SET_CHILD_SUBREAPER``), every
  process the run left outside it (``setsid``), until none is left (5 s at
  most; else it does not answer): what a test started in the background
  ends with its run, before the gate's look for what it planted;
* when the kept process is not ready, is gone, refuses the client, or a
  module it has imported lies in the project's own folders (the project
  *is* one of pytest's dependencies), the client runs pytest itself
  (``exec python -m pytest``): a cold run, the same as without the warm
  process, which the client marks beside the report (``<report>.cold``,
  why) for the gate to say. A handler that ends without an exit code makes
  the client exit with 3 (pytest's internal error): the verdict is then
  unverified, never "passed".

The kept process's sandbox, and what it protects, is its launch's: before
each run the launcher makes the sandbox's command line for it again
(:meth:`ProcessLauncher.watch`); when it differs (a repository or a
protected path made or removed since), the run goes cold (:data:`STALE`)
and another kept process is started. One that did not answer a run is
stopped with its sandbox, not offered again, and replaced (:data:`HUNG`).

Where pytest loads the venv's entry-point plugins (``pytest11``), a
second kept process per set of them, a fork of this one that has imported
them as a run's pytest would, serves the runs whose pytest would load
exactly that set (:mod:`rein.testgate.warm_plugins`: the plugins imported
once, not in each fork; any other run, or a doubt, runs in a plain fork).

Each run is a fresh fork of a process that has imported only pytest, never
the project: the project's modules, its ``conftest.py`` and its tests are
imported by the child from the shadow, as in a cold run. pytest's
``get_config`` (its plugin manager, the ``Config``, the default plugins
registered) is made in the kept process for each set of ``-p no:`` the
gate gives; a fork's pytest takes its copy with the run's own invocation
and reads the rest (arguments, ini file, plugins, ``conftest.py``) itself,
as ``python -m pytest`` (pytest's ``_console_main``) does. Forked children
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

from rein.harness.process_ports import SandboxedStart
from rein.testgate.warm_plugins import PLUGINS_SOURCE
from rein.testgate.warm_scripts import CLIENT_SOURCE, SERVER_SOURCE

__all__ = ["HUNG", "STALE", "ProcessLauncher", "WarmClient", "WarmPytest"]

log = logging.getLogger(__name__)

#: How long the kept process may take to import pytest and say it is ready.
READY_TIMEOUT_S = 60.0

#: Why a run did not go to the kept process: its sandbox protects less (or
#: other paths) than one started now would.
STALE = (
    "the workspace's protected paths changed since the warm pytest started (a "
    "repository or protected file made or removed): it is started again"
)
#: Why a run the kept process did not answer ran cold.
HUNG = "the warm pytest did not answer: it was stopped, and another is started"


class KeptProcess(Protocol):
    """A started process (``asyncio.subprocess.Process`` is one)."""

    @property
    def pid(self) -> int: ...

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

    def same_environment(self) -> bool:
        """Whether a process launched now would get the environment the
        kept process was launched with (Rein's own has not changed)."""
        ...

    async def watch(self) -> SandboxedStart | None:
        """A run the kept process forks, in the sandbox it was launched
        in (now): what the sandbox looks at before a command there, and
        moves aside after it (:meth:`SandboxedStart.ended`), as around
        one of the gates' commands; its ``argv`` is not started. None
        when the sandbox would protect other paths now than at the kept
        process's launch (a repository the person made since): the kept
        process must not run it."""
        ...

    async def stop(self, process: KeptProcess) -> None:
        """Kill a kept process (hung) and what it started, and wait
        (bounded) until they are gone."""
        ...


@dataclass(frozen=True, slots=True)
class WarmClient:
    """How a run reaches the warm process: the client script, the socket
    and the token the kept process asks of its clients."""

    script: str
    socket: str
    token: str
    #: The sandbox's look around a run the gate hands to the kept process
    #: itself (:mod:`rein.testgate.direct`), None when it must not run it
    #: (:data:`STALE`); None: only the client does.
    watch: Callable[[], Awaitable[SandboxedStart | None]] | None = None
    #: Before a run through the client: why the kept process must not run
    #: it (:data:`STALE`), else None.
    check: Callable[[], Awaitable[str | None]] | None = None
    #: The kept process did not answer a run: it is stopped (awaited) and
    #: another started; it is not offered again.
    hung: Callable[[], Awaitable[None]] | None = None

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
        #: The kept process must be replaced (hung, or its protections old).
        self._stale = False
        #: The last replaced kept process's stop (awaited by :meth:`close`).
        self._retiring: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the kept process in the background (once; again when the
        sandbox it would start in is no longer the one it was started in:
        the old one is stopped first)."""
        if self._task is not None:
            if self.launcher.under() is self._under and not self._stale:
                return
            task, process, finalizer = self._task, self._process, self._finalizer
            old_folder = self._folder
            self._task = self._process = self._folder = self._finalizer = None
            self._ready = False
            old = asyncio.get_running_loop().create_task(
                _retire(task, process, finalizer, old_folder)
            )
            self._retiring = old
        else:
            old = None
        self._stale = False
        folder = Path(tempfile.mkdtemp(prefix="rein-warm-pytest-"))
        (folder / "server.py").write_text(SERVER_SOURCE, encoding="utf-8")
        (folder / "client.py").write_text(CLIENT_SOURCE, encoding="utf-8")
        (folder / "_rein_plugins.py").write_text(PLUGINS_SOURCE, encoding="utf-8")
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
        direct = self.launcher.same_environment()
        if not direct:  # a run's environment is the kept process's, changed
            log.debug(
                "tests gate: the environment changed since the warm pytest started: "
                "its runs go through its client"
            )
        return WarmClient(
            script=str(folder / "client.py"),
            socket=str(folder / "socket"),
            token=self._token,
            watch=self._watch if direct else None,
            check=None if direct else self._check,
            hung=lambda: self._hung(process),
        )

    async def _watch(self) -> SandboxedStart | None:
        start = await self.launcher.watch()
        if start is None:
            log.debug("tests gate: %s", STALE)
            self._replace()
        return start

    async def _check(self) -> str | None:
        start = await self._watch()
        if start is None:
            return STALE
        await start.ended()
        return None

    async def _hung(self, process: KeptProcess) -> None:
        """``process`` did not answer a run: stopped, with what it started,
        before the run's look; another is started."""
        log.info("tests gate: %s", HUNG)
        replace = self._process is process
        if replace:
            self._ready = False  # not offered again
        await self.launcher.stop(process)
        if replace and self._process is process:
            self._replace()

    def _replace(self) -> None:
        """Stop the kept process (not offered from now on) and start another."""
        self._ready = False
        self._stale = True
        self.start()

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
        if self._retiring is not None:  # a replaced one, whose start was cancelled
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._retiring), 15)
        self._task = self._process = self._folder = self._finalizer = None
        self._retiring = None
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
