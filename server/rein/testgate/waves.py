"""The failing tests of a verdict judged while its first run goes on.

A blocked verdict used to be the first run, then the failing tests' re-run
beside their baseline run (two more pytest processes, started when the
first run ended): the verdict waited for all three one after the other.
Now the gate reads the first run's report as pytest writes it (a JSON line
per report, :mod:`rein.testgate.pytest_run`) and, as soon as a test fails,
runs it again and in the baseline (:meth:`ShadowRuns.again_and_before`)
while the first run goes on: a *wave*. The re-run goes to a third kept
shadow tree, "again" (the first run still holds "now"), made fresh for
each wave as before; the baseline to "before". One wave at a time: the
tests that fail during a wave wait for the next, and those that failed
after the last wave started (or that the stream did not show: a run whose
report was read only at its end) make a last wave when the first run has
ended. A wave while the first run goes on runs the re-run, then the
baseline (one process beside the first run's: on 2 cores, two at once
beside it slowed it as much as they saved, click's first runs 0.77 → 1.47
s at a load of 5); a wave after it, both at once. A wave starts before
that only when what is left of the first run (its tests collected and done
so far, from the plugin's lines, and the time they took) looks longer than
the gate's last wave took: a wave still running when the first run ends
holds the trees, and the last wave waits for it, so on a short first run
two waves would cost more than one. So the verdict waits after its first
run only for what is left of the waves; the tests judged, the re-run's
fresh tree and the baseline's texts are as they were before the waves (a
test's re-run and baseline are still one run each). A wave started for a
test the finished run does not count as failing (a changed test file that
does not import: blocking at once) judges nothing that is read. The waves
are cancelled (their pytest processes killed) when the verdict ends
another way.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rein.testgate.junit import TestResult
from rein.testgate.runner import TestRun


class WaveRuns(Protocol):
    """What a wave runs its tests with (:class:`rein.testgate.shadow_runs.ShadowRuns`)."""

    #: How long the last wave took (the guess before the first).
    wave_s: float

    async def again_and_before(
        self,
        overlay: dict[str, str | None],
        failing: Sequence[TestResult],
        baseline: dict[str, str | None],
        deadline: float,
        *,
        again_in: str = "now",
        one_by_one: bool = False,
    ) -> tuple[TestRun, TestRun]:
        """The failing tests again (in ``again_in``) and in the baseline."""
        ...


__all__ = [
    "POLL_S",
    "WAVE_GUESS_S",
    "Progress",
    "WaveRuns",
    "Waves",
    "read_lines",
    "watch_report",
]

#: How often the first run's report is read for new failures.
POLL_S = 0.02
#: What a wave is taken to cost before one was timed (a forked run of a
#: few tests on a small project, about 0.15 s quiet, with some margin).
WAVE_GUESS_S = 0.3


@dataclass(slots=True)
class Progress:
    """What the report plugin's lines say so far."""

    #: Failing tests (and files that could not be collected), named as
    #: :func:`~rein.testgate.pytest_run.read_report` names them.
    failing: list[str] = field(default_factory=list)
    #: Tests collected to run (None: not said yet, or not by this run).
    total: int | None = None
    #: When they were (``time.monotonic``, the machine's clock).
    collected_at: float | None = None
    #: Tests done (their teardown reported).
    done: int = 0


def read_lines(lines: Iterable[bytes], progress: Progress) -> list[str]:
    """Add the report plugin's whole JSON ``lines`` to ``progress``; the
    failing tests among them."""
    found: list[str] = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict):
            continue
        kind = row.get("kind")
        if kind == "collect":
            found.append(str(row.get("nodeid") or "."))
        elif kind == "collected" and isinstance(row.get("count"), int):
            progress.total = row["count"]
            at = row.get("at")
            progress.collected_at = at if isinstance(at, float) else time.monotonic()
        elif kind == "test":
            if row.get("outcome") == "failed":
                found.append(str(row.get("nodeid", "")))
            if row.get("when") == "teardown":
                progress.done += 1
    progress.failing += found
    return found


async def watch_report(report: Path, waves: Waves) -> None:
    """Read ``report`` as pytest writes it and hand each new failure, and
    how far the run is, to ``waves``, until cancelled (when the run ends)."""
    offset = 0
    partial = b""
    progress = Progress()
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
        failed = read_lines(lines, progress)
        waves.progress = progress
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
        runs: WaveRuns,
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
        #: The first run has ended: every wave is worth starting.
        self._ended = False
        #: How far the first run is (:func:`watch_report`).
        self.progress = Progress()
        #: How many waves ran (for the bench and the tests).
        self.count = 0

    def seen(self, node_ids: Sequence[str]) -> None:
        """Tests the first run reported failing: judged by the next wave."""
        self._add(_as_failing(i) for i in node_ids)

    def _add(self, results: Iterable[TestResult]) -> None:
        for result in results:
            if result.node_id not in self._taken:
                self._pending.setdefault(result.node_id, result)
        if self._pending and (self._driver is None or self._driver.done()) and self._worth():
            self._driver = asyncio.ensure_future(self._drive())

    def _worth(self) -> bool:
        """Whether a wave started now is likely to end before the first
        run: else the failing tests wait for its end, when one wave takes
        them all. A wave started early that is still running when the
        first run ends holds the trees, and the last wave waits for it: on
        a run shorter than a wave (cachetools's 0.12 s), two waves one
        after the other after the first run cost more than one. What is
        left of the first run is guessed from its tests done so far."""
        if self._ended:
            return True
        total, done, since = self.progress.total, self.progress.done, self.progress.collected_at
        if total is None or since is None:
            return True  # no count (pytest-xdist's controller collects none)
        left = (time.monotonic() - since) / max(done, 1) * max(total - done, 0)
        return left >= self._runs.wave_s

    async def _drive(self) -> None:
        while self._pending:
            wave, self._pending = list(self._pending.values()), {}
            self._taken.update(r.node_id for r in wave)
            self.count += 1
            started = time.monotonic()
            # Beside the first run, one more process at a time (2 cores:
            # the first run's and one); once it has ended, both at once.
            self._results.append(
                await self._runs.again_and_before(
                    self._overlay,
                    wave,
                    self._baseline,
                    self._deadline,
                    again_in="again",
                    one_by_one=not self._ended,
                )
            )
            self._runs.wave_s = time.monotonic() - started
            if not self._worth():
                return  # the rest waits for the first run's end

    async def finish(self, failing: Sequence[TestResult]) -> tuple[TestRun, TestRun]:
        """The first run ended with ``failing``: every one of them run again
        and in the baseline (a last wave for those no wave took), the waves'
        runs merged. An error of a wave (a shadow that could not be built)
        is raised here."""
        self._ended = True
        self._add(failing)  # a wave still running takes them next
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
