"""A wait that says so when it passes a second: the awaited work runs, and
if it is not done within :data:`REPORT_AFTER_S` the reporter is told
(``waiting``), then told again when it is over (``done``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from rein.harness.gating.gate_types import ProgressReporter

__all__ = ["REPORT_AFTER_S", "reported"]

T = TypeVar("T")

#: A wait shorter than this is not reported.
REPORT_AFTER_S = 1.0


async def reported(
    work: Awaitable[T],
    progress: ProgressReporter | None,
    message: str,
    files: int | None = None,
    *,
    shared: bool = False,
) -> T:
    """Await ``work``, reporting the wait when it passes a second. A
    ``shared`` task (awaited by others too) is not cancelled when this wait
    is; any other work is."""
    task = asyncio.ensure_future(work)
    guarded = asyncio.shield(task) if shared else task
    if progress is None:
        return await guarded
    try:
        done, _ = await asyncio.wait({task}, timeout=REPORT_AFTER_S)
    except asyncio.CancelledError:
        if not shared:
            task.cancel()
        raise
    if done:
        return task.result()
    progress.waiting(message, files)
    try:
        return await guarded
    finally:
        progress.done(message)
