"""The failing tests of a verdict judged while its first run goes on.

A blocked verdict used to be the first run, then the failing tests' re-run
beside their baseline run (two more pytest processes, started when the
first run ended): the verdict waited for all three one after the other.
Now the gate reads the first run's report as pytest writes it (a JSON
line per report, :mod:`rein.testgate.pytest_run`) and, as soon as a test
fails, runs it again and in the baseline (:meth:`ShadowRuns.again_and_before`)
while the first run goes on: a *wave*. The re-run goes to a third kept
shadow tree, "again" (the first run still holds "now"), made fresh for
each wave as before; the baseline to "before". One wave at a time: the
tests that fail during a wave wait for the next, and those that failed
after the last wave started (or that the stream did not show: a run whose
report was read only at its end) make a last wave when the first run has
ended. So the verdict waits after its first run only for what is left of
the waves; the tests judged, the re-run's fresh tree and the baseline's
texts are those of the verdict before (a test's re-run and baseline are
still one run each). A wave started for a test the finished run does not
count as failing (a changed test file that does not import: blocking at
once) judges nothing that is read. The waves are cancelled (their pytest
processes killed) when the verdict ends another way.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rein.testgate.junit import TestResult
from rein.testgate.runner import TestRun

if TYPE_CHECKING:
    from rein.testgate.shadow_runs import ShadowRuns

__all__ = ["POLL_S", "Waves", "failing_ids", "watch_report"]

#: How often the first run's report is read for new failures.
POLL_S = 0.02


def failing_ids(lines: Iterable[bytes]) -> list[str]:
    """The node ids of the failing tests (and files that could not be
    collected) in the report plugin's whole JSON lines, as
    :func:`~rein.testgate.pytest_run.read_report` names them."""
    found: list[str] = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict):
            continue
        if row.get("kind") == "collect":
            found.append(str(row.get("nodeid") or "."))
        elif row.get("kind") == "test" and row.get("outcome") == "failed":
            found.append(str(row.get("nodeid", "")))
    return found


async def watch_report(report: Path, waves: Waves) -> None:
    """Read ``report`` as pytest writes it and hand each new failure to
    ``waves``, until cancelled (when the run ends)."""
    offset = 0
    partial = b""
    while True:
        await asyncio.sleep(POLL_S)
        try:
            with report.open("rb") as stream:
                stream.seek(offset)
                chunk = stream.read()
        except FileNotFoundError:
            continue
        offset += len(chunk)
        lines = (partial + chunk).split(b"\n")
        partial = lines.pop()  # a line not written whole yet
        failed = failing_ids(lines)
        if failed:
            waves.seen(failed)


def _as_failing(node_id: str) -> TestResult:
    """A failing test known by its node id alone (what a wave needs)."""
    return TestResult(node_id=node_id, outcome="failed", file=node_id.split("::")[0])


class Waves:
    """The re-runs and baseline runs of one verdict's failing tests (see
    the module docstring)."""

    def __init__(
        self,
        runs: ShadowRuns,
        overlay: dict[str, str | None],
        baseline: dict[str, str | None],
        deadline: float,
    ) -> None:
        self._runs = runs
        self._overlay = overlay
        self._baseline = baseline
        self._deadline = deadline
        #: Failing tests no wave has taken yet, in the order seen.
        self._pending: dict[str, TestResult] = {}
        #: Those a wave has taken.
        self._taken: set[str] = set()
        self._results: list[tuple[TestRun, TestRun]] = []
        self._driver: asyncio.Task[None] | None = None
        #: How many waves ran (for the bench and the tests).
        self.count = 0

    def seen(self, node_ids: Sequence[str]) -> None:
        """Tests the first run reported failing: judged by the next wave."""
        self._add(_as_failing(i) for i in node_ids)

    def _add(self, results: Iterable[TestResult]) -> None:
        for result in results:
            if result.node_id not in self._taken:
                self._pending.setdefault(result.node_id, result)
        if self._pending and (self._driver is None or self._driver.done()):
            self._driver = asyncio.ensure_future(self._drive())

    async def _drive(self) -> None:
        while self._pending:
            wave, self._pending = list(self._pending.values()), {}
            self._taken.update(r.node_id for r in wave)
            self.count += 1
            self._results.append(
                await self._runs.again_and_before(
                    self._overlay, wave, self._baseline, self._deadline, again_in="again"
                )
            )

    async def finish(self, failing: Sequence[TestResult]) -> tuple[TestRun, TestRun]:
        """The first run ended with ``failing``: every one of them run again
        and in the baseline (a last wave for those no wave took), the waves'
        runs merged. An error of a wave (a shadow that could not be built)
        is raised here."""
        self._add(failing)
        if self._driver is not None:
            await self._driver
        again, then = TestRun(), TestRun()
        for wave_again, wave_then in self._results:
            for merged, run in ((again, wave_again), (then, wave_then)):
                merged.results += run.results
                if merged.unverified is None:
                    merged.unverified = run.unverified
        return again, then

    async def cancel(self) -> None:
        """Stop a wave still running (the verdict ended without it) and
        wait for its processes' end."""
        driver, self._driver = self._driver, None
        if driver is None:
            return
        driver.cancel()
        await asyncio.wait([driver])  # a cancellation of the verdict still raises
        if not driver.cancelled():
            driver.exception()  # retrieved: an error of a wave no verdict reads is moot
