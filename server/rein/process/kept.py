"""Kept processes on the local machine: the tests gate's warm pytest
(:class:`rein.testgate.warm.ProcessLauncher`), in the gates' OS sandbox
when they run in one."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Sequence
from typing import Protocol

from rein.harness.ports import SandboxedStart
from rein.process.environment import child_environment
from rein.process.groups import dies_with_us

__all__ = ["KeptProcessLauncher", "KeptSandbox"]


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

    def same_environment(self) -> bool:
        return self._launched == child_environment(cwd=self.workspace)

    def under(self) -> object | None:
        return self.sandbox.sandbox() if self.sandbox is not None else None

    async def watch(self) -> SandboxedStart:
        """A run the kept process forks: the sandbox's look before and
        after it, as around a command started there now (nothing started)."""
        cwd = self.workspace or os.getcwd()
        if self.sandbox is None:
            return _Unsandboxed([])
        return await self.sandbox.start(["true"], cwd=cwd, ends=True)

    async def launch(
        self, argv: Sequence[str], cwd: str, *, writable: Sequence[str] = ()
    ) -> asyncio.subprocess.Process:
        if self.sandbox is not None:
            argv = (await self.sandbox.start(argv, cwd=cwd, writable=writable, ends=False)).argv
        self._launched = child_environment(cwd=self.workspace)
        return await asyncio.create_subprocess_exec(
            *dies_with_us(list(argv)),
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=self._launched,
        )


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
