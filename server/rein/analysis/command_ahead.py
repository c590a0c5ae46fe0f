"""A command's changes in a cold session, baselined as soon as the command
ends.

In a cold session a command's changes are judged file by file
(:mod:`rein.analysis.cold_commands`): their baseline is the changed files'
diagnostics with the analyzers shown the files as they were before the
command (their importers are opened and owed theirs, asked only where the
verdict finds errors), then the verdict asks them as they are. The
baseline needs nothing the verdict brings: the texts before the command
were read before it ran, and which files it changed is known once the disk
watcher has seen them (the run's changes, told to the gates after each
tool turn). So it is started then, in the background, while the model
takes its next turn, and the verdict awaits it (reported when it waits
more than a second) instead of asking for it.

It holds the gate's change lock while it asks (the analyzers are shown
files as they were): a change announced meanwhile waits for it, as for a
change's own baseline. A failure is logged as it ends (a verdict, if
one comes, then asks as before). A run that ends first stops it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from rein.analysis.baselines import FileBaseline
from rein.analysis.cold_commands import command_baselines
from rein.analysis.owed_importers import OwedImporters
from rein.analysis.run_texts import analysed, reader
from rein.harness.gating.gate_types import (
    FileByFileCounterfactual,
    FileByFileDiagnostics,
    ProgressReporter,
)
from rein.harness.gating.waiting import reported
from rein.harness.ports import Diagnostic, DiagnosticsSource, Mutation, Workspace

__all__ = ["BaselineAhead", "baseline_ahead"]

#: Its messages keep the name they had in analysis/gate.py (the log shows it).
log = logging.getLogger("rein.analysis.gate")

#: What a verdict that waits for it says.
WAITING = "the analyzers: the command's changed files before it"


class BaselineAhead:
    """The task taking a command's baseline (None when none runs)."""

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def start(self, taking: Coroutine[Any, Any, None]) -> None:
        """Take it (only when none runs: the caller checks :attr:`running`).
        A failure is logged when it ends, whether a verdict waits for it or
        not (a run that ends first would leave it unsaid)."""
        self.task = asyncio.ensure_future(taking)
        self.task.add_done_callback(_log_failure)

    def on_change(
        self,
        mutation: Mutation,
        source: DiagnosticsSource,
        cold: FileByFileDiagnostics | None,
        texts_before: Callable[[str], str | None] | None,
        workspace: Workspace | None,
        changing: asyncio.Lock,
        files: dict[str, FileBaseline],
        late: dict[str, tuple[Diagnostic, ...]],
        owed: OwedImporters,
        timeout_s: float,
    ) -> None:
        """A command's change in a cold session (``external``: the disk
        watcher saw it): its files' baseline (:func:`baseline_ahead`) is
        started now, while the model takes its next turn; the verdict
        awaits it. Nothing when none is to be taken or one runs."""
        if (
            mutation.origin != "external"
            or texts_before is None
            or workspace is None
            or not isinstance(cold, FileByFileCounterfactual)
            or self.running
        ):
            return
        paths = [p for p in analysed(source, set(mutation.paths)) if p not in files]
        if paths:
            self.start(
                baseline_ahead(
                    changing,
                    cold,
                    texts_before,
                    paths,
                    files,
                    late,
                    owed,
                    reader(workspace),
                    timeout_s,
                )
            )

    def stop(self) -> None:
        task, self.task = self.task, None
        if task is not None and not task.done():
            task.cancel()

    async def ready(self, progress: ProgressReporter | None) -> None:
        """Wait for it; never raises but for this wait's own cancellation
        (a failed one is logged: the verdict asks as it would have)."""
        task = self.task
        if task is None:
            return
        try:
            await reported(task, progress, WAITING, shared=True)
        except asyncio.CancelledError:
            if not task.cancelled():
                raise
        except Exception:  # logged as it ended (_log_failure)
            pass
        if self.task is task:
            self.task = None


def _log_failure(task: asyncio.Task[None]) -> None:
    if task.cancelled():
        return  # stopped: a run that ended, or a change's own baseline
    failure = task.exception()
    if failure is not None:
        log.error(
            "the baseline of a command's changes failed: a verdict asks for it",
            exc_info=failure,
        )


async def baseline_ahead(
    changing: asyncio.Lock,
    cold: FileByFileDiagnostics,
    texts_before: Callable[[str], str | None] | None,
    paths: Sequence[str],
    files: dict[str, FileBaseline],
    late: dict[str, tuple[Diagnostic, ...]],
    owed: OwedImporters,
    now: Callable[[str], Awaitable[str | None]],
    timeout_s: float,
) -> None:
    """The baseline of ``paths`` (a command changed them), into the gate's
    ``files``; their importers not baselined yet (in ``late``) are
    ``owed`` theirs (:func:`~rein.analysis.cold_commands.command_baselines`),
    with the gate's change lock (``changing``) held."""
    async with changing:
        touched = {*paths, *files}  # a tool's changed files are shown as they were too
        found = await command_baselines(
            cold,
            texts_before,
            touched,
            files,
            late,
            now,
            timeout_s,
            None,  # nobody waits yet: a verdict that does reports its own wait
        )
    if found is not None:
        files.update({p: b for p, b in found[0].items() if p not in files})
        owed.owe([p for p in found[1] if p not in files and p not in late], commanded=True)
