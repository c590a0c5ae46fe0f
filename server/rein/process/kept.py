"""Kept processes on the local machine: the tests gate's warm pytest
(:class:`rein.testgate.warm.ProcessLauncher`)."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Sequence

from rein.process.environment import child_environment
from rein.process.groups import dies_with_us

__all__ = ["KeptProcessLauncher"]


class KeptProcessLauncher:
    """Starts ``argv`` in ``cwd`` with the child environment (no secrets),
    in its own process group, stdin and stdout pipes, killed when this
    process dies (:func:`~rein.process.groups.dies_with_us`). The
    environment is the one a child working in ``workspace`` gets: in an
    isolated copy, none of git's location variables
    (:func:`~rein.process.environment.forget_git_location`), as the gate's
    commands."""

    def __init__(self, workspace: str | None = None) -> None:
        self.workspace = workspace

    async def launch(self, argv: Sequence[str], cwd: str) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            *dies_with_us(list(argv)),
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=child_environment(cwd=self.workspace),
        )
