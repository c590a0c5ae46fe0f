"""Stale records made again off the verdict's path.

A record made while the run's change was in place (a verdict's run that
chose tests by their names records them) holds the changed code. Once that
change is undone (a repair that restores a function; every seed of the
tests bench), each test that ran the changed function has a newest record
that is *stale*: it says what the test ran with code that is no longer
there, so the test runs at every later verdict that selects its file
(:attr:`~rein.testgate.coverage_index.CoverageChoice.stale`), and a run
chosen by coverage records nothing, so it stays stale. toolz: from its
12th verdict on, 20-26 such tests ran at every verdict chosen by coverage,
a comment added to a module included.

So after each judgement, when the warm pytest is ready, those tests
(:meth:`~rein.testgate.picking.Picker.stale_tests`, at most
:data:`MAX_TESTS`) run once more in the background, traced, in the
shadow of the workspace before the run, the code their staleness is
measured against (:meth:`~rein.testgate.shadow_runs.ShadowRuns.refresh`);
their new records take the stale ones' place. It runs only by the kept
pytest process, never cold. The next judgement stops it first (it needs
that shadow, and the cores), and so do a command about to run, a
validation and the run's end: a refresh only ever uses the time the
model takes for its turn. It does not start when the run changed a file
that is not a Python module, or one whose text before the run is not
known: what the tests read there would be recorded as it was. A refresh that ended forgets the
tests it ran, recorded or not (a test it could not run is found stale
again by a verdict that meets it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from rein.testgate.picking import Picker
from rein.testgate.runner import NotWarm
from rein.testgate.shadow_runs import ShadowRuns

__all__ = ["MAX_TESTS", "Refresh"]

log = logging.getLogger("rein.testgate.gate")

#: The most tests one refresh runs (the rest wait for the next).
MAX_TESTS = 200


class Refresh:
    """The gate's refresh of stale records (see the module docstring)."""

    def __init__(self, runs: ShadowRuns, picker: Picker, limit_s: float) -> None:
        self._runs = runs
        self._picker = picker
        self._limit_s = limit_s
        self._task: asyncio.Task[None] | None = None
        #: Refreshes that ran to their end (for the tests).
        self.ended = 0

    def start(self, baseline: dict[str, str | None], unknown: Sequence[str] = ()) -> None:
        """After a judgement: record the stale tests again, in the
        background, with the changed files' texts before the run
        (``baseline``; ``unknown``: those whose text then is not known)."""
        if self._task is not None and not self._task.done():
            return
        if unknown or any(not path.endswith(".py") for path in baseline):
            return  # what the tests read would be recorded as it was (a data file)
        nodes = self._picker.stale_tests(MAX_TESTS)
        if nodes:
            self._task = asyncio.ensure_future(self._run(nodes, dict(baseline)))
            self._task.add_done_callback(_logged)

    def cancel(self) -> None:
        """Stop it without waiting (the run ended: an abort too)."""
        if self._task is not None:
            self._task.cancel()

    async def stop(self) -> None:
        """Stop it and wait for its pytest to be killed (a judgement starts).
        Raises nothing of the refresh's: a cancellation of the caller while
        it waits goes through (review: a suppressed ``CancelledError`` here
        swallowed the stopping of a judgement ahead made stale)."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task])

    async def settled(self) -> None:
        """Wait for a refresh under way to end (not stopped: the tests)."""
        if self._task is not None:
            await asyncio.wait([self._task])

    async def _run(self, nodes: list[str], baseline: dict[str, str | None]) -> None:
        try:
            ran = await self._runs.refresh(nodes, baseline, time.monotonic() + self._limit_s)
        except (NotWarm, OSError, UnicodeError, ValueError) as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError from exc  # stopped: its kill went wrong
            log.info("tests gate: stale records not made again: %s", exc)
            ran = True  # tried: not at every judgement
        if ran:
            self._picker.refreshed(nodes)
            self.ended += 1


def _logged(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("tests gate: stale records not made again: %r", task.exception())
