"""The run-start snapshot taken in the background: started when a run
starts (the model starts at once, the analyzers analyse the untouched
workspace while it thinks), stopped when the run ends before a change
waited for it, and awaited by the first change and the verdict, with the
wait reported when it passes a second. Awaiting it never raises: a failed
snapshot is logged and reported, and the gate goes on with the baseline it
had. What the snapshot is and what it judges is the gate's
(:mod:`rein.analysis.gate`).

Started ``deferred`` (the source defers its whole-workspace analysis:
:class:`~rein.harness.gating.gate_types.DeferredWorkspace`), it is not
taken until something needs it (:meth:`BackgroundSnapshot.need`, which
awaiting it does): until then the changes are judged file by file, their
answers not queued behind an analysis of files they do not reach."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from rein.harness.gating.gate_types import ProgressReporter
from rein.harness.gating.waiting import reported

__all__ = ["BackgroundSnapshot"]

#: Its messages keep the name they had in analysis/gate.py (the log shows it).
log = logging.getLogger("rein.analysis.gate")


class BackgroundSnapshot:
    """The task taking the run-start snapshot (:attr:`task`, None when none
    is being taken or it was awaited)."""

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None
        self._needed = asyncio.Event()

    def start(self, taking: Coroutine[Any, Any, None], *, deferred: bool = False) -> None:
        """Take it anew (one still being taken is cancelled); ``deferred``:
        once :meth:`need` is called."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
        self._needed = needed = asyncio.Event()
        if not deferred:
            needed.set()
        self.task = asyncio.create_task(self._once_needed(needed, taking))
        # Cancelled before it was needed (or before it ran at all): never
        # started, closed (a no-op for one that ran to its end).
        self.task.add_done_callback(lambda _: taking.close())

    @staticmethod
    async def _once_needed(needed: asyncio.Event, taking: Coroutine[Any, Any, None]) -> None:
        await needed.wait()
        await taking

    def need(self) -> None:
        """A verdict (or a change that cannot be judged file by file) needs
        it: a deferred one is taken now."""
        self._needed.set()

    def stop(self) -> None:
        """One still being taken is cancelled: no change waited for it."""
        task, self.task = self.task, None
        if task is not None and not task.done():
            task.cancel()

    async def ready(self, progress: ProgressReporter | None) -> None:
        """Wait for it (reported when it takes more than a second); never
        raises but for this wait's own cancellation."""
        task = self.task
        if task is None:
            return
        self.need()
        try:
            await reported(task, progress, "the analyzers: the workspace baseline", shared=True)
        except asyncio.CancelledError:
            if not task.cancelled():
                raise  # this wait was cancelled, not the snapshot
        except Exception as exc:
            log.exception("the analyzer gate could not take its baseline")
            if progress is not None:
                progress.failed(f"gate analyzer could not take its baseline: {exc}")
        if self.task is task:
            self.task = None
