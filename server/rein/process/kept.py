"""Kept processes on the local machine: the tests gate's warm pytest
(:class:`rein.testgate.warm.ProcessLauncher`), in the gates' OS sandbox
when they run in one.

A kept process's sandbox is made at its launch: what it protects then
(read-only, hidden) is fixed for its life, while the gates' commands get
the workspace's protections as they are at their own start (a repository
or a protected file the person made since is read-only to them). So
before each of its runs (:meth:`KeptProcessLauncher.watch`) the sandbox's
command line for the kept process is made again: when it differs from the
launch's (a protection added or gone), the kept process serves that run
no more (the caller runs it cold and starts another)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import select
import signal
import subprocess
import time
from collections.abc import Sequence
from typing import Protocol

from rein.harness.ports import SandboxedStart
from rein.process.environment import child_environment
from rein.process.groups import dies_with_us, group_members

__all__ = ["STOP_WAIT_S", "KeptProcessLauncher", "KeptSandbox"]

log = logging.getLogger(__name__)

#: How long :meth:`KeptProcessLauncher.stop` waits for what the kept
#: process started (its sandbox's processes) to be gone.
STOP_WAIT_S = 5.0
_POLL_S = 0.02


class KeptSandbox(Protocol):
    """The gates' sandbox as the kept process needs it
    (:class:`rein.sandboxing.others.OtherCommandsSandbox` is one)."""

    def sandbox(self) -> object | None:
        """The sandbox the gates' commands start in now (None: none)."""
        ...

    async def start(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        writable: Sequence[str] = (),
        ends: bool = True,
    ) -> SandboxedStart:
        """``argv`` started in that sandbox (unchanged without one), its
        look off the event loop."""
        ...


class Stoppable(Protocol):
    """A kept process as :meth:`KeptProcessLauncher.stop` needs it."""

    @property
    def pid(self) -> int: ...

    def kill(self) -> None: ...

    async def wait(self) -> int: ...


class KeptProcessLauncher:
    """Starts ``argv`` in ``cwd`` with the child environment (no secrets),
    in its own process group, stdin and stdout pipes, killed when this
    process dies (:func:`~rein.process.groups.dies_with_us`). The
    environment is the one a child working in ``workspace`` gets: in an
    isolated copy, none of git's location variables
    (:func:`~rein.process.environment.forget_git_location`), as the gate's
    commands. With a ``sandbox`` (the gates'), it starts in it when they
    run in one, where it may also write the ``writable`` folders."""

    def __init__(self, workspace: str | None = None, sandbox: KeptSandbox | None = None) -> None:
        self.workspace = workspace
        self.sandbox = sandbox
        #: The environment the last process was launched with.
        self._launched: dict[str, str] | None = None
        #: The last launch's argv, folder and writable folders, and the
        #: sandbox's command line for them then (None: not sandboxed).
        self._launch: tuple[list[str], str, list[str]] | None = None
        self._wrapped: list[str] | None = None

    def same_environment(self) -> bool:
        return self._launched == child_environment(cwd=self.workspace)

    def under(self) -> object | None:
        return self.sandbox.sandbox() if self.sandbox is not None else None

    async def watch(self) -> SandboxedStart | None:
        """A run the kept process forks: the sandbox's look before and
        after it, as around a command started there now (nothing started);
        None when the sandbox would now give the kept process other
        protections than at its launch (its command line differs: a
        repository or protected path made or gone since), so it must not
        run it (the look is ended)."""
        if self.sandbox is None or self._launch is None:
            return _Unsandboxed([])
        argv, cwd, writable = self._launch
        start = await self.sandbox.start(argv, cwd=cwd, writable=writable, ends=True)
        if start.argv == self._wrapped:
            return start
        await start.ended()
        log.debug(
            "tests gate: the sandbox would protect other paths than at the warm pytest's "
            "launch: %s",
            sorted(set(start.argv) ^ set(self._wrapped or ())),
        )
        return None

    async def stop(self, process: Stoppable) -> None:
        """Kill ``process`` (a kept one, hung) and every process it
        started (its sandbox's), and wait, at most :data:`STOP_WAIT_S`,
        until they are gone."""
        ends: list[int] = []
        for pid in group_members(process.pid, live_only=True):
            with contextlib.suppress(OSError):
                ends.append(os.pidfd_open(int(pid)))
        try:
            for end in ends:
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(end, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), STOP_WAIT_S)
            deadline = time.monotonic() + STOP_WAIT_S
            while ends and time.monotonic() < deadline:
                ended, _, _ = select.select(ends, [], [], 0)  # a pidfd reads when it ended
                for end in ended:
                    ends.remove(end)
                    os.close(end)
                if ends:
                    await asyncio.sleep(_POLL_S)
        finally:
            for end in ends:
                os.close(end)

    async def launch(
        self, argv: Sequence[str], cwd: str, *, writable: Sequence[str] = ()
    ) -> asyncio.subprocess.Process:
        self._launch, self._wrapped = None, None
        if self.sandbox is not None:
            wrapped = (await self.sandbox.start(argv, cwd=cwd, writable=writable, ends=False)).argv
            if self.sandbox.sandbox() is not None:
                self._launch, self._wrapped = (list(argv), cwd, list(writable)), wrapped
            argv = wrapped
        self._launched = child_environment(cwd=self.workspace)
        starting = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *dies_with_us(list(argv)),
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env=self._launched,
            )
        )
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            # Cancelled (the gate closed): the process it started is
            # stopped and waited for, never left to a closed event loop.
            with contextlib.suppress(OSError):
                process = await starting
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
            raise


class _Unsandboxed:
    """A start outside any sandbox: nothing to look at."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv

    async def ended(self) -> str | None:
        return None

    def ended_now(self) -> str | None:
        return None

    def failure_note(self, output: str) -> str | None:
        return None
