"""A :class:`rein.testgate.waves.WaveRuns` whose runs never end by
themselves: each waits until cancelled, and is counted when it starts and
when its cancellation ends it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from rein.testgate.baseline_feed import Feed
from rein.testgate.junit import TestResult
from rein.testgate.runner import TestRun

__all__ = ["EndlessRuns"]


class EndlessRuns:
    def __init__(self, workers: int = 2) -> None:
        self._workers = workers
        #: (kind, the node ids) of each run started, in order.
        self.started: list[tuple[str, tuple[str, ...]]] = []
        #: How many runs their cancellation ended.
        self.cancelled = 0

    @property
    def workers(self) -> int:
        return self._workers

    async def _forever(self, kind: str, names: Sequence[str]) -> TestRun:
        self.started.append((kind, tuple(names)))
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        raise AssertionError("unreachable")

    async def rerun(
        self, overlay: dict[str, str | None], failing: Sequence[TestResult], deadline: float
    ) -> TestRun:
        return await self._forever("rerun", [t.node_id for t in failing])

    async def before(
        self, failing: Sequence[TestResult], baseline: dict[str, str | None], deadline: float
    ) -> TestRun:
        return await self._forever("before", [t.node_id for t in failing])

    async def follow(
        self,
        feed: Feed,
        targets: Sequence[str],
        only: list[str] | None,
        baseline: dict[str, str | None],
        deadline: float,
    ) -> TestRun:
        return await self._forever("follow", list(targets))
