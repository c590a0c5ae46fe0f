"""The failing tests of a verdict judged while its first run goes on.

A blocked verdict used to be the first run, then the failing tests'
re-run beside their baseline run, each a pytest process of its own. Now
the first run re-runs a failing test at once in its own process
(:mod:`rein.testgate.rerun_in_process`), and the gate reads the first
run's report as pytest writes it (a JSON line per report,
:mod:`rein.testgate.pytest_run`):

* the baseline's run starts with the first run (:meth:`Waves.started`)
  and is fed each test reported failing (:mod:`rein.testgate.baseline_feed`:
  it collected what the first run collects, in the kept "before" tree, and
  runs a test as its name comes); without a feed (the whole suite, a run
  big enough for pytest-xdist, a feed's run that ended early) a test
  reported failing goes at once to a baseline run of its own, the tests
  that fail while one runs to the next;
* a test whose in-process re-run failed the same way is confirmed failing:
  it needs no other run;
* a test whose in-process re-run passed or failed another way (a flaky
  suspect), and a failure with no in-process re-run (a setup or teardown
  error, a file that could not be collected, a run of pytest-xdist's
  workers), goes to a re-run in a fresh shadow (the kept "again" tree,
  made fresh), as before: passing there, it is flaky.

Beside the first run, one more pytest process at a time that runs tests
(2 cores: the first run's and one; two beside it slowed it as much as
they saved, click's first runs 0.77 → 1.47 s at a load of 5; the feed's
run mostly waits and takes no room): a baseline batch first, then a fresh
re-run. Once the first run has ended (:meth:`Waves.finish`: the rest of
its report read, every failing test it counts fed or given to the runs it
still needs, the feed ended), the two kinds run at once. With
``gates.tests.workers`` 1 (the gate may use one core) none runs beside
the first run and, after it, one at a time (the baseline's first): the
judgement needs no order, and Markdown's blocked verdicts with no run
beside a first run shared by two forks took 1.2-1.7 → 1.7-2.3 s at a
load of 5, so with 2 they stay beside it. So the verdict
waits after its first run only for what is left of these runs (with a
feed and no suspect: the last failing test's baseline call); the tests
judged, the re-run's fresh tree and the baseline's texts are as they
were. A run started for a test the finished run does not count as failing
(a changed test file that does not import: blocking at once) judges
nothing that is read. The runs are cancelled (their pytest processes
killed) when the verdict ends another way, a first run failing no test
included.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from rein.testgate.baseline_feed import Feed
from rein.testgate.junit import TestResult
from rein.testgate.runner import XDIST_FROM_FILES, XDIST_FROM_TESTS, TestRun


class WaveRuns(Protocol):
    """What the waves run their tests with (:class:`rein.testgate.shadow_runs.ShadowRuns`)."""

    @property
    def workers(self) -> int:
        """How many pytest processes the gate may run at once
        (``gates.tests.workers``): 1 runs the waves one after another,
        after the first run."""
        ...

    async def rerun(
        self, overlay: dict[str, str | None], failing: Sequence[TestResult], deadline: float
    ) -> TestRun:
        """The failing tests again, in a fresh shadow."""
        ...

    async def before(
        self, failing: Sequence[TestResult], baseline: dict[str, str | None], deadline: float
    ) -> TestRun:
        """The failing tests in the shadow of the workspace before the run."""
        ...

    async def follow(
        self,
        feed: Feed,
        targets: Sequence[str],
        only: list[str] | None,
        baseline: dict[str, str | None],
        deadline: float,
    ) -> TestRun:
        """What the first run collects, collected in the shadow of the
        workspace before the run; the tests ``feed`` names run as they come."""
        ...


__all__ = [
    "EARLY_FOLLOW_FILES",
    "EARLY_FOLLOW_TESTS",
    "POLL_S",
    "Heard",
    "ReportReader",
    "WaveRuns",
    "Waves",
    "read_lines",
    "watch_report",
]

#: How often the first run's report is read for new failures.
POLL_S = 0.02
#: A first run of a few test files and at most this many named tests (or
#: classes) has its baseline run start beside it at once, not at its first
#: failure: its collection is small beside the first run's, and on such a
#: run a test fails near its end (toolz, cachetools: the first run 0.2-0.3 s,
#: the baseline's start and collection 0.15-0.2 s after it at a load of 6).
#: Not a bigger run: collecting it twice at once slowed the first run
#: (click's clean verdicts 0.5 → 0.9 s).
EARLY_FOLLOW_TESTS = 50
#: ... in at most this many test files (toolz: a change that two test
#: files' tests reach waited 0.11-0.12 s after its first run for the
#: baseline's start and collection, on a verdict of 0.22 s; click, by line,
#: a few tests over 4-10 files: with 3 the median verdict was 0.39-0.41 of
#: its suite, 0.07-0.09 s of it after the first run; with 20, 0.33-0.35
#: and 0.01 s, two runs each in turn).
EARLY_FOLLOW_FILES = 20

#: What a line of the report says of a test: it failed and no in-process
#: re-run follows ("failed"), or one follows ("retrying"); its in-process
#: re-run failed the same way ("confirmed") or not ("suspect"); or that
#: the session finished ("finished": every failing test was said).
Said = Literal["failed", "retrying", "confirmed", "suspect", "finished"]


@dataclass(frozen=True, slots=True)
class Heard:
    """One thing the report said of a test (or of a file that could not be
    collected), named as :func:`~rein.testgate.pytest_run.read_report`
    names it."""

    node_id: str
    said: Said


def read_lines(lines: Iterable[bytes]) -> list[Heard]:
    """What the report plugin's whole JSON ``lines`` say of failing tests."""
    heard: list[Heard] = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict):
            continue
        kind, node = row.get("kind"), str(row.get("nodeid") or "")
        if kind == "collect":
            heard.append(Heard(node or ".", "failed"))
        elif kind == "test" and row.get("outcome") == "failed":
            heard.append(Heard(node, "retrying" if row.get("again") is True else "failed"))
        elif kind == "again":
            heard.append(Heard(node, "confirmed" if row.get("same") is True else "suspect"))
        elif kind == "finish":
            heard.append(Heard("", "finished"))
    return heard


class ReportReader:
    """Reads the whole lines added to a run's reports since the last read
    (one per share of a first run, :mod:`rein.testgate.cores`): the
    session "finished" once each report said so."""

    def __init__(self, reports: Path | Sequence[Path]) -> None:
        self.reports = [reports] if isinstance(reports, Path) else list(reports)
        self._offsets = [0] * len(self.reports)
        self._partials = [b""] * len(self.reports)
        self._finished = [False] * len(self.reports)

    def read(self) -> list[Heard]:
        heard: list[Heard] = []
        for at, report in enumerate(self.reports):
            try:
                with report.open("rb") as stream:
                    stream.seek(self._offsets[at])
                    chunk = stream.read()
            except FileNotFoundError:
                continue
            self._offsets[at] += len(chunk)
            lines = (self._partials[at] + chunk).split(b"\n")
            self._partials[at] = lines.pop()  # a line not written whole yet
            for one in read_lines(lines):
                if one.said != "finished":
                    heard.append(one)
                elif not all(self._finished):
                    self._finished[at] = True
                    if all(self._finished):
                        heard.append(one)
        return heard


async def watch_report(reports: Path | Sequence[Path], waves: Waves) -> None:
    """Read ``reports`` as pytest writes them and hand what they say of
    failing tests to ``waves``, until cancelled (when the run ends:
    :meth:`Waves.finish` reads the rest)."""
    reader = ReportReader(reports)
    waves.reader = reader
    waves.started()
    while True:
        await asyncio.sleep(POLL_S)
        heard = reader.read()
        if heard:
            waves.heard(heard)


def _as_failing(node_id: str) -> TestResult:
    """A failing test known by its node id alone (what a run needs)."""
    return TestResult(node_id=node_id, outcome="failed", file=node_id.split("::")[0])


@dataclass(slots=True)
class _Lane:
    """The runs of one kind: the tests waiting for the next, the one
    running, the runs done."""

    waiting: dict[str, TestResult] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)
    running: asyncio.Task[TestRun] | None = None
    done: list[TestRun] = field(default_factory=list)

    def add(self, result: TestResult) -> None:
        if result.node_id not in self.taken:
            self.waiting.setdefault(result.node_id, result)

    @property
    def busy(self) -> bool:
        return self.running is not None  # until its end is handled (Waves._ran)


class Waves:
    """The baseline runs and fresh re-runs of one verdict's failing tests
    (see the module docstring)."""

    def __init__(
        self,
        runs: WaveRuns,
        overlay: dict[str, str | None],
        baseline: dict[str, str | None],
        deadline: float,
        *,
        targets: Sequence[str] | None = None,
        only: Sequence[str] | None = None,
    ) -> None:
        self._runs = runs
        self._overlay = overlay
        self._baseline = baseline
        self._deadline = deadline
        self._before = _Lane()
        self._again = _Lane()
        #: Tests whose in-process re-run's line is still to come.
        self._retrying: set[str] = set()
        #: Tests whose in-process re-run failed the same way.
        self.confirmed: set[str] = set()
        #: The first run has ended: both kinds of run at once.
        self._ended = False
        #: What the first run collects (its targets and per-test choice),
        #: when the baseline's run can follow it with a feed.
        self._follows = _followable(targets, only)
        #: The baseline's run's feed, once it started with the first run.
        self._feed: Feed | None = None
        #: The names given to the feed, and the test files it collected.
        self._fed: set[str] = set()
        self._follow_files: frozenset[str] = frozenset()
        #: Set when a run ended.
        self._changed = asyncio.Event()
        #: The runs' errors (a shadow that could not be built).
        self._errors: list[BaseException] = []
        #: Stopped (:meth:`cancel`): no run starts any more, not even from a
        #: cancelled run's end (:meth:`_ran`).
        self._stopped = False
        #: The first run's report, as read so far (:func:`watch_report`).
        self.reader: ReportReader | None = None
        #: How many runs (pytest processes) the waves started.
        self.count = 0
        #: How long the verdict waited, after the first run, for the
        #: report's rest to be read (for the bench).
        self.read_s = 0.0

    @property
    def _side_by_side(self) -> bool:
        """Whether runs may run at once (``gates.tests.workers`` of 2 or
        more): else none starts beside the first run, and after it one at
        a time."""
        return self._runs.workers >= 2

    def started(self) -> None:
        """The first run started: a small one's baseline run starts beside
        it (see :data:`EARLY_FOLLOW_TESTS`)."""
        if self._follows is None or self._feed is not None or not self._side_by_side:
            return
        targets, only = self._follows
        small = only is not None and len(only) <= EARLY_FOLLOW_TESTS
        if small and len(targets) <= EARLY_FOLLOW_FILES:
            self._start_follow(targets, list(only or ()))

    def _start_follow(self, files: Sequence[str], only: list[str] | None) -> None:
        if self._stopped:
            return
        self._feed, self._follow_files = Feed(), frozenset(files)
        run = self._runs.follow(self._feed, list(files), only, self._baseline, self._deadline)
        self._before.running = asyncio.ensure_future(run)
        self._before.running.add_done_callback(self._ran)
        self.count += 1

    def _follow(self, test: TestResult) -> None:
        """The first test failed while the first run goes on: the
        baseline's run of its file starts, to be fed the file's failing
        tests as they fail (:mod:`rein.testgate.baseline_feed`), when it
        can. Not at the first run's start, nor collecting all the first
        run collects: beside a first run that collects hundreds of tests,
        a second collection of them slowed it (click's clean verdicts 0.5
        → 0.9 s, Markdown's first runs 1.5 → 2.1 s at a load of 7)."""
        file = test.node_id.split("::")[0]
        if self._follows is None or self._ended or self._before.busy or self._before.done:
            return
        if not self._side_by_side:
            return
        if "::" not in test.node_id:
            return  # a file that could not be collected
        targets, only = self._follows
        if file not in targets:
            return
        self._start_follow(
            [file], None if only is None else [o for o in only if o.split("::")[0] == file]
        )

    def _to_baseline(self, test: TestResult) -> None:
        if test.node_id in self._fed:
            return  # the feed's run has it
        if self._feed is None:
            self._follow(test)
        following = self._feed is not None and not self._feed.ended
        if "::" not in test.node_id:
            # A file that could not be collected: a baseline run imports it
            # alone, running none of its tests, after the feed's run.
            self._before.add(test)
            return
        if following and test.node_id.split("::")[0] in self._follow_files:
            assert self._feed is not None
            self._fed.add(test.node_id)
            self._feed.give([test.node_id])
            return
        if following:
            # Another file's: the feed's run ends with what it has, and a
            # baseline run of its own takes this one (one tree).
            assert self._feed is not None
            self._feed.end()
        self._before.add(test)

    def heard(self, heard: Iterable[Heard]) -> None:
        """What the first run's report said (see :class:`Heard`)."""
        for one in heard:
            if one.said == "finished":
                # Every failing test was said: the feed's run ends while
                # the first run's process does (pytest's last hooks, the exit).
                if self._feed is not None:
                    self._feed.end()
                continue
            test = _as_failing(one.node_id)
            if one.said in ("failed", "retrying"):
                self._to_baseline(test)
                if one.said == "failed":
                    self._again.add(test)
                else:
                    self._retrying.add(one.node_id)
            else:
                self._retrying.discard(one.node_id)
                if one.said == "confirmed":
                    self.confirmed.add(one.node_id)
                else:
                    self.confirmed.discard(one.node_id)
                    self._again.add(test)
        self._start()

    def _start(self) -> None:
        """Start the runs that may start: beside the first run one process
        at a time, the baseline's first; after it, one of each kind (with
        ``workers`` 1: none beside it, one at a time after it)."""
        if self._errors or self._stopped:
            return
        # The feed's run mostly waits for names: it takes no room.
        following = self._feed is not None and not self._feed.ended
        busy = int(self._before.busy and not following) + int(self._again.busy)
        room = 2 if self._ended else 1
        if not self._side_by_side:
            room = 1 if self._ended else 0
        for lane in (self._before, self._again):
            if busy < room and lane.waiting and not lane.busy:
                tests, lane.waiting = list(lane.waiting.values()), {}
                lane.taken.update(t.node_id for t in tests)
                if lane is self._before:
                    run = self._runs.before(tests, self._baseline, self._deadline)
                else:
                    run = self._runs.rerun(self._overlay, tests, self._deadline)
                lane.running = asyncio.ensure_future(run)
                lane.running.add_done_callback(self._ran)
                self.count += 1
                busy += 1

    def _ran(self, task: asyncio.Future[TestRun]) -> None:
        for lane in (self._before, self._again):
            if lane.running is task:
                lane.running = None
                if task.cancelled():
                    return
                if task.exception() is not None:
                    self._errors.append(task.exception())  # type: ignore[arg-type]
                elif lane is self._before and self._feed is not None and not self._feed.ended:
                    # The feed's run ended before its feed did (it could
                    # not wait longer, it crashed): what it was fed, and
                    # what comes, is run as the feed's run never was.
                    self._feed.ended = True
                    for name in sorted(self._fed):
                        lane.add(_as_failing(name))
                else:
                    lane.done.append(task.result())
        self._start()
        self._changed.set()

    async def finish(self, failing: Sequence[TestResult]) -> tuple[TestRun, TestRun]:
        """The first run ended with ``failing``: every one of them judged
        by the runs it still needs (the rest of the report read first), and
        the runs' results merged: (the re-runs, a test confirmed by its
        in-process re-run counting as failing there; the baseline runs). An
        error of a run (a shadow that could not be built) is raised here."""
        started = time.monotonic()
        if self.reader is not None:
            self.heard(self.reader.read())
        self.read_s = time.monotonic() - started
        self._ended = True
        for result in failing:
            self._to_baseline(result)
            if result.node_id not in self.confirmed:
                # No in-process re-run line (a process that ended in it):
                # the fresh re-run judges it.
                self._again.add(result)
        if self._feed is not None:
            self._feed.end()  # its run ends after the tests fed
        self._start()
        while self._before.busy or self._again.busy:
            self._changed.clear()
            await self._changed.wait()
        if self._errors:
            raise self._errors[0]
        again, then = _merged(self._again.done), _merged(self._before.done)
        named = {r.node_id for r in failing}
        again.results += [
            TestResult(node_id=n, outcome="failed", file=n.split("::")[0])
            for n in sorted(self.confirmed & named)
        ]
        return again, then

    async def drop(self) -> None:
        """Forget the runs so far (stopped): the first run ran again with
        other targets (a per-test choice that collected nothing)."""
        await self.cancel()
        self._stopped = False
        self._before, self._again = _Lane(), _Lane()
        self._retrying.clear()
        self.confirmed.clear()
        self._follows, self._feed = None, None
        self._fed.clear()
        self.reader = None

    async def cancel(self) -> None:
        """Stop the runs still going (the verdict ended without them) and
        wait for their processes' end; none starts after. Until 2026-12-07
        a cancelled run's end started the next waiting one (:meth:`_ran`),
        which went on after the verdict, unawaited: a pytest process no
        verdict read, and, cancelled with every task at an event loop's
        close while it started, a wait Python 3.11's asyncio never ends
        (the transport waits for pipes it never connected)."""
        self._stopped = True
        tasks = [t for t in (self._before.running, self._again.running) if t is not None]
        self._before.running = self._again.running = None
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)  # a cancellation of the verdict still raises
        for task in tasks:
            if not task.cancelled():
                task.exception()  # retrieved: an error of a run no verdict reads is moot


def _followable(
    targets: Sequence[str] | None, only: Sequence[str] | None
) -> tuple[list[str], list[str] | None] | None:
    """The first run's targets and per-test choice, when the baseline's run
    can collect them beside it and follow a feed: not the whole suite, nor
    a run big enough for pytest-xdist's workers."""
    if not targets:
        return None
    if only is not None:
        return (list(targets), list(only)) if len(only) < XDIST_FROM_TESTS else None
    return (list(targets), None) if len(targets) < XDIST_FROM_FILES else None


def _merged(runs: Sequence[TestRun]) -> TestRun:
    merged = TestRun()
    for run in runs:
        merged.results += run.results
        if merged.unverified is None:
            merged.unverified = run.unverified
    return merged
