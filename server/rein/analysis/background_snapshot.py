"""The run-start snapshot taken in the background: started when a run
starts (the model starts at once, the analyzers analyse the untouched
workspace while it thinks), stopped when the run ends before a change
waited for it, and awaited by the first change and the verdict, with the
wait reported when it passes a second. Awaiting it never raises: a failed
snapshot is logged and reported, and the gate goes on with the baseline it
had. What the snapshot is and what it judges is the gate's
(:mod:`rein.analysis.gate`)."""

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

    def start(self, taking: Coroutine[Any, Any, None]) -> None:
        """Take it anew (one still being taken is cancelled)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
        self.task = asyncio.create_task(taking)

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
