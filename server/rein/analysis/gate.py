"""The analyzer gate: block on what the run broke, never on what it found,
and never pass blind.

* At run start it starts taking the whole snapshot (the baseline of every
  file the analyzers know) in the background
  (:mod:`rein.analysis.background_snapshot`); the run's first change waits
  for it, so that it is from before any change, and so does the verdict.
  Before the run first changes a file it captures that file's own baseline
  (:mod:`rein.analysis.file_capture`), through the workspace layer's
  ``before_change`` hook (:class:`~rein.harness.generations.TrackedWorkspace`);
  one importing a file the run changed already, as before that change
  (:mod:`rein.analysis.earlier_changes`).
* A change that comes while that snapshot is still being taken, from a
  source that can be asked file by file, does not wait for it: the file and
  its importers are judged file by file (:mod:`rein.analysis.cold_start`);
  one that finds no blocker is completed over the rest of what the change
  can reach (:mod:`rein.analysis.reach_verdict`), else waits for that
  snapshot: never a pass on the direct importers alone.
* Blocking: in a changed file, the errors new relative to its own baseline,
  lines mapped through the change; elsewhere, the errors not in the run-start
  snapshot (:mod:`rein.analysis.blocking`, :mod:`rein.analysis.baselines`).
  One error seen by several analyzers is one blocker naming them all.
* A source that analyses file by file (the headless pool in a large
  workspace) opens a changed file's importers with it, before the change:
  their diagnostics then join the run-start baseline (``late``), so an
  importer's old errors never block and its new ones do.
* A file a command changed (seen only after the fact) gets the same, at the
  verdict, from its text before the change when the source still knows it
  (:mod:`rein.analysis.command_baselines`); in a cold session, file by file
  from every file's text read before the command ran
  (:mod:`rein.analysis.cold_commands`), asked as soon as the command ended,
  while the model takes its next turn (:mod:`rein.analysis.command_ahead`).
* A snapshot nobody looked at (``blind``) is "unverified"; so is a stale one
  that shows no blocker, with the source's reason when it has one (an
  analyzer is dead or did not answer within its bound). Never "passed".
* Blockers come cause first (:mod:`rein.analysis.blocker_order`); errors in
  unchanged files are asked about again without the run's changes
  (:mod:`rein.analysis.counterfactual`; not while a file the run deleted
  or renamed away is gone: the analyzers could not be shown it).
* A changed source file the source does not cover, and importers left past
  the source's bound when a public name changed, make the verdict
  "unverified" (:mod:`rein.analysis.reach`); the importers left are
  opened a batch per later verdict.
* Baselines live until the changes they judge are validated: the repair
  loop, and a later run of the session that validates what an earlier run
  left, judge against the state before the first change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rein.analysis.background_snapshot import BackgroundSnapshot
from rein.analysis.baselines import FileBaseline, carried
from rein.analysis.closure import outside_note
from rein.analysis.cold_commands import command_baselines, texts_before_a_command
from rein.analysis.cold_start import (
    changed_files_first,
    cold_source,
    corrected_baseline,
    importers_later,
    not_past_the_importers,
    taken_in_time,
    verdict_snapshot,
)
from rein.analysis.command_ahead import BaselineAhead
from rein.analysis.command_baselines import baseline_command_changes
from rein.analysis.earlier_changes import before_earlier_changes
from rein.analysis.file_capture import capture, text_before
from rein.analysis.gate_state import exported, imported
from rein.analysis.open_files_first import ByPath, own_first
from rein.analysis.outcome import Judging, outcome_of
from rein.analysis.owed_importers import OwedImporters
from rein.analysis.reach import check_more_importers
from rein.analysis.reach_verdict import (
    ReachJudging,
    judge_reach,
    not_reached,
    open_files_only,
    with_fallback,
)
from rein.analysis.restored import RESTORED, all_restored
from rein.analysis.run_texts import analysed, before_and_now, exists, reader
from rein.analysis.whole_snapshot import whole_snapshot
from rein.harness.gating.gate_types import (
    MAX_BLOCKERS_IN_PROMPT,
    SEVERITY_LEVELS,
    SEVERITY_NAMES,
    FileByFileCounterfactual,
    FileByFileDiagnostics,
    GateContext,
    GateOutcome,
    ProgressReporter,
)
from rein.harness.ports import (
    Diagnostic,
    DiagnosticsSnapshot,
    DiagnosticsSource,
    Mutation,
    ReleasingDiagnostics,
    SettlingDiagnostics,
    Workspace,
    Writes,
)

if TYPE_CHECKING:
    from rein.harness.gating.coordinators import DependencyCoordinator

__all__ = ["MAX_BLOCKERS_IN_PROMPT", "SEVERITY_LEVELS", "SEVERITY_NAMES", "AnalyzerGate"]


class AnalyzerGate:
    """Blocking: diagnostics at or above ``severity`` that the run's
    changes introduced (see the module docstring)."""

    name = "analyzer"

    def __init__(
        self,
        diagnostics: DiagnosticsSource,
        severity: str | int = "error",
        *,
        dependencies: DependencyCoordinator | None = None,
        settle_timeout_s: float = 120.0,
    ) -> None:
        self.diagnostics = diagnostics
        self.threshold = severity if isinstance(severity, int) else SEVERITY_LEVELS[severity]
        self.dependencies = dependencies
        self.settle_timeout_s = settle_timeout_s
        #: The run-start snapshot (every file the analyzers know).
        self.baseline: DiagnosticsSnapshot | None = None
        #: path -> the file before the run first changed it.
        self.files: dict[str, FileBaseline] = {}
        #: Files first analysed after the run-start snapshot (a source that
        #: analyses file by file opened them with a changed file, whose
        #: importers they are): their diagnostics before the change.
        self.late: dict[str, tuple[Diagnostic, ...]] = {}
        #: Changes were judged (or baselined) and not validated yet: the
        #: next run keeps these baselines.
        self._unvalidated = False
        self._by_path = ByPath()  # ``baseline``'s diagnostics by path
        #: Importers opened past the source's bound whose baseline could
        #: not be taken: not judged, reported as not checked.
        self._unbaselined: set[str] = set()
        #: Importers of a cold write owed a baseline (:mod:`rein.analysis.owed_importers`).
        self._owed = OwedImporters()
        #: Held while a change's baselines are taken (the analyzers may be
        #: shown a file as it was): a change announced meanwhile (a tool
        #: batch's parallel write) waits, its text kept from the analyzers.
        self._changing = asyncio.Lock()
        #: A change was baselined file by file (cold): ``baseline``, taken
        #: after it, gets ``before_run`` for the files with errors in it.
        self._after_change = False
        self._before_run: dict[str, tuple[Diagnostic, ...]] = {}
        #: Of those, the files out of the changes' reach (:mod:`rein.analysis.closure`).
        self._outside: list[str] = []
        #: The run-start snapshot being taken in the background.
        self._snapshot = BackgroundSnapshot()
        #: Every file's text before a command ran in a cold session (what it
        #: changed is baselined from them: :mod:`rein.analysis.cold_commands`).
        self._texts_before: Callable[[str], str | None] | None = None
        #: The workspace a cold command ran in, and its changes' baseline
        #: taken once it ended (:mod:`rein.analysis.command_ahead`).
        self._command_workspace: Workspace | None = None
        self._ahead = BaselineAhead()
        self._progress: ProgressReporter | None = None
        #: Something was installed since the baselines were taken (or may
        #: have been: a stored session's): a tree restored to its text before
        #: the run may still be analysed differently (:mod:`rein.analysis.restored`).
        self._installed = False
        #: A command ran since the changes were last validated (it may have
        #: changed the environment, out of sight: :mod:`rein.analysis.restored`).
        self._commanded = False

    def report_progress(self, progress: ProgressReporter) -> None:
        self._progress = progress

    @property
    def _settling(self) -> SettlingDiagnostics | None:
        source = self.diagnostics
        return source if isinstance(source, SettlingDiagnostics) else None

    async def on_run_start(self, generation: int) -> None:
        """Start taking the run-start snapshot in the background; returns
        at once (:meth:`baseline_ready` awaits it)."""
        if self._unvalidated and self.baseline is not None:
            # Changes of an earlier run are not validated yet: keep judging
            # them against the state before their first change.
            return
        # A cold change not validated yet is in the snapshot taken now too.
        self._after_change = self._after_change and bool(self.files)
        self._texts_before = None  # nothing unvalidated: a command reads them afresh
        self._snapshot.start(self._take_baseline(generation))

    async def _take_baseline(self, generation: int) -> None:
        settling = self._settling
        if settling is not None:
            await settling.wait_idle(self.settle_timeout_s)
        self.baseline = await self.diagnostics.snapshot(None, min_generation=generation)
        self._before_run, self._outside = {}, []
        if not self._unvalidated:
            # The new snapshot covers the importers opened so far.
            self.late.clear()

    def on_run_end(self) -> None:
        """A run-start snapshot still being taken is stopped: no change
        waited for it (the next run starts another); so is a command's
        baseline still being taken."""
        self._snapshot.stop()
        self._ahead.stop()

    async def baseline_ready(self) -> None:
        """Wait for the run-start snapshot (:meth:`BackgroundSnapshot.ready`:
        reported, never raises)."""
        await self._snapshot.ready(self._progress)

    def export_state(self) -> dict[str, Any]:
        """The per-file baselines, for a session stored with unvalidated
        changes (:mod:`rein.analysis.gate_state`)."""
        return {**exported(self.files, self.late), "owed": sorted(self._owed.paths)}

    def import_state(self, data: dict[str, Any]) -> None:
        files, late = imported(data)
        self.files.update(files)
        self.late.update(late)
        # Owed importers are judged on the snapshot taken after the change:
        # their baseline is asked as before the run there.
        self._owed.paths.update(data.get("owed", ()))
        self._after_change = self._after_change or bool(self._owed.paths)
        self._unvalidated = bool(self.files) or self._unvalidated
        self._installed = True  # what was installed before the store is not known
        self._commanded = True  # nor what a command did

    def on_validated(self, generation: int) -> None:
        """Every change up to ``generation`` passed: the next changes get
        fresh baselines."""
        self.files.clear()
        self._unbaselined.clear()
        self._owed.paths.clear()
        self._texts_before = None
        self._unvalidated = False
        self._installed = False
        self._commanded = False
        source = self.diagnostics
        if isinstance(source, ReleasingDiagnostics):
            # Importers opened for these changes are closed; opened again
            # for a later change, they get a baseline from then.
            for path in source.release_opened():
                self.late.pop(path, None)

    async def before_change(self, paths: Sequence[str], workspace: Workspace) -> None:
        """Capture the baseline of each path the run has not changed yet
        (after the run-start snapshot: it must predate every change). A
        rename's ``(old, new)``: a new path that does not exist yet gets the
        old path's baseline (:func:`~rein.analysis.baselines.carried`). No
        paths: a command is about to run; only the run-start snapshot is
        awaited (a command started while it was being taken would be in it).
        While that snapshot is being taken, a source that can be asked file
        by file baselines the paths so instead (:mod:`rein.analysis.cold_start`),
        and a command does not wait: every file's text is read for its
        verdict (:mod:`rein.analysis.cold_commands`). One change at a time
        (``_changing``)."""
        async with self._changing:
            await self._before_change(paths, workspace)

    async def _before_change(self, paths: Sequence[str], workspace: Workspace) -> None:
        cold = cold_source(self.diagnostics, self._snapshot.task)
        self._commanded = self._commanded or not paths
        source = self.diagnostics
        if (
            self._owed.paths
            and not isinstance(paths, Writes)
            and isinstance(source, FileByFileDiagnostics)
        ):
            # A deletion, a rename or a command may take a written file
            # away: its importers are baselined while it can still be shown.
            await self._baseline_owed(self.files, workspace, source)
        if not paths and isinstance(cold, FileByFileCounterfactual):
            # A command in a cold session: what it changes is judged file by
            # file, from the texts read now; the snapshot comes after it.
            if self._texts_before is None:
                self._texts_before = await texts_before_a_command(cold, self._progress)
            if self._texts_before is not None:
                self._after_change = True
                self._command_workspace = workspace
                return
        if not paths or cold is None:
            await self.baseline_ready()
        if not paths:
            return
        self._unvalidated = True
        for path in paths:
            if path not in self.files:
                self.files[path] = await self._capture(path, workspace, isinstance(paths, Writes))
        if len(paths) == 2:
            old, new = paths
            if self.files[new].text == "" and self.files[new].renamed_from is None:
                self.files[new] = carried(self.files[old], new)

    def on_change(self, mutation: Mutation) -> None:
        """A command's change in a cold session (``external``: the disk
        watcher saw it): its files' baseline is taken now, in the
        background (:meth:`~rein.analysis.command_ahead.BaselineAhead.on_change`)."""
        cold = cold_source(self.diagnostics, self._snapshot.task)
        ahead = (self._changing, self.files, self.late, self.settle_timeout_s)
        self._ahead.on_change(
            mutation, self.diagnostics, cold, self._texts_before, self._command_workspace, *ahead
        )

    async def _capture(self, path: str, workspace: Workspace, writes: bool) -> FileBaseline:
        """``path``'s own baseline (:func:`~rein.analysis.file_capture.capture`;
        :mod:`rein.analysis.earlier_changes`); the importers opened with it
        join ``late``, or, cold and ``writes``, are owed a baseline."""
        text, whole = await text_before(path, workspace)
        if whole is not None:
            return whole
        # Cold or not is decided once the text is read: the run-start
        # snapshot may have been taken meanwhile. A cold change is marked so
        # before the analyzers are asked: should they fail, the change goes
        # ahead all the same, and the snapshot taken with it in place must
        # still be corrected (_baseline_before_the_run).
        cold = cold_source(self.diagnostics, self._snapshot.task)
        self._after_change = self._after_change or cold is not None
        found = await capture(
            path,
            text,
            self.diagnostics,
            cold,
            self._run_start,
            self.settle_timeout_s,
            self._progress,
            importers_later=await importers_later(writes, cold, self.files, reader(workspace)),
            own_first=None
            if cold is not None
            else await own_first(self.diagnostics, writes, self.files, reader(workspace)),
        )
        for other, diagnostics in found.importers.items():
            if other not in self.files and other not in self.late:
                self.late[other] = diagnostics
        self._owed.paths.update(p for p in found.owed if p not in self.files and p not in self.late)
        before = await before_earlier_changes(
            path,
            text,
            path in self._owed.paths,
            self.diagnostics,
            self.files,
            self.late,
            workspace,
            self.settle_timeout_s,
            self._progress,
        )
        self._owed.paths.discard(path)  # a changed file now, judged on its own baseline
        return found.baseline if before is None else replace(found.baseline, diagnostics=before)

    def _run_start(self, path: str) -> tuple[Diagnostic, ...]:
        return tuple(self._by_path.get(self.baseline, path))

    async def _tell_environment(self) -> None:
        """An install changed what imports resolve to: the analyzers are
        told (or restarted) before they are asked for a verdict."""
        changed = self.dependencies.take_environment_changes() if self.dependencies else []
        self._installed = self._installed or bool(changed)
        if changed and self._settling is not None:
            await self._settling.environment_changed(changed)

    def _baseline_of(self, path: str) -> Sequence[Diagnostic]:
        """A file's diagnostics before the run: from when it was first
        analysed (``late``), else the run-start snapshot's."""
        late = self.late.get(path, self._before_run.get(path))
        return late if late is not None else self._by_path.get(self.baseline, path)

    async def check(self, ctx: GateContext) -> GateOutcome:
        await self._ahead.ready(self._progress)
        installed = self._installed or bool(self.dependencies and self.dependencies.installed())
        now = reader(ctx.workspace)
        ws = ctx.workspace
        if (
            ws is not None
            and not (installed or self._commanded)
            and await all_restored(self.files, ctx.touched, now, lambda p: exists(ws, p))
        ):
            return GateOutcome(detail=RESTORED)  # the baselines' tree: not asked again
        cold = cold_source(self.diagnostics, self._snapshot.task)
        touched = analysed(self.diagnostics, ctx.touched)
        if cold is not None and not all(p in self.files for p in touched):
            found = await command_baselines(
                cold,
                self._texts_before,
                touched,
                self.files,
                self.late,
                reader(ctx.workspace),
                self.settle_timeout_s,
                self._progress,
            )
            if found is not None:
                self.files.update(found[0])
                self.late.update(found[1])
        why: str | None = None
        if cold is not None and all(p in self.files for p in touched):
            partial = await self._judge(ctx, cold)
            if partial.blockers:
                return partial  # repaired first; the workspace snapshot serves later verdicts
            # Never a pass without looking past the direct importers.
            reached = await self._judge_reach(ctx, cold, partial)
            if isinstance(reached, GateOutcome):
                return reached
            why = reached
            if not await taken_in_time(self._snapshot.task, self.settle_timeout_s, self._progress):
                return with_fallback(not_past_the_importers(partial, self.settle_timeout_s), why)
        not_had: dict[str, str] | None = None
        first = open_files_only(self.diagnostics) if self._owed.paths - ctx.touched else None
        if cold is None and first is not None:
            # Open files only, a write's importers owed: its own errors first.
            verdict, not_had = await self._own_errors_first(ctx, first)
            if verdict.blockers:
                return verdict
        # Not cold, or a command's change not baselined file by file (it
        # created or deleted a file): judged on the whole workspace.
        await self.baseline_ready()
        verdict = with_fallback(await self._judge(ctx, None, not_had), why)
        if verdict.blockers or (opened := open_files_only(self.diagnostics)) is None:
            return verdict
        # Open files only: what the change can reach past the importers opened.
        reached = await self._judge_reach(ctx, opened, verdict)
        return reached if isinstance(reached, GateOutcome) else not_reached(verdict, reached)

    async def _judge_reach(
        self, ctx: GateContext, cold: FileByFileDiagnostics, partial: GateOutcome
    ) -> GateOutcome | str:
        """:func:`~rein.analysis.reach_verdict.judge_reach`, with ``_changing``
        held (the analyzers may be shown the changed files as they were)."""
        judged = {*ctx.touched, *self.late, *self._owed.paths, *self._unbaselined}
        async with self._changing:
            return await judge_reach(
                ReachJudging(self.diagnostics, cold, self.files, self.late, self.threshold),
                ctx,
                partial,
                judged,
                lambda snap: self._outcome(ctx, snap, True, True, set(self._unbaselined), []),
                self.settle_timeout_s,
                self._progress,
            )

    async def _judge(
        self,
        ctx: GateContext,
        cold: FileByFileDiagnostics | None,
        owed_not_had: dict[str, str] | None = None,
    ) -> GateOutcome:
        """The verdict on the changes: on the changed files and their
        importers asked file by file (``cold``), else on the whole workspace
        (``owed_not_had``: open files only, the owed importers asked and not
        had, :meth:`_own_errors_first`)."""
        self._unvalidated = True
        # Changed files with no baseline (a command changed them) get one.
        await baseline_command_changes(
            self.diagnostics,
            analysed(self.diagnostics, ctx.touched),
            self.files,
            self.late,
            self._unbaselined,
            reader(ctx.workspace),
            self.settle_timeout_s,
            self._texts_before,
        )
        unbaselined = await self._check_more_importers(ctx)
        unsure = await self._baseline_before_the_run(ctx) if cold is None else []
        if cold is None and self.baseline is not None and owed_not_had is None:
            # The whole snapshot's files are baselined as before the run
            # (before_the_run): owed importers it settled are owed no more.
            self._owed.settled |= self._owed.paths - set(unsure)
            self._owed.paths &= set(unsure)
        await self._tell_environment()
        if cold is not None:
            # Importers owed a baseline (a cold write's) are asked only when
            # the changed files' own errors do not block; those baselined
            # already are asked with the changed files (asked one after the
            # other, the importers' answers would wait a second time).
            if self._owed.paths - ctx.touched:
                importers = {*self.late, *self._owed.paths} - ctx.touched
                own = await changed_files_first(
                    cold, ctx.touched, self.settle_timeout_s, self._progress
                )
                first = await self._outcome(ctx, own, True, True, unbaselined, unsure, importers)
                if first.blockers:
                    return first  # the importers wait for the next verdict
            async with self._changing:
                not_had = await self._baseline_owed(ctx.touched, ctx.workspace, cold)
            snap = await verdict_snapshot(
                cold, ctx.touched, self.late, self.settle_timeout_s, self._progress
            )
            settled = True  # a late answer makes the snapshot stale
        else:
            snap, settled = await whole_snapshot(
                self.diagnostics, ctx.touched, ctx.generation, self.settle_timeout_s, self._progress
            )
            not_had = owed_not_had or {}
        verdict = await self._outcome(
            ctx, snap, settled, cold is not None, unbaselined, unsure, not_had=not_had
        )
        note = outside_note(self._outside) if cold is None else ""
        return replace(verdict, detail=f"{verdict.detail}; {note}") if note else verdict

    async def _outcome(
        self,
        ctx: GateContext,
        snap: DiagnosticsSnapshot,
        settled: bool,
        partial: bool,
        unbaselined: set[str],
        unsure: list[str],
        owed: Collection[str] = (),
        not_had: Mapping[str, str] | None = None,
    ) -> GateOutcome:
        """The verdict on ``snap`` (:func:`~rein.analysis.outcome.outcome_of`)."""
        judging = Judging(
            gate=self.name,
            threshold=self.threshold,
            diagnostics=self.diagnostics,
            files=self.files,
            baseline=self.baseline,
            baseline_of=self._baseline_of,
            importers=set(self.late) | self._owed.settled,
            settle_timeout_s=self.settle_timeout_s,
            before_and_now=lambda: self._before_and_now(ctx),
        )
        return await outcome_of(
            judging, ctx, snap, settled, partial, unbaselined, unsure, owed, not_had
        )

    async def _own_errors_first(
        self, ctx: GateContext, first: FileByFileDiagnostics
    ) -> tuple[GateOutcome, dict[str, str]]:
        """Open files only (:mod:`rein.analysis.open_files_first`): the
        verdict on the changed files' own errors, naming the owed importers
        not checked; when it does not block, the owed importers' baselines
        asked, and those not had (judged by no verdict: unverified)."""
        own = await changed_files_first(first, ctx.touched, self.settle_timeout_s, self._progress)
        owed = self._owed.paths - ctx.touched
        verdict = await self._outcome(ctx, own, True, True, set(self._unbaselined), [], owed)
        if verdict.blockers:
            return verdict, {}
        async with self._changing:
            return verdict, await self._baseline_owed(ctx.touched, ctx.workspace, first)

    async def _baseline_owed(
        self, touched: Collection[str], workspace: Workspace | None, cold: FileByFileDiagnostics
    ) -> dict[str, str]:
        """:meth:`OwedImporters.ask`, with ``_changing`` held."""
        return await self._owed.ask(
            cold, touched, self.files, self.late, workspace, self.settle_timeout_s, self._progress
        )

    async def _baseline_before_the_run(self, ctx: GateContext) -> list[str]:
        """A run-start snapshot taken after a cold change: the baseline of
        the files with errors in it is asked for as before the run
        (:func:`~rein.analysis.cold_start.before_the_run`). Returns the files
        whose baseline is not known yet (asked again at the next verdict)."""
        if not self._after_change or self.baseline is None:
            return []
        found, self._outside, unknown = await corrected_baseline(
            self.diagnostics,
            self.baseline,
            {*self.files, *self.late, *self._before_run, *ctx.touched},
            await self._before_and_now(ctx),
            ctx,
            self.files,
            self.threshold,
            self.settle_timeout_s,
        )
        self._before_run.update(found)
        self._after_change = bool(unknown)
        return unknown

    async def _before_and_now(
        self, ctx: GateContext
    ) -> tuple[dict[str, str], dict[str, str]] | None:
        return await before_and_now(ctx.touched, self.files, ctx.workspace, self.diagnostics)

    async def _check_more_importers(self, ctx: GateContext) -> set[str]:
        """The next batch of importers left past the source's bound
        (:func:`~rein.analysis.reach.check_more_importers`). Returns the
        opened importers whose baseline could not be taken: their errors are
        not judged (they stay not checked)."""
        return await check_more_importers(
            self.diagnostics,
            ctx.touched,
            lambda: self._before_and_now(ctx),
            self.settle_timeout_s,
            self._unbaselined,
            self.late,
        )
