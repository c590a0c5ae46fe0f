"""The tests gate: block on the tests this run broke, never on the tests
that were failing already, and never pass blind.

* Before the run first changes a file (``before_change``) it keeps the
  file's text, or the text before the command that changed it
  (:mod:`rein.testgate.run_texts`).
* The verdict selects the test files the changed files reach
  (:mod:`rein.testgate.selection`; ``select: "all"`` and a custom command
  run the whole suite) and runs them in a shadow of the workspace with the
  workspace port's text of every changed file (:mod:`rein.testgate.shadow`;
  the texts now and before the run: :mod:`rein.testgate.overlays`).
* A verdict where every changed file is as it was before the run (the
  model undid its change) runs no test: they behave as before the run.
* Of the selected files, only the tests that ran a changed function at an
  earlier verdict run when coverage decides every change
  (:mod:`rein.testgate.picking`; a run that chose tests otherwise records
  what they ran), else those naming what the change reaches, when that can
  be told (:mod:`rein.testgate.narrow`; the detail says "selected by
  coverage", "per test", or why the files ran whole). When coverage says
  no test ran a changed function, no pytest runs.
* pytest runs forked from a kept process that has imported it
  (:mod:`rein.testgate.warm`, with a ``launcher``; started at the run's
  first change), else cold.
* Every pytest run sees a fresh shadow, though not a new copy: the
  gate keeps three shadow trees (:class:`ShadowTree`), two for
  the workspace as the run has it (the first run; the re-run) and one
  for the workspace before the run (the baseline), and brings one up to
  date before each run (the files that changed since, and whatever a
  run's tests left behind, placed again). They are kept for the next runs
  (so are the modules their runs compiled, :mod:`rein.testgate.shadow`)
  and deleted with the gate. The runs in them, warm or cold, and the
  indexing of what they recorded: :mod:`rein.testgate.shadow_runs`.
* A failing test runs once more at once in the first run's own process
  (:mod:`rein.testgate.rerun_in_process`): failing again the same way, it
  is confirmed failing; else (and when it could not run again there: a
  setup or teardown error) it runs again in a fresh shadow: in that
  re-run's results and passed there, it is *flaky* (reported; it blocks
  only with ``flakyBlocks``); a test the re-run does not report (nor its
  file's collection error there) makes the verdict "unverified". Those still failing are judged by a run in a
  shadow of the workspace before the run (each changed file's earlier
  text): failing there too (or their file not importable there), they are
  *pre-existing* (reported, not blocking); passing there, or absent there
  (the run added them), they are the run's: blockers. That baseline run
  starts with the first run and runs only the failing tests, each as the
  first run reports it failing (:mod:`rein.testgate.baseline_feed`,
  :mod:`rein.testgate.waves`).
* After a tool turn's changes the whole judgement starts in the
  background, keyed by its inputs; the verdict uses it only when its own
  inputs are the same (:mod:`rein.testgate.ahead`; ``ahead: false``: not).
* :attr:`TestGate.timings` holds the last verdict's phases in seconds
  (the selection; each run's shadow update and pytest), for the bench.
* Files the person has open with unsaved changes (an
  :class:`UnsavedDocuments` workspace: the editor's) that the run did not
  change are not overlaid: the tests read their saved text, and the detail
  names those a selected test imports.
* A collection error in a test file the run changed blocks at once; one in
  another file is judged like a failing test (pytest runs with
  ``--continue-on-collection-errors``). Any trouble (the runner cannot
  start, a timeout, a crash, no report, a shadow that cannot be built, a
  changed file under a folder the shadow links to the real one) makes the
  verdict "unverified" with the reason; so do test files left out by
  ``maxTests`` and a run where no test passed, now or before.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rein.harness.config import TestsGateConfig
from rein.harness.gating.gate_types import (
    GateContext,
    GateOutcome,
    InstallState,
    PriorTexts,
)
from rein.harness.parse_thread import in_parse_thread
from rein.harness.ports import CommandRunner, Mutation, Workspace
from rein.testgate.ahead import (
    Ahead,
    Judged,
    Judgement,
    JudgementKey,
    ReadAhead,
    judgement_key,
)
from rein.testgate.judging import (
    broke_import,
    conftest_error,
    could_not_judge,
    judge_failing,
    not_passed,
)
from rein.testgate.overlays import current_texts, undone, unsaved_imported
from rein.testgate.picking import Picked, Picker, near_whole
from rein.testgate.refresh import Refresh
from rein.testgate.report import blocker_for, summary
from rein.testgate.run_texts import TextsBeforeRun
from rein.testgate.runner import RunnerSpec
from rein.testgate.selection import TestSelection, select_tests
from rein.testgate.shadow import Seen, in_tool_cache, seen_with
from rein.testgate.shadow_runs import ShadowRuns
from rein.testgate.warm import ProcessLauncher, WarmPytest
from rein.testgate.waves import Waves

__all__ = ["TestGate"]

log = logging.getLogger(__name__)


class TestGate:
    """The ``tests`` gate (see the module docstring)."""

    __test__ = False  # not a pytest test class

    name = "tests"

    def __init__(
        self,
        root: Path,
        runner: CommandRunner,
        config: TestsGateConfig,
        *,
        python: str,
        prior_texts: PriorTexts | None = None,
        xdist: bool = False,
        launcher: ProcessLauncher | None = None,
        sandboxed: Callable[[], bool] = lambda: False,
        installs: InstallState | None = None,
    ) -> None:
        self.root = root
        self.runner = runner
        self.config = config
        self.spec = RunnerSpec(
            python=python, command=config.command, junit_path=config.junit_path, xdist=xdist
        )
        self._limit_s = config.timeout_ms / 1000
        #: The changed files' texts before the run.
        self.texts = TextsBeforeRun(root, prior_texts)
        self._picker = Picker(root)
        #: When the verdict started; when its first run ended.
        self._started = 0.0
        self._first_ended: float | None = None
        #: The kept pytest process (pytest only, with a ``launcher``).
        self._warm = (
            WarmPytest(python, launcher) if launcher is not None and not self.spec.custom else None
        )
        #: The verdicts' runs in the two shadow trees (see the module
        #: docstring). ``sandboxed``: whether the gates' commands run in the
        #: OS sandbox now (``sandbox.also``, read at every run): such a run
        #: writes no compiled module to the user's prefix (ShadowTree.sync);
        #: the warm pytest then starts in the same sandbox (its launcher's).
        self.runs = ShadowRuns(
            root,
            runner,
            self.spec,
            limit_s=self._limit_s,
            picker=self._picker,
            warm=self._warm,
            sandboxed=sandboxed,
            workers=config.workers,
        )
        if self._warm is not None:
            self._warm.scratch = self.runs.folders
        #: Stale records made again while the model takes its turn.
        self.refresh = Refresh(self.runs, self._picker, self._limit_s)
        #: Changed modules read, then judged, while the model takes its turn.
        self._read_ahead = ReadAhead(root, self._picker, self._baseline)
        self.ahead = Ahead(self._ahead_start, self.prepared, root)
        self._config_key = config.model_dump_json()
        #: The dependency installs (the judgement ahead's key counts them).
        self._installs = installs
        #: The commands this gate was told of (the judgement ahead's key).
        self._commands = 0

    @property
    def timings(self) -> dict[str, float]:
        """The last verdict's phases (name -> seconds; the names:
        :attr:`ShadowRuns.timings <rein.testgate.shadow_runs.ShadowRuns.timings>`)."""
        return self.runs.timings

    @property
    def warm_runs(self) -> set[str]:
        """The last verdict's runs that the warm pytest ran (not those its
        client ran cold: the detail says why for the first run)."""
        return self.runs.warm_runs

    def on_change(self, mutation: Mutation) -> None:
        """Read each changed module as the verdict will (its model, its
        units, its import-graph scan: :class:`ReadAhead`), then judge the
        change (:class:`Ahead`), while the model takes its next turn."""
        paths = [p for p in mutation.paths if p.endswith(".py")]
        if paths and not self.spec.custom and self.config.select != "all":
            self._read_ahead.start(paths)
        if self.config.ahead:
            self.ahead.changed(mutation.paths, mutation.generation)

    async def prepared(self, timeout_s: float = 60.0) -> bool:
        """Wait at most ``timeout_s`` for the read-ahead :meth:`on_change`
        started (not the judgement ahead); False when it gave up."""
        return await self._read_ahead.done(timeout_s)

    async def on_run_start(self, generation: int) -> None:
        self._picker.forget()
        self.ahead.forget()

    def on_run_end(self) -> None:
        """The run ended (an abort too): the judgement ahead stops, and a refresh."""
        self.ahead.stop()
        self.refresh.cancel()

    async def before_change(self, paths: Sequence[str], workspace: Workspace) -> None:
        if not paths:  # a command about to run (``before_command``)
            await self.refresh.stop()  # no test of ours runs beside it
            self._commands += 1  # no judgement from before it is taken after it
            self.timings["walk"] = await self.texts.command_starts()
            return
        if self.texts.commands_ran:
            self.timings["walk"] = await self.texts.walk()  # what a command changed before this
        if self._warm is not None:
            self._warm.start()  # a verdict will come: pytest warms up meanwhile
        await self.texts.keep(paths, workspace)

    @property
    def prior(self) -> dict[str, str | None]:
        """path -> its text before the run first changed it (None: absent)."""
        return self.texts.prior

    def on_validated(self, generation: int) -> None:
        self.refresh.cancel()  # its code before the run is not the next run's
        self.ahead.forget()
        self.texts.forget()
        self._picker.forget()

    async def warm_ready(self, timeout_s: float) -> bool:
        """Start the warm pytest if it is not, and wait up to ``timeout_s``
        for it: whether the next run is warm."""
        if self._warm is None:
            return False
        self._warm.start()
        return await self._warm.wait_ready(timeout_s)

    async def close(self) -> None:
        """Stop the warm pytest and delete the shadow trees, waiting at most
        :data:`~rein.testgate.shadow.REMOVE_WAIT_S` for them (the gate is
        done with: its session closed, evicted; dropping the gate does the
        same, later)."""
        self._read_ahead.cancel()
        await self.ahead.close()
        await self.refresh.stop()
        await self.runs.close()

    def export_state(self) -> dict[str, Any]:
        return self.texts.export_state()

    def import_state(self, data: dict[str, Any]) -> None:
        self.texts.import_state(data)

    # -- the verdict ---------------------------------------------------------

    async def check(self, ctx: GateContext) -> GateOutcome:
        # A tool's cache (a command's pytest writes .pytest_cache) is no input.
        changed = sorted(p for p in ctx.touched if not in_tool_cache(p))
        # A judgement ahead keeps its phases, when the verdict takes it.
        fresh = not self.ahead.running()
        if fresh:
            self.runs.reset()
        started = time.monotonic()
        if changed and self.texts.commands_ran:
            self.timings["walk"] = await self.texts.walk()
        # A command's own temporary file (``sed -i``'s): at every verdict.
        changed = [p for p in changed if not self.texts.never_there(p)]
        if not changed:
            return await self._no_run("nothing changed")
        try:
            return await self._check(changed, ctx, started, fresh=fresh)
        except (OSError, UnicodeError, ValueError) as exc:
            # The shadow could not be built, a report not read: no verdict,
            # and no blocker that spends the repair budget on it.
            return GateOutcome(
                unverified=f"the tests could not be run: {type(exc).__name__}: {exc}"
            )

    async def _check(
        self, changed: list[str], ctx: GateContext, started: float, *, fresh: bool
    ) -> GateOutcome:
        workspace = ctx.workspace
        if self._warm is not None:
            self._warm.start()
        overlay = await current_texts(self.root, changed, workspace)
        before, unknown = self._baseline(changed)
        as_before = undone(changed, overlay, before, unknown)
        if as_before:
            return await self._no_run(as_before)
        key = self._key(changed, overlay, before, unknown, ctx.generation)
        judged = await self.ahead.take(key)
        notes = [self.ahead.voided] if self.ahead.voided else []
        if judged is not None:
            self.runs.timings = judged.timings
            notes.append("judged ahead, while the model took its turn")
        else:
            if not fresh:  # a judgement ahead for other inputs was stopped
                self.runs.reset()
            async with self.ahead.judging:
                judged = await self._judged(changed, overlay, started)
        outcome = judged.outcome
        unsaved = await unsaved_imported(self.root, workspace, changed, judged.files)
        if unsaved:
            notes.append(f"not saved in the editor, so the tests read their saved text: {unsaved}")
        outcome.detail = "; ".join([outcome.detail, *notes] if outcome.detail else notes)
        return outcome

    async def _no_run(self, detail: str) -> GateOutcome:
        """A verdict running no test: nothing ahead runs, no phase is timed."""
        await self.ahead.close()
        self.runs.reset()
        return GateOutcome(detail=detail)

    async def _ahead_start(
        self, touched: Sequence[str], generation: int
    ) -> tuple[JudgementKey, Judgement] | None:
        """The key of the judgement :class:`Ahead` makes now (its inputs read
        as :meth:`check` reads them, but from the disk: a client's read has
        effects of its own) and its coroutine; None: no test would run, or
        a command ran (the verdict walks the workspace first)."""
        changed = [p for p in touched if not in_tool_cache(p) and not self.texts.never_there(p)]
        if self.texts.commands_ran or not changed:
            return None
        overlay = await current_texts(self.root, changed, None)
        before, unknown = self._baseline(changed)
        key = self._key(changed, overlay, before, unknown, generation)
        if undone(changed, overlay, before, unknown) or key.installs < 0:
            return None  # nothing to run; an install to come
        return key, functools.partial(self._judged, changed, overlay, None)

    def _key(
        self,
        changed: list[str],
        overlay: dict[str, str | None],
        before: dict[str, str | None],
        unknown: list[str],
        generation: int,
    ) -> JudgementKey:
        """The key of a judgement of these inputs now (:func:`judgement_key`)."""
        installs = self._installs
        finished = 0 if installs is None else -1 if installs.installing() else installs.finished
        return judgement_key(
            changed,
            overlay,
            before,
            unknown,
            generation,
            self._config_key,
            sandboxed=self.runs.sandboxed(),
            installs=finished,
            commands=self._commands,
        )

    async def _judged(
        self, changed: list[str], overlay: dict[str, str | None], started: float | None
    ) -> Judged:
        """The judgement of the run's changes with the texts ``overlay``:
        the selection and the runs (``started``: the verdict's start; None:
        a judgement ahead, starting now)."""
        walk: Seen | None = None
        await self.refresh.stop()  # the shadow before the run, and the cores, are this one's
        if started is None:
            if self._warm is not None:
                self._warm.start()
            self.runs.reset()
            started = time.monotonic()
            # What the workspace was before anything is read: a judgement
            # that runs no test has no sync to say it (seen_now).
            walk = await asyncio.to_thread(seen_with, self.root, overlay)
        self._started, self._first_ended = started, None
        # The import graph is read from the disk: off the event loop.
        selected = time.monotonic()
        selection = await asyncio.to_thread(self._select, changed)
        self.timings["select"] = time.monotonic() - selected
        if not selection.run_all and not selection.files and not selection.importing:
            outcome = GateOutcome(
                detail=f"no test reaches the changed files (0 of {selection.total_files} "
                f"test files selected: {selection.reason})"
            )
        else:
            outcome = await self._judge(selection, changed, overlay)
        ended = time.monotonic()
        if self._first_ended is not None:
            self.timings["first_to_verdict"] = ended - self._first_ended
        self.timings["judgement"] = ended - started
        seen = self.runs.seen or ([walk] if walk is not None else [])
        self.refresh.start(*self._baseline(changed))
        # The files whose import runs the change import the unsaved ones too.
        files = (*selection.files, *selection.importing)
        return Judged(outcome, files, self.timings, seen)

    async def _judge(
        self, selection: TestSelection, changed: list[str], overlay: dict[str, str | None]
    ) -> GateOutcome:
        """Run the selected tests, then the failing ones again and against
        the baseline (see the module docstring)."""
        targets = None if selection.run_all else list(selection.files)
        deadline = time.monotonic() + self._limit_s
        files = selection.total_files if targets is None else len(targets)
        only: list[str] | None = None
        untraced: tuple[str, ...] = ()
        whole: tuple[str, ...] | None = None
        note = ""
        # The whole suite (its selection cannot be computed): see Picker.
        record = targets is not None or self._picker.records_whole_suite()
        if targets is not None and not self.spec.custom:
            started = time.monotonic()
            # Off the loop, in the one thread that parses (never two at once).
            picked = await in_parse_thread(self._pick, selection, changed, overlay)
            self.timings["narrow"] = time.monotonic() - started
            note, record, untraced, whole = (
                picked.note,
                picked.record,
                picked.untraced,
                picked.whole,
            )
            if picked.by_coverage and not picked.only:
                return GateOutcome(detail=f"no test ran what the change changed; {note}")
            if picked.only is not None:
                targets, only, files = list(picked.files), list(picked.only), 0
            elif selection.importing:  # whole files, those whose import runs the change too
                targets = list(picked.files)
                files = len(targets)
        # The failing tests are judged while the first run goes on.
        waves = None
        if not self.spec.custom:
            waves = Waves(
                self.runs,
                overlay,
                self._baseline(changed)[0],
                deadline,
                targets=targets,
                only=only,
            )
        try:
            return await self._runs(
                selection,
                changed,
                overlay,
                waves,
                targets,
                deadline,
                files=files,
                only=only,
                record=record,
                untraced=untraced,
                whole=whole,
                note=note,
            )
        finally:
            if waves is not None:
                await waves.cancel()

    async def _runs(
        self,
        selection: TestSelection,
        changed: list[str],
        overlay: dict[str, str | None],
        waves: Waves | None,
        targets: list[str] | None,
        deadline: float,
        *,
        files: int,
        only: list[str] | None,
        record: bool,
        untraced: tuple[str, ...],
        whole: tuple[str, ...] | None,
        note: str,
    ) -> GateOutcome:
        """The first run, its failing tests' re-run and baseline (with
        ``waves``, while it goes on), and what they make of the change."""
        # The gate's own time before it (not the warm pytest's start).
        own = time.monotonic() - self._started
        first, shadow = await self.runs.run_in(
            "first",
            "now",
            overlay,
            targets,
            deadline,
            files=files,
            only=only,
            record=record,
            untraced=untraced,
            whole=whole,
            waves=waves,
        )
        ended = self._first_ended = time.monotonic()
        self.timings["own_before_first"] = own + self.timings.get("first_shadow", 0.0)
        if only is not None and first.nothing_collected:
            # The narrowed run found no test (a class pytest does not
            # collect): the selected files, whole.
            targets = [*selection.files, *selection.importing]
            files = len(targets)
            note = "whole test files: the per-test selection collected no test"
            # Recorded as any run of whole files: the whole suite's budget.
            record = not near_whole(selection) or self._picker.records_whole_suite()
            if waves is not None:
                await waves.drop()  # its baseline's run followed the narrowed run
            first, shadow = await self.runs.run_in(
                "first_files",
                "now",
                overlay,
                targets,
                deadline,
                files=files,
                record=record,
                untraced=untraced,
            )
        if first.unverified is not None or first.nothing_collected:
            conftest = conftest_error(first.output, shadow.root)
            if conftest is not None:
                # A conftest.py the change broke: the same run before the
                # run imports it (and reports), or it was broken before.
                then = await self.runs.as_before(
                    targets, only, self._baseline(changed)[0], deadline
                )
                if then.unverified is None and not then.nothing_collected:
                    return GateOutcome(
                        [blocker_for(conftest, shadow, selection, changed)],
                        detail=f"no test ran: the change broke the import of {conftest.node_id}",
                    )
            return could_not_judge(first, selection, changed, shadow)
        broken = [r for r in first.failing if broke_import(r, changed)]
        failing = [r for r in first.failing if r not in broken]
        flaky: list[str] = []
        pre_existing: list[str] = []
        blocking = list(broken)
        if failing:
            baseline, unknown = self._baseline(changed)
            if waves is not None:
                again, then = await waves.finish(failing)
                self.timings["waves"] = waves.count
                self.timings["confirmed"] = len(waves.confirmed)
            else:
                again, then = await self.runs.again_and_before(overlay, failing, baseline, deadline)
            self.timings["after_first"] = time.monotonic() - ended
            judged = judge_failing(
                failing, again, then, unknown, self.runs.ids(failing), self.config.flaky_blocks
            )
            if isinstance(judged, GateOutcome):
                return judged
            flaky, pre_existing, run_broke = judged
            blocking += run_broke
        detail = summary(first, selection, flaky, pre_existing, self.spec.custom)
        if note:
            detail += f"; {note}"
        if first.cold is not None:
            detail += f"; pytest cold: {first.cold}"
        if not blocking:
            why = not_passed(
                first, selection, pre_existing, self.spec.python, self.config.max_tests
            )
            if why is not None:
                return GateOutcome(unverified=why, detail=detail)
        return GateOutcome(
            [blocker_for(r, shadow, selection, changed) for r in blocking], detail=detail
        )

    def _select(self, changed: Sequence[str]) -> TestSelection:
        if self.spec.custom or self.config.select == "all":
            why = "a custom command" if self.spec.custom else 'select: "all"'
            return TestSelection(files=(), run_all=True, reason=f"the whole suite ({why})")
        return select_tests(self.root, changed, max_tests=self.config.max_tests)

    def _pick(
        self, selection: TestSelection, changed: Sequence[str], overlay: dict[str, str | None]
    ) -> Picked:
        """The per-test choice (:mod:`rein.testgate.picking`)."""
        before, unknown = self._baseline(changed)
        texts = {
            path: (None if path in unknown else before.get(path), overlay.get(path))
            for path in changed
        }
        return self._picker.pick(selection, texts)

    def _baseline(self, changed: Sequence[str]) -> tuple[dict[str, str | None], list[str]]:
        return self.texts.baseline(changed)
