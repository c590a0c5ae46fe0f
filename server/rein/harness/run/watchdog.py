"""The run's idle watchdog, and what counts as activity.

A run that emits no event for ``harness.runIdleTimeoutMs`` is aborted. Time
spent in a tool, a gate (an install, an analyzer verdict, a preview's
observation), or a compaction is activity, not idleness: those open an
:meth:`Activity.paused` scope, which emits ``watchdog_paused`` when the
first opens and ``watchdog_resumed`` when the last closes, and the watchdog
measures idle time from the end of the scope.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import anyio

from rein.harness.events import Emit, WatchdogPaused, WatchdogResumed
from rein.harness.run.run_types import RunControl

__all__ = ["Activity", "watchdog"]


class Activity:
    """Open scopes of work that is not idleness (nested scopes count once)."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._open: list[str] = []

    @property
    def active(self) -> bool:
        return bool(self._open)

    @contextmanager
    def paused(self, reason: str) -> Iterator[None]:
        first = not self._open
        self._open.append(reason)
        if first:
            self._emit(WatchdogPaused(reason=reason))
        try:
            yield
        finally:
            self._open.remove(reason)
            if not self._open:
                self._emit(WatchdogResumed(reason=reason))


async def watchdog(
    control: RunControl,
    limit_s: float,
    last_event: Callable[[], float],
    busy: Callable[[], bool],
    touch: Callable[[], None],
) -> None:
    """Abort the run through ``control`` after ``limit_s`` without an event,
    not counting the time ``busy()`` is true (``touch`` restarts the count)."""
    while True:
        if busy():
            # Busy time does not count: measure from its end.
            touch()
            await anyio.sleep(limit_s)
            continue
        idle = time.monotonic() - last_event()
        if idle >= limit_s:
            control.abort(f"idle timeout: no event for {limit_s:g} s (harness.runIdleTimeoutMs)")
            return
        await anyio.sleep(limit_s - idle)
