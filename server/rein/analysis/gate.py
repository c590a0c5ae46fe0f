"""The analyzer gate: block on what the run broke, never on what it found,
and never pass blind.

* What it judges against (:mod:`rein.analysis.run_baselines`): the
  whole snapshot taken in the background at run start (the baseline of
  every file the analyzers know, :mod:`rein.analysis.background_snapshot`),
  which the run's first change waits for, so that it is from before any
  change, and so does the verdict; each changed file's own baseline,
  captured before the run first changes it (:mod:`rein.analysis.file_capture`),
  through the workspace layer's ``before_change`` hook
  (:class:`~rein.harness.generations.TrackedWorkspace`); one importing a
  file the run changed already, as before that change
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
  (:mod:`rein.analysis.command_baselines`); in a cold session, and in a
  workspace analysed open files only (a command that changed an analysed
  file, and the verdicts after it until validated: :meth:`~rein.analysis.run_baselines.RunBaselines.per_file`),
  file by file from every file's text read before the command ran
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
* A setting the analyzers read that the run changed (``pyproject.toml``):
  every file judged against the run-start snapshot where it holds every
  file before the run, else no pass (:mod:`rein.analysis.setting_changes`).
* Baselines live until the changes they judge are validated: the repair
  loop, and a later run of the session that validates what an earlier run
  left, judge against the state before the first change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rein.analysis.baselines import FileBaseline
from rein.analysis.closure import outside_note
from rein.analysis.cold_commands import command_baselines
from rein.analysis.cold_start import (
    changed_files_first,
    not_past_the_importers,
    taken_in_time,
    verdict_snapshot,
)
from rein.analysis.command_baselines import baseline_command_changes
from rein.analysis.outcome import Judging, outcome_of
from rein.analysis.reach import check_more_importers
from rein.analysis.reach_verdict import (
    ReachJudging,
    judge_reach,
    not_reached,
    open_files_only,
    with_fallback,
)
from rein.analysis.restored import RESTORED, all_restored
from rein.analysis.run_baselines import RunBaselines
from rein.analysis.run_texts import analysed, exists, reader, run_changes
from rein.analysis.setting_changes import unseen_setting
from rein.analysis.whole_snapshot import whole_snapshot
from rein.harness.gating.gate_types import (
    MAX_BLOCKERS_IN_PROMPT,
    SEVERITY_LEVELS,
    SEVERITY_NAMES,
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
    Workspace,
)

if TYPE_CHECKING:
    from rein.harness.gating.dependencies import DependencyCoordinator

__all__ = ["MAX_BLOCKERS_IN_PROMPT", "SEVERITY_LEVELS", "SEVERITY_NAMES", "AnalyzerGate"]


class AnalyzerGate:
    """Blocking: diagnostics at or above ``severity`` that the run's
    changes introduced (see the module docstring). What it judges against
    is :attr:`baselines` (:class:`~rein.analysis.run_baselines.RunBaselines`)."""

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
        self.baselines = RunBaselines(diagnostics, settle_timeout_s)

    @property
    def baseline(self) -> DiagnosticsSnapshot | None:
        """The run-start snapshot (every file the analyzers know)."""
        return self.baselines.baseline

    @property
    def files(self) -> dict[str, FileBaseline]:
        """path -> the file before the run first changed it."""
        return self.baselines.files

    @property
    def late(self) -> dict[str, tuple[Diagnostic, ...]]:
        """The importers first analysed after the run-start snapshot."""
        return self.baselines.late

    def report_progress(self, progress: ProgressReporter) -> None:
        self.baselines.progress = progress

    async def on_run_start(self, generation: int) -> None:
        """Start taking the run-start snapshot in the background; returns
        at once (:meth:`baseline_ready` awaits it)."""
        await self.baselines.on_run_start(generation)

    def on_run_end(self) -> None:
        self.baselines.on_run_end()

    async def baseline_ready(self) -> None:
        """Wait for the run-start snapshot (reported, never raises)."""
        await self.baselines.ready()

    def export_state(self) -> dict[str, Any]:
        return self.baselines.export_state()

    def import_state(self, data: dict[str, Any]) -> None:
        self.baselines.import_state(data)

    def on_validated(self, generation: int) -> None:
        """Every change up to ``generation`` passed: the next changes get
        fresh baselines."""
        self.baselines.on_validated()

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
        verdict (:mod:`rein.analysis.cold_commands`); so it is, too, where
        the analyzers check the open files only, snapshot taken or not
        (:meth:`~rein.analysis.run_baselines.RunBaselines.per_file`). One
        change at a time.
        A change to a file the analyzers read that is no module (a setting:
        ``pyproject.toml``, ``pyrightconfig.json``, ``ruff.toml``) first
        waits for the run-start snapshot, deferred or not
        (:meth:`~rein.analysis.run_baselines.RunBaselines.before_change`)."""
        await self.baselines.before_change(paths, workspace)

    def on_change(self, mutation: Mutation) -> None:
        """A command's change (``external``: the disk watcher saw it): in
        a cold session its files' baseline is taken now, in the background
        (:mod:`rein.analysis.command_ahead`); where the analyzers check the
        open files only, the verdicts are file by file from now on
        (:meth:`~rein.analysis.run_baselines.RunBaselines.commanded_changes`)."""
        self.baselines.on_change(mutation)

    async def _tell_environment(self) -> None:
        """An install changed what imports resolve to: the analyzers are
        told (or restarted) before they are asked for a verdict."""
        b = self.baselines
        changed = self.dependencies.take_environment_changes() if self.dependencies else []
        b.installed = b.installed or bool(changed)
        b.dependencies_installed = b.dependencies_installed or bool(changed)
        if changed and b.settling is not None:
            await b.settling.environment_changed(changed)

    async def check(self, ctx: GateContext) -> GateOutcome:
        b = self.baselines
        await b.ahead.ready(b.progress)
        installed = b.installed or bool(self.dependencies and self.dependencies.installed())
        now = reader(ctx.workspace)
        ws = ctx.workspace
        if (
            ws is not None
            and not installed
            and not (b.commanded and await asyncio.to_thread(b.commanded_unseen))
            and await all_restored(
                b.files, run_changes(self.diagnostics, ctx.touched), now, lambda p: exists(ws, p)
            )
        ):
            return GateOutcome(detail=RESTORED)  # the baselines' tree: not asked again
        b.verdict_starts()
        verdict = await self._verdict(ctx)
        unseen = await b.settings_unseen(ctx.touched, ctx.workspace)
        return unseen_setting(verdict, unseen) if unseen else verdict

    async def _verdict(self, ctx: GateContext) -> GateOutcome:
        b = self.baselines
        cold = b.per_file(analysed(self.diagnostics, ctx.touched))
        touched = analysed(self.diagnostics, ctx.touched)
        if cold is not None and not all(p in b.files for p in touched):
            found = await command_baselines(
                cold,
                b.texts_before,
                touched,
                b.files,
                b.late,
                reader(ctx.workspace),
                self.settle_timeout_s,
                b.progress,
            )
            if found is not None:
                b.files.update(found[0])
                owed = [p for p in found[1] if p not in b.files and p not in b.late]
                b.owed.owe(owed, commanded=True)
        why: str | None = None
        if cold is not None and all(p in b.files for p in touched):
            partial = await self._judge(ctx, cold)
            if partial.blockers:
                return partial  # repaired first; the workspace snapshot serves later verdicts
                # (but where open files only are analysed: the same files)
            # Never a pass without looking past the direct importers.
            reached = await self._judge_reach(ctx, cold, partial)
            if isinstance(reached, GateOutcome):
                return reached
            why = reached
            b.snapshot.need()
            if not await taken_in_time(b.snapshot.task, self.settle_timeout_s, b.progress):
                return with_fallback(not_past_the_importers(partial, self.settle_timeout_s), why)
        not_had: dict[str, str] | None = None
        first = open_files_only(self.diagnostics) if b.owed.first(ctx.touched) else None
        if cold is None and first is not None:
            # Open files only, a write's importers owed: its own errors first.
            verdict, not_had = await self._own_errors_first(ctx, first)
            if verdict.blockers:
                return verdict
        # Not file by file, or a command's change not baselined so (it
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
        """:func:`~rein.analysis.reach_verdict.judge_reach`, with ``changing``
        held (the analyzers may be shown the changed files as they were)."""
        b = self.baselines
        judged = {*ctx.touched, *b.late, *b.owed.paths, *b.unbaselined}
        async with b.changing:
            return await judge_reach(
                ReachJudging(
                    self.diagnostics,
                    cold,
                    b.files,
                    b.late,
                    self.threshold,
                    b.environment_changed(),
                ),
                ctx,
                partial,
                judged,
                lambda snap: self._outcome(ctx, snap, True, True, set(b.unbaselined), []),
                self.settle_timeout_s,
                b.progress,
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
        b = self.baselines
        b.unvalidated = True
        # Changed files with no baseline (a command changed them) get one.
        await baseline_command_changes(
            self.diagnostics,
            analysed(self.diagnostics, ctx.touched),
            b.files,
            b.late,
            b.unbaselined,
            reader(ctx.workspace),
            self.settle_timeout_s,
            b.texts_before,
        )
        unbaselined = await self._check_more_importers(ctx)
        await b.settings_judged(ctx.touched, ctx.workspace)  # judged against the run start
        unsure = await b.before_the_run(ctx, self.threshold) if cold is None else []
        if cold is None and b.baseline is not None and owed_not_had is None:
            # The whole snapshot's files are baselined as before the run
            # (before_the_run): owed importers it settled are owed no more.
            b.owed.settled |= b.owed.paths - set(unsure)
            b.owed.paths &= set(unsure)
            b.owed.commanded &= b.owed.paths
        await self._tell_environment()
        if cold is not None:
            # Importers owed a baseline (a cold write's) are asked only when
            # the changed files' own errors do not block; those baselined
            # already are asked with the changed files (asked one after the
            # other, the importers' answers would wait a second time); a
            # cold command's are asked with them.
            if b.owed.first(ctx.touched):
                importers = {*b.late, *b.owed.paths} - ctx.touched
                own = await changed_files_first(
                    cold, ctx.touched, self.settle_timeout_s, b.progress
                )
                first = await self._outcome(ctx, own, True, True, unbaselined, unsure, importers)
                if first.blockers:
                    return first  # the importers wait for the next verdict
            owed = b.owed.paths - ctx.touched
            snap, not_had = await self._owed_asked_after(ctx, cold)
            settled = True  # a late answer makes the snapshot stale
            # Owed importers asked as they are without errors were judged.
            judged = b.owed.paths - ctx.touched - set(not_had)
            # Those asked as they were just now, after the as-is question,
            # are not asked it again (the counterfactual's own question).
            asked_after = owed - b.owed.paths
        else:
            snap, settled = await whole_snapshot(
                self.diagnostics,
                ctx.touched,
                ctx.generation,
                self.settle_timeout_s,
                b.progress,
                {*b.late, *b.owed.settled} - ctx.touched,
            )
            not_had = owed_not_had or {}
            judged = set()
            asked_after = set()
        verdict = await self._outcome(
            ctx,
            snap,
            settled,
            cold is not None,
            unbaselined,
            unsure,
            not_had=not_had,
            judged=judged,
            asked_after=asked_after if open_files_only(self.diagnostics) is not None else None,
        )
        note = outside_note(b.outside) if cold is None else ""
        return replace(verdict, detail=f"{verdict.detail}; {note}") if note else verdict

    async def _owed_asked_after(
        self, ctx: GateContext, cold: FileByFileDiagnostics
    ) -> tuple[DiagnosticsSnapshot, dict[str, str]]:
        """The changed files and their importers asked as they are, then
        the baseline of the owed importers in which errors were found
        (:mod:`rein.analysis.owed_importers`); an owed importer without
        errors is judged (nothing of it can block) and stays owed. Returns
        the snapshot without the importers whose baseline was not had, and
        those with why (the verdict is unverified)."""
        b = self.baselines
        owed = b.owed.paths - ctx.touched
        snap = await verdict_snapshot(
            cold, ctx.touched, {*b.late, *owed}, self.settle_timeout_s, b.progress
        )
        with_errors = {
            d.path for d in snap.diagnostics if d.path in owed and d.severity <= self.threshold
        }
        async with b.changing:
            not_had = await b.ask_owed(ctx.touched, ctx.workspace, cold, with_errors)
        if not_had:
            kept = tuple(d for d in snap.diagnostics if d.path not in not_had)
            snap = replace(snap, diagnostics=kept)
        return snap, not_had

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
        judged: Collection[str] = (),
        asked_after: Collection[str] | None = None,
    ) -> GateOutcome:
        """The verdict on ``snap`` (:func:`~rein.analysis.outcome.outcome_of`;
        ``judged``: importers checked without a baseline, counted too;
        ``asked_after``: see :attr:`~rein.analysis.outcome.Judging.asked_after`)."""
        b = self.baselines
        judging = Judging(
            gate=self.name,
            threshold=self.threshold,
            diagnostics=self.diagnostics,
            files=b.files,
            baseline=b.baseline,
            baseline_of=b.baseline_of,
            importers=set(b.late) | b.owed.settled | set(judged),
            settle_timeout_s=self.settle_timeout_s,
            before_and_now=lambda: b.before_and_now(ctx),
            environment_changed=b.environment_changed(),
            asked_after=asked_after,
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
        b = self.baselines
        own = await changed_files_first(first, ctx.touched, self.settle_timeout_s, b.progress)
        owed = b.owed.paths - ctx.touched
        verdict = await self._outcome(ctx, own, True, True, set(b.unbaselined), [], owed)
        if verdict.blockers:
            return verdict, {}
        async with b.changing:
            return verdict, await b.ask_owed(ctx.touched, ctx.workspace, first)

    async def _check_more_importers(self, ctx: GateContext) -> set[str]:
        """The next batch of importers left past the source's bound
        (:func:`~rein.analysis.reach.check_more_importers`). Returns the
        opened importers whose baseline could not be taken: their errors are
        not judged (they stay not checked)."""
        b = self.baselines
        return await check_more_importers(
            self.diagnostics,
            ctx.touched,
            lambda: b.before_and_now(ctx),
            self.settle_timeout_s,
            b.unbaselined,
            b.late,
        )
