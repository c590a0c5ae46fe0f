"""A verdict's pytest runs, each in one of the tests gate's three kept
shadow trees (:class:`ShadowTree`, :data:`TREES`: "now", the workspace as
the run has it; "again", the same for the failing tests' re-run while the
first run goes on; "before", the baseline), brought up to date first.

A run is forked from the warm pytest when it is ready within
:data:`WARM_WAIT_S`, else runs cold. While the gates' commands run in the
OS sandbox the warm pytest runs in it too, with both trees' folders bound
(:meth:`ShadowRuns.folders` makes them before it starts); its phases go to :attr:`ShadowRuns.timings`
and the runs the warm pytest ran to :attr:`ShadowRuns.warm_runs`. What a
recording run's tests ran is indexed in the parse thread after the
verdict (:mod:`rein.testgate.picking`). The failing tests run in the
baseline's tree (:meth:`ShadowRuns.follow`, started with the first run and
fed them as they fail; else :meth:`ShadowRuns.before`) and, those the
first run's own re-run did not confirm, again (:meth:`ShadowRuns.rerun`),
while the first run goes on (:mod:`rein.testgate.waves`).
The trees are deleted with the gate (:meth:`ShadowRuns.close`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from rein.harness.parse_thread import in_parse_thread
from rein.harness.ports import CommandRunner
from rein.testgate.baseline_feed import Feed
from rein.testgate.cores import Cores, Share, own_xdist, workers_for
from rein.testgate.judging import unreachable
from rein.testgate.junit import TestResult
from rein.testgate.picking import Picker
from rein.testgate.pytest_run import NO_TEST
from rein.testgate.recorder import RawCoverage
from rein.testgate.runner import RunnerSpec, TestRun, report_path, run_tests, takes_xdist
from rein.testgate.shadow import REMOVE_WAIT_S, Seen, Shadow, ShadowTree, sync_shadow
from rein.testgate.warm import WarmPytest
from rein.testgate.waves import Waves, watch_report

__all__ = ["NO_TEST", "TREES", "WARM_WAIT_S", "ShadowRuns", "collect_only"]

# The gate's logger: these lines are the gate's.
log = logging.getLogger("rein.testgate.gate")

#: A verdict waits this long for the warm pytest still starting, else runs cold.
WARM_WAIT_S = 1.0
#: The kept trees: the workspace as the run has it (the first run), the
#: same for the failing tests' re-run while the first run goes on
#: (:mod:`rein.testgate.waves`), and the workspace before the run.
TREES = ("now", "again", "before")


class ShadowRuns:
    """The runs of one tests gate (see the module docstring)."""

    def __init__(
        self,
        root: Path,
        runner: CommandRunner,
        spec: RunnerSpec,
        *,
        limit_s: float,
        picker: Picker,
        warm: WarmPytest | None,
        sandboxed: Callable[[], bool],
        workers: int | Literal["auto"] = 1,
    ) -> None:
        self.root = root
        self.runner = runner
        self.spec = spec
        self.limit_s = limit_s
        self.picker = picker
        self.warm = warm
        #: Whether the gates' commands run in the OS sandbox now.
        self.sandboxed = sandboxed
        #: The run's shadow trees: "now" and "before".
        self.trees: dict[str, ShadowTree] = {}
        self._making = asyncio.Lock()
        #: Records being indexed after their verdict (:meth:`_index_later`).
        self.indexing: set[asyncio.Future[None]] = set()
        #: The last verdict's phases (name -> seconds): ``select``, and
        #: ``<run>_shadow``, ``<run>_pytest`` for the runs ``first``, ``rerun``
        #: and ``baseline`` (``<run>_wait``: waiting for the warm pytest still
        #: starting; ``<run>_record``: reading the texts its record needs; the
        #: record is indexed after the verdict; a name's runs add up),
        #: ``after_first``: the wait for the re-runs and baseline runs after the
        #: first run ended, ``waves``: how many of those ran and ``confirmed``:
        #: the failing tests the first run's own re-run confirmed (counts,
        #: :mod:`rein.testgate.waves`); ``own_before_first``: the gate's own time
        #: before the first run's pytest starts (from the call, the warm pytest's
        #: start left out), ``first_to_verdict``: from its end to the verdict,
        #: ``judgement``: from the verdict's start (a judgement ahead's) to its
        #: end.
        self.timings: dict[str, float] = {}
        #: The last verdict's runs that the warm pytest ran (not those its
        #: client ran cold: the detail says why for the first run).
        self.warm_runs: set[str] = set()
        #: What each of the last verdict's syncs saw of the workspace
        #: (:attr:`~rein.testgate.shadow.Shadow.seen`).
        self.seen: list[Seen] = []
        #: How a first run is shared among forks (:mod:`rein.testgate.cores`).
        self.cores = Cores(workers_for(workers))

    @property
    def workers(self) -> int:
        """How many pytest processes the gate may run at once
        (``gates.tests.workers``, "auto" the cores it may run on)."""
        return self.cores.workers

    def reset(self) -> None:
        """A new verdict: its phases and warm runs start empty."""
        self.timings = {}
        self.warm_runs = set()
        self.seen = []

    async def close(self) -> None:
        """Stop the warm pytest and delete the shadow trees, waiting at most
        :data:`~rein.testgate.shadow.REMOVE_WAIT_S` for them and the
        records still being indexed."""
        trees, self.trees = list(self.trees.values()), {}
        removals: list[asyncio.Future[None]] = [
            asyncio.ensure_future(asyncio.to_thread(tree.remove)) for tree in trees
        ]
        removals += self.indexing
        if self.warm is not None:
            await self.warm.close()
        if removals:
            await asyncio.wait(removals, timeout=REMOVE_WAIT_S)

    async def again_and_before(
        self,
        overlay: dict[str, str | None],
        failing: Sequence[TestResult],
        baseline: dict[str, str | None],
        deadline: float,
    ) -> tuple[TestRun, TestRun]:
        """The failing tests run again (:meth:`rerun`, in "now") and, at
        the same time (with :attr:`workers` 1: after it), in the baseline
        (:meth:`before`): a custom runner's."""
        if self.workers < 2:
            rerun = await self.rerun(overlay, failing, deadline, tree="now")
            return rerun, await self.before(failing, baseline, deadline)
        try:
            async with asyncio.TaskGroup() as group:
                again = group.create_task(self.rerun(overlay, failing, deadline, tree="now"))
                then = group.create_task(self.before(failing, baseline, deadline))
        except ExceptionGroup as errors:  # the shadow could not be built
            raise errors.exceptions[0] from None
        return again.result(), then.result()

    async def rerun(
        self,
        overlay: dict[str, str | None],
        failing: Sequence[TestResult],
        deadline: float,
        *,
        tree: str = "again",
    ) -> TestRun:
        """The failing tests again in the tree ``tree``, made fresh: what
        the first run left behind changes nothing. Their whole files, of
        which only they run: a test file that cannot be collected this time
        (a broken import succeeds or not by the order files import in) is
        its collection error, where pytest refused the run for the node ids
        it could not find ("found no collectors", no report: toolz's
        ``curry.__init__`` seed with the package's test files collected
        first, unverified)."""
        ids = self.ids(failing)
        if ids is None:  # a custom runner runs everything
            run, _ = await self.run_in("rerun", tree, overlay, None, deadline)
            return run
        files = sorted({i.split("::")[0] for i in ids})
        run, _ = await self.run_in("rerun", tree, overlay, files, deadline, only=ids)
        return run

    async def before(
        self,
        failing: Sequence[TestResult],
        baseline: dict[str, str | None],
        deadline: float,
    ) -> TestRun:
        """The failing tests in the shadow of the workspace before the run
        (``baseline``): their whole files, of which only they run (a test
        the run added is not there, and pytest refuses a node id it cannot
        find). A test file that could not be collected now is only
        collected there (:func:`collect_only`): whether it could be then is
        all that judges it (:func:`~rein.testgate.judging.against_baseline`),
        not its tests' outcomes."""
        files = sorted(
            {r.file for r in failing if r.file and self._before_exists(r.file, baseline)}
        )
        if not files and not self.spec.custom:
            return TestRun(nothing_collected=True)
        only = None if self.spec.custom else [collect_only(r.node_id) for r in failing]
        then, _ = await self.run_in(
            "baseline", "before", baseline, self._ids_or(files), deadline, only=only
        )
        return then

    async def follow(
        self,
        feed: Feed,
        targets: Sequence[str],
        only: list[str] | None,
        baseline: dict[str, str | None],
        deadline: float,
    ) -> TestRun:
        """The baseline's run beside the first run: what it collects (its
        ``targets``, of those that existed before the run, and ``only``)
        collected in the shadow of the workspace before the run, the tests
        named in ``feed`` run as they come (:mod:`rein.testgate.baseline_feed`)."""
        files = [t for t in targets if self._before_exists(t.split("::")[0], baseline)]
        if not files:
            return TestRun(nothing_collected=True)
        then, _ = await self.run_in(
            "baseline", "before", baseline, files, deadline, only=only, feed=feed
        )
        return then

    async def refresh(
        self, nodes: Sequence[str], baseline: dict[str, str | None], deadline: float
    ) -> bool:
        """Record ``nodes`` again, every one traced, in the shadow of the
        workspace before the run (``baseline``), forked from the warm pytest
        when it is ready (else nothing runs: False, to try again; one the
        kept process cannot take raises
        :class:`~rein.testgate.runner.NotWarm`); no file is collected
        whole, so the record lists no file's tests. Off the verdict's path
        (:mod:`rein.testgate.refresh`): its phases, what it saw and its warm
        run are no verdict's."""
        if self.spec.custom or self.warm is None or self.warm.client() is None:
            return False
        files = sorted({n.split("::")[0] for n in nodes})
        files = [f for f in files if self._before_exists(f, baseline)]
        if not files:
            return True  # their files are the run's: nothing to record before it
        await self.run_in(
            "refresh",
            "before",
            baseline,
            files,
            deadline,
            only=list(nodes),
            record=True,
            whole=(),
            quiet=True,
        )
        return True

    async def run_in(
        self,
        name: str,
        tree: str,
        overlay: dict[str, str | None],
        targets: list[str] | None,
        deadline: float,
        *,
        files: int = 0,
        only: list[str] | None = None,
        record: bool = False,
        untraced: Sequence[str] = (),
        whole: Sequence[str] | None = None,
        waves: Waves | None = None,
        feed: Feed | None = None,
        quiet: bool = False,
    ) -> tuple[TestRun, Shadow]:
        """One run (``name``, for :attr:`timings`: a name's runs add up) in
        the shadow tree ``tree``, brought up to date with ``overlay`` first;
        ``record``: what each test ran is kept for later verdicts
        (:mod:`rein.testgate.picking`), but for the ``untraced`` tests'
        (their records are still good), with only the ``whole`` files
        collected whole (None: all); ``waves``: each test failing in
        its report as pytest writes it is handed to them
        (:mod:`rein.testgate.waves`); ``feed``: the tests it names run
        as they come (:meth:`follow`); ``quiet``: no verdict's run (its
        phases, what it saw, its warm run and its tests' times are not
        kept), run by the kept pytest process alone (else
        :class:`~rein.testgate.runner.NotWarm`, and nothing ran)."""
        timings = {} if quiet else self.timings
        started = time.monotonic()
        # A sandboxed run can write only its tree's folder: its compiled
        # modules go there, never to the user's prefix other runs import.
        sandboxed = self.sandboxed()
        shadow = await sync_shadow(await self._tree(tree), overlay, shared=not sandboxed)
        if shadow.seen is not None and not quiet:
            self.seen.append(shadow.seen)
        built = time.monotonic()
        _add(timings, f"{name}_shadow", built - started)
        if shadow.unreachable:
            return TestRun(unverified=unreachable(shadow.unreachable)), shadow
        warm = None
        if self.warm is not None and await self.warm.wait_ready(WARM_WAIT_S):
            warm = self.warm.client()
            if not quiet:
                self.warm_runs.add(name)
        if time.monotonic() - built > 0.001:
            _add(timings, f"{name}_wait", time.monotonic() - built)
        built = time.monotonic()
        shares = None
        if waves is not None and warm is not None and warm.watch is not None:
            shares = self._shares(shadow, targets, files, only, whole)
        watching = None
        if waves is not None:
            reports = [report_path(shadow, at) for at in range(len(shares or ((),)))]
            for report in reports:
                report.unlink(missing_ok=True)  # an earlier run's: never read
            watching = asyncio.ensure_future(watch_report(reports, waves))
        try:
            run = await run_tests(
                self.runner,
                self.spec,
                shadow,
                targets,
                _left(deadline),
                files=files,
                limit_s=self.limit_s,
                only=only,
                warm=warm,
                record=record and not self.spec.custom,
                untraced=untraced,
                whole=whole,
                # The first run (the waves read it): a failing test runs
                # once more in its process (rein.testgate.rerun_in_process).
                again=waves is not None,
                feed=feed,
                shares=shares,
                warm_only=quiet,
            )
        finally:
            if watching is not None:
                watching.cancel()
            _add(timings, f"{name}_pytest", time.monotonic() - built)
        # A traced test's time is the tracer's too (about twice its own).
        kept = set(untraced)
        traced = record and not self.spec.custom and run.coverage is not None
        if not quiet:
            self.cores.learn(
                {n: t if not traced or n in kept else t / 2 for n, t in run.durations.items()}
            )
        if run.shares > 1:
            timings[f"{name}_shares"] = run.shares
        if run.coverage is not None and run.unverified is None:
            started = time.monotonic()
            texts = await asyncio.to_thread(Picker.texts_for, run.coverage, shadow.root)
            self._index_later(run.coverage, texts)
            _add(timings, f"{name}_record", time.monotonic() - started)
        if run.cold is not None and not quiet:
            self.warm_runs.discard(name)  # its client ran pytest itself
        return run, shadow

    def _shares(
        self,
        shadow: Shadow,
        targets: list[str] | None,
        files: int,
        only: list[str] | None,
        whole: Sequence[str] | None,
    ) -> list[Share] | None:
        """A first run's shares among forks of the kept process, None when
        one fork runs it (:mod:`rein.testgate.cores`)."""
        if self.spec.custom or self.cores.workers < 2:
            return None
        if takes_xdist(self.spec, targets, files, only):
            return None  # its workers
        if self.spec.xdist and own_xdist(shadow.root):
            return None  # the project's own workers
        return self.cores.plan(targets, only, whole=whole or ())

    async def _tree(self, name: str) -> ShadowTree:
        """The tree ``name``, made the first time (one at a time: the warm
        pytest's start asks for both)."""
        async with self._making:
            if name not in self.trees:
                self.trees[name] = await asyncio.to_thread(ShadowTree, self.root)
            return self.trees[name]

    async def folders(self) -> list[str]:
        """The trees' own folders (made now if need be): what a warm pytest
        started in the gates' sandbox has bound writable for its runs."""
        return [str((await self._tree(name)).root.parent) for name in TREES]

    def ids(self, results: Sequence[TestResult]) -> list[str] | None:
        """Node ids to re-run (None: a custom runner runs everything)."""
        return self._ids_or([r.node_id for r in results])

    def _ids_or(self, targets: list[str]) -> list[str] | None:
        return None if self.spec.custom else targets

    def _index_later(self, raw: RawCoverage, texts: dict[str, str | None]) -> None:
        """Index a run's record in the parse thread without holding up the
        verdict (click: 0.2 s of a 0.9 s verdict): the next verdict's choice
        is made in the same thread, so after it. Its texts were read when
        the run ended (the shadow's next run may change them)."""
        task = asyncio.ensure_future(in_parse_thread(self.picker.record, raw, texts))
        self.indexing.add(task)
        task.add_done_callback(self._indexed)

    def _indexed(self, task: asyncio.Future[None]) -> None:
        self.indexing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("tests gate: a coverage record was not kept: %s", task.exception())

    async def as_before(
        self,
        targets: Sequence[str] | None,
        only: list[str] | None,
        baseline: dict[str, str | None],
        deadline: float,
    ) -> TestRun:
        """The first run's selection (``targets`` that existed before the
        run, ``only``) in the shadow of the workspace before the run."""
        files = None
        if targets is not None:
            files = [t for t in targets if self._before_exists(t.split("::")[0], baseline)]
            if not files:
                return TestRun(nothing_collected=True)
        then, _ = await self.run_in("baseline", "before", baseline, files, deadline, only=only)
        return then

    def _before_exists(self, path: str, baseline: dict[str, str | None]) -> bool:
        if path in baseline:
            return baseline[path] is not None
        return (self.root / path).exists()


def collect_only(node_id: str) -> str:
    """What a baseline run names for a failing ``node_id``: itself, or for
    a test file that could not be collected (its node id is its path) the
    file with :data:`~rein.testgate.pytest_run.NO_TEST`: its collection
    there, every test made (an error made with them, a bad
    ``parametrize``, a ``pytest_generate_tests`` that raises, is the
    file's collection error as it is in the first run) and none run (a
    broken import in Toolz's ``curried``: nine whole files' tests ran in
    the baseline to tell that they import there)."""
    if "::" in node_id or not node_id.endswith(".py"):
        return node_id
    return f"{node_id}::{NO_TEST}"


def _add(timings: dict[str, float], phase: str, seconds: float) -> None:
    """A phase's time, added to its name's earlier runs'."""
    timings[phase] = timings.get(phase, 0.0) + seconds


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())
