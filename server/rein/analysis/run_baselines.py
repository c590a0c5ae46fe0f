"""What the analyzer gate judges a run against, and how long it keeps it.

* The **run-start snapshot** (:attr:`RunBaselines.baseline`, every file the
  analyzers know), taken in the background when a run starts
  (:mod:`rein.analysis.background_snapshot`); the run's first change waits
  for it, so that it is from before any change, unless the source can be
  asked file by file (cold: :mod:`rein.analysis.cold_start`). A source
  that defers its whole-workspace analysis
  (:class:`~rein.harness.gating.gate_types.DeferredWorkspace`) has it
  taken only once a verdict or a change needs it: every change until then
  is cold, and the snapshot, taken after them, is corrected as before the
  run as any snapshot taken after a cold change.
* Each changed file's **own baseline** (:attr:`RunBaselines.files`), captured
  before the run first changes it (:mod:`rein.analysis.file_capture`,
  through the workspace layer's ``before_change`` hook); one importing a file
  the run changed already, as before that change
  (:mod:`rein.analysis.earlier_changes`). A rename's new path gets the old
  path's (:func:`~rein.analysis.baselines.carried`).
* The **importers'** (:attr:`RunBaselines.late`): files first analysed after
  the run-start snapshot (opened with a changed file), their diagnostics
  before the change; a cold write's importers are owed theirs
  (:mod:`rein.analysis.owed_importers`) until a verdict needs it.
* A command in a cold session, or where the analyzers check the open files
  only (:meth:`RunBaselines.per_file`): every file's text read before it
  ran (:mod:`rein.analysis.cold_commands`), its changed files' baseline
  asked as soon as it ended in a cold session
  (:mod:`rein.analysis.command_ahead`), else at the verdict; their
  importers are owed theirs, asked only where a verdict finds errors.
* A run-start snapshot taken after a cold change is corrected: the files
  with errors in it get their baseline as before the run
  (:func:`~rein.analysis.cold_start.corrected_baseline`).

They live until the changes they judge are validated (:meth:`RunBaselines.on_validated`):
the repair loop, and a later run of the session that validates what an
earlier run left, judge against the state before the first change. The
verdict on them is :class:`~rein.analysis.gate.AnalyzerGate`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Any

from rein.analysis.background_snapshot import BackgroundSnapshot
from rein.analysis.baselines import FileBaseline, carried
from rein.analysis.closure import environment_changes, environment_watched
from rein.analysis.cold_commands import texts_before_a_command
from rein.analysis.cold_start import cold_source, corrected_baseline, importers_later
from rein.analysis.command_ahead import BaselineAhead
from rein.analysis.earlier_changes import before_earlier_changes
from rein.analysis.file_capture import capture, text_before
from rein.analysis.gate_state import exported, imported
from rein.analysis.open_files_first import ByPath, own_first
from rein.analysis.owed_importers import OwedImporters
from rein.analysis.reach_verdict import open_files_only
from rein.analysis.run_texts import analysed, before_and_now, reader, settings_changed
from rein.analysis.setting_changes import (
    ProjectBefore,
    judged_from_run_start,
    settings_moved,
    settings_named,
)
from rein.harness.gating.gate_types import (
    DeferredWorkspace,
    FileByFileCounterfactual,
    FileByFileDiagnostics,
    GateContext,
    ProgressReporter,
    WholeCoverage,
)
from rein.harness.ports import (
    CommandAhead,
    Diagnostic,
    DiagnosticsSnapshot,
    DiagnosticsSource,
    Mutation,
    ReleasingDiagnostics,
    SettlingDiagnostics,
    Workspace,
    Writes,
)

__all__ = ["RunBaselines"]


class RunBaselines:
    """The analyzer gate's baselines of a run (see the module docstring).
    Its attributes are read by the verdict; only its methods change them
    (but :attr:`unvalidated`, set by a verdict)."""

    def __init__(self, diagnostics: DiagnosticsSource, settle_timeout_s: float) -> None:
        self.diagnostics = diagnostics
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
        self.unvalidated = False
        self._by_path = ByPath()  # ``baseline``'s diagnostics by path
        #: Importers opened past the source's bound whose baseline could
        #: not be taken: not judged, reported as not checked.
        self.unbaselined: set[str] = set()
        #: Importers of a cold write owed a baseline (:mod:`rein.analysis.owed_importers`).
        self.owed = OwedImporters()
        #: Held while a change's baselines are taken (the analyzers may be
        #: shown a file as it was): a change announced meanwhile (a tool
        #: batch's parallel write) waits, its text kept from the analyzers.
        self.changing = asyncio.Lock()
        #: A change was baselined file by file (cold): ``baseline``, taken
        #: after it, gets ``before_run`` for the files with errors in it.
        self._after_change = False
        self._before_run: dict[str, tuple[Diagnostic, ...]] = {}
        #: ``baseline`` was taken before any change it judges: no cold one,
        #: none kept from an earlier run or a stored session.
        self._snapshot_clean = False
        self._commanded_at_start = False
        #: This verdict judged every file against ``baseline``, a setting
        #: having changed (:meth:`settings_judged`).
        self._judged_from_start = False
        #: pyproject.toml before the run's commands (``uv add``).
        self.project = ProjectBefore()
        #: Of those, the files out of the changes' reach (:mod:`rein.analysis.closure`).
        self.outside: list[str] = []
        #: The run-start snapshot being taken in the background.
        self.snapshot = BackgroundSnapshot()
        #: Every file's text before a command ran in a cold session, or where
        #: the open files only are analysed, read once until validated (what
        #: it changed is baselined from them: :mod:`rein.analysis.cold_commands`).
        self.texts_before: Callable[[str], str | None] | None = None
        #: The workspace a cold command ran in, and its changes' baseline
        #: taken once it ended (:mod:`rein.analysis.command_ahead`).
        self._command_workspace: Workspace | None = None
        self.ahead = BaselineAhead()
        #: A command changed analysed files where the analyzers check the
        #: open files only: its changes, and those after it until validated,
        #: are judged file by file (:meth:`per_file`); ``_per_file_ready``:
        #: the source to judge so, set before a command ran (its earlier
        #: texts were read), taken up once it changed something.
        self._per_file: FileByFileDiagnostics | None = None
        self._per_file_ready: FileByFileDiagnostics | None = None
        self.progress: ProgressReporter | None = None
        #: Something was installed since the baselines were taken (or may
        #: have been: a stored session's): a tree restored to its text before
        #: the run may still be analysed differently (:mod:`rein.analysis.restored`).
        self.installed = False
        #: A command ran since the changes were last validated (it may have
        #: changed the environment, out of sight: :mod:`rein.analysis.restored`).
        self.commanded = False
        #: The source's count of environment changes when the baselines
        #: were taken, and whether the dependency gate installed since
        #: (:meth:`environment_changed`; ``installed`` is also set by a
        #: resume, where nothing is known to have changed).
        self._environment_mark = environment_changes(diagnostics)
        self.dependencies_installed = False

    def environment_changed(self) -> bool:
        """The analyzers' environment changed since the baselines were
        taken: the dependency gate installed, or the source saw its site
        folders change (a command's ``pip install``). What a change can
        reach is then not known, and the state before cannot be shown."""
        grown = environment_changes(self.diagnostics) > self._environment_mark
        return self.dependencies_installed or grown

    def commanded_unseen(self) -> bool:
        """A command ran since the changes were last validated, and what it
        may have changed out of sight of the changed files (the analyzers'
        environment: a ``pip uninstall``) is not known to be as it was: the
        source does not watch the environment, or saw it change. Blocking
        (a few ``stat`` calls and the settings read): call it off the loop."""
        if not self.commanded:
            return False
        return not environment_watched(self.diagnostics) or self.environment_changed()

    @property
    def settling(self) -> SettlingDiagnostics | None:
        source = self.diagnostics
        return source if isinstance(source, SettlingDiagnostics) else None

    def cold(self) -> FileByFileDiagnostics | None:
        """The source to ask file by file while the run-start snapshot is
        being taken (:func:`~rein.analysis.cold_start.cold_source`)."""
        return cold_source(self.diagnostics, self.snapshot.task)

    def per_file(self, touched: Collection[str] = ()) -> FileByFileDiagnostics | None:
        """The source a verdict on ``touched`` asks file by file: while the
        run-start snapshot is being taken (:meth:`cold`), and, where the
        analyzers check the open files only, once a command changed an
        analysed file (:meth:`commanded_changes`; one of ``touched`` has no
        baseline: a command changed it), until the changes are validated. There the run-start snapshot holds the open files
        only, and the file-by-file verdict asks the same files (the changed
        ones, their importers, what they reach); a command's importers are
        asked as they were only where they have errors, after they are
        asked as they are (:mod:`rein.analysis.cold_commands`). On the
        whole-snapshot path sympy's analyzers were shown a command's
        changed files as they were twice and as they are twice (sympy's
        command edits: 2.8-4.0x the command line's check), and that
        path was taken whenever the run-start snapshot had ended before the
        command's change was seen: in most sessions."""
        cold = self.cold()
        if cold is not None:
            return cold
        self.commanded_changes([p for p in touched if p not in self.files])
        return self._per_file

    def commanded_changes(self, paths: Collection[str]) -> None:
        """A command changed ``paths`` (none announced them): where the
        analyzers check the open files only, the changes are judged file by
        file from now on, when an analysed file is among them (a command
        that changed nothing, ``pytest``, keeps the verdict where it was:
        an importer baselined before it was asked as it was before the
        as-is check, review33)."""
        if self._per_file_ready is not None and analysed(self.diagnostics, paths):
            self._per_file = self._per_file_ready

    async def on_run_start(self, generation: int) -> None:
        """Start taking the run-start snapshot in the background; returns
        at once (:meth:`ready` awaits it)."""
        if self.unvalidated and self.baseline is not None:
            # Changes of an earlier run are not validated yet: keep judging
            # them against the state before their first change.
            return
        if not self.unvalidated:
            # Nothing carried: what the source noted of the changes since
            # the last validation (the person's, between runs) is not this
            # run's. Without this, a file the person made after it and the
            # run then deleted was "never a file" (review28: a false pass).
            self._release()
            self.project.forget()
        # A cold change not validated yet is in the snapshot taken now too.
        self._after_change = self._after_change and bool(self.files)
        self.texts_before = None  # nothing unvalidated: a command reads them afresh
        self._per_file = self._per_file_ready = None
        self._environment_mark = environment_changes(self.diagnostics)
        self.dependencies_installed = False
        source = self.diagnostics
        deferred = isinstance(source, DeferredWorkspace) and source.workspace_deferred()
        self._snapshot_clean = False  # the kept one's, until this one is taken
        # A command since the last validation, before this run (a stored
        # session's, a cancelled run's): the snapshot is of what it changed.
        self._commanded_at_start = self.commanded
        self.snapshot.start(self._take_baseline(generation), deferred=deferred)

    async def _take_baseline(self, generation: int) -> None:
        source = self.diagnostics
        if isinstance(source, DeferredWorkspace):
            # Taken after the changes that did not need it: _after_change
            # is set by them, so it is corrected as before the run.
            await source.analyse_workspace()
        settling = self.settling
        if settling is not None:
            await settling.wait_idle(self.settle_timeout_s)
        self.baseline = await self.diagnostics.snapshot(None, min_generation=generation)
        self._snapshot_clean = not (self._after_change or self.files or self._commanded_at_start)
        self._before_run, self.outside = {}, []
        if not self.unvalidated:
            # The new snapshot covers the importers opened so far.
            self.late.clear()

    def on_run_end(self) -> None:
        """A run-start snapshot still being taken is stopped: no change
        waited for it (the next run starts another); so is a command's
        baseline still being taken."""
        self.snapshot.stop()
        self.ahead.stop()

    async def ready(self) -> None:
        """Wait for the run-start snapshot (:meth:`BackgroundSnapshot.ready`:
        reported, never raises)."""
        await self.snapshot.ready(self.progress)

    def export_state(self) -> dict[str, Any]:
        """The per-file baselines, for a session stored with unvalidated
        changes (:mod:`rein.analysis.gate_state`)."""
        return {
            **exported(self.files, self.late),
            "owed": sorted(self.owed.paths),
            "owed_commanded": sorted(self.owed.commanded),
        }

    def import_state(self, data: dict[str, Any]) -> None:
        files, late = imported(data)
        self.files.update(files)
        self.late.update(late)
        # Owed importers are judged on the snapshot taken after the change:
        # their baseline is asked as before the run there.
        self.owed.owe(data.get("owed", ()))
        self.owed.commanded |= self.owed.paths & set(data.get("owed_commanded", ()))
        self._after_change = self._after_change or bool(self.owed.paths)
        self.unvalidated = bool(self.files) or self.unvalidated
        self.installed = True  # what was installed before the store is not known
        self.commanded = True  # nor what a command did
        self.project.unknown(self.files)  # nor what pyproject.toml said

    def on_validated(self) -> None:
        """Every change passed: the next changes get fresh baselines."""
        self.files.clear()
        self.unbaselined.clear()
        self.owed.clear()
        self.texts_before = None
        self._per_file = self._per_file_ready = None
        self.ahead.stop()  # a command's baseline still being taken is of changes validated
        self.unvalidated = False
        self.project.forget()
        self.installed = False
        self.commanded = False
        self.dependencies_installed = False
        self._environment_mark = environment_changes(self.diagnostics)
        self._release()

    def _release(self) -> None:
        """The source forgets the changes so far (which paths were files
        before them, their texts then) and closes the importers opened for
        them; opened again for a later change, they get a baseline from then."""
        source = self.diagnostics
        if isinstance(source, ReleasingDiagnostics):
            for path in source.release_opened():
                self.late.pop(path, None)

    async def before_change(self, paths: Sequence[str], workspace: Workspace) -> None:
        """See :meth:`~rein.analysis.gate.AnalyzerGate.before_change`. One
        change at a time (``changing``)."""
        async with self.changing:
            await self._before_change(paths, workspace)

    async def _before_change(self, paths: Sequence[str], workspace: Workspace) -> None:
        if (
            isinstance(paths, CommandAhead)
            and not self.files
            and not self._after_change
            and open_files_only(self.diagnostics) is None
            and settings_named(paths.command)
        ):
            # A command that may write a setting, before any change of the
            # run: the run-start snapshot first, as for a tool's change of
            # one (:mod:`rein.analysis.setting_changes`); after a change, or
            # open files only, it could not judge every file.
            await self.ready()
        cold = self.cold()
        self.commanded = self.commanded or not paths
        if not paths:
            await self.project.before_command(workspace, self.files)
        source = self.diagnostics
        if (
            self.owed.paths
            and not isinstance(paths, Writes)
            and isinstance(source, FileByFileDiagnostics)
        ):
            # A deletion, a rename or a command may take a changed file
            # away: its importers (a write's or a command's) are baselined
            # while it can still be shown.
            await self.ask_owed(self.files, workspace, source)
        opened = open_files_only(source)
        per_file = cold if cold is not None else opened
        if not paths and isinstance(per_file, FileByFileCounterfactual):
            # A command in a cold session, or where the analyzers check the
            # open files only: what it changes is judged file by file, from
            # the texts read now (cold, the snapshot comes after it).
            if self.texts_before is None:
                self.texts_before = await texts_before_a_command(per_file, self.progress)
            if self.texts_before is not None:
                self._after_change = self._after_change or cold is not None
                self._command_workspace = workspace
                self._per_file_ready = opened  # the same source (None: not open files only)
                return
        if not paths or cold is None or settings_changed(source, paths):
            # A setting the analyzers read but never open (pyproject.toml,
            # pyrightconfig.json) cannot be baselined file by file: what
            # every file was before it needs the run-start snapshot, taken
            # before the change (after it, the new setting's findings
            # were taken for the state before the run).
            await self.ready()
        if not paths:
            return
        self.unvalidated = True
        for path in paths:
            if path not in self.files:
                self.files[path] = await self._capture(path, workspace, isinstance(paths, Writes))
        if len(paths) == 2:
            old, new = paths
            if self.files[new].text == "" and self.files[new].renamed_from is None:
                self.files[new] = carried(self.files[old], new)

    def on_change(self, mutation: Mutation) -> None:
        """A command's change: where the analyzers check the open files
        only, its verdicts are file by file from now on
        (:meth:`commanded_changes`); in a cold session, its files' baseline
        is taken now, in the background
        (:meth:`~rein.analysis.command_ahead.BaselineAhead.on_change`; not
        in a warm one: it shows the analyzers the earlier texts for seconds,
        past what a navigation question of the model's next turn waits,
        review33)."""
        if mutation.origin == "external":
            self.commanded_changes([p for p in mutation.paths if p not in self.files])
        ahead = (self.changing, self.files, self.late, self.owed, self.settle_timeout_s)
        self.ahead.on_change(
            mutation,
            self.diagnostics,
            self.cold(),
            self.texts_before,
            self._command_workspace,
            *ahead,
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
        # still be corrected (before_the_run).
        cold = self.cold()
        self._after_change = self._after_change or cold is not None
        found = await capture(
            path,
            text,
            self.diagnostics,
            cold,
            self._run_start,
            self.settle_timeout_s,
            self.progress,
            importers_later=await importers_later(writes, cold, self.files, reader(workspace)),
            own_first=None
            if cold is not None
            else await own_first(self.diagnostics, writes, self.files, reader(workspace)),
        )
        for other, diagnostics in found.importers.items():
            if other not in self.files and other not in self.late:
                self.late[other] = diagnostics
        self.owed.owe([p for p in found.owed if p not in self.files and p not in self.late])
        before = await before_earlier_changes(
            path,
            text,
            path in self.owed.paths,
            self.diagnostics,
            self.files,
            self.late,
            workspace,
            self.settle_timeout_s,
            self.progress,
        )
        self.owed.discard(path)  # a changed file now, judged on its own baseline
        return found.baseline if before is None else replace(found.baseline, diagnostics=before)

    def verdict_starts(self) -> None:
        """A verdict begins: whether it judges every file against the
        run-start snapshot is decided by it (:meth:`settings_judged`)."""
        self._judged_from_start = False

    async def settings_unseen(
        self, touched: Collection[str], workspace: Workspace | None
    ) -> list[str]:
        """The settings the analyzers read that the run changed
        (:func:`~rein.analysis.setting_changes.settings_moved`), where this
        verdict did not judge every file against a run-start snapshot that
        holds each as it was before the run (:meth:`settings_judged`): the
        files judged were not all analysed before the settings changed."""
        if self._judged_from_start:
            return []
        return await settings_moved(self.diagnostics, touched, self._text_before_run, workspace)

    async def settings_judged(self, touched: Collection[str], workspace: Workspace | None) -> None:
        """Where the run changed a setting the analyzers read and the
        run-start snapshot holds every file judged as it was before the run,
        every baseline is made its entries
        (:func:`~rein.analysis.setting_changes.judged_from_run_start`)."""
        if self._whole_before_run(touched) and await settings_moved(
            self.diagnostics, touched, self._text_before_run, workspace
        ):
            judged_from_run_start(self.files, self.late, self._run_start)
            self._judged_from_start = True

    def _text_before_run(self, path: str) -> str | None:
        return self.project.text_before_run(path, self.files)

    def _whole_before_run(self, touched: Collection[str]) -> bool:
        """The run-start snapshot holds every file judged (the changed ones
        in ``touched``, a renamed one's old path, the importers) as it was
        before the run: taken before any change it judges, settled, by
        analyzers checking the whole workspace, each of those files in it
        (:class:`~rein.harness.gating.gate_types.WholeCoverage`: a file a
        command changed too, with no baseline of its own; the editor's
        diagnostics hold none)."""
        baseline = self.baseline
        if baseline is None or baseline.stale or not self._snapshot_clean:
            return False
        if self.cold() is not None or open_files_only(self.diagnostics) is not None:
            return False
        source = self.diagnostics
        if not isinstance(source, WholeCoverage):
            return True
        paths = {b.renamed_from or b.path for b in self.files.values() if b.existed}
        paths |= {p for p in touched if p not in self.files}
        return all(source.in_whole_snapshot(p) for p in [*sorted(paths), *self.late])

    def _run_start(self, path: str) -> tuple[Diagnostic, ...]:
        return tuple(self._by_path.get(self.baseline, path))

    def baseline_of(self, path: str) -> Sequence[Diagnostic]:
        """A file's diagnostics before the run: from when it was first
        analysed (``late``), else the run-start snapshot's."""
        late = self.late.get(path, self._before_run.get(path))
        return late if late is not None else self._by_path.get(self.baseline, path)

    async def ask_owed(
        self,
        touched: Collection[str],
        workspace: Workspace | None,
        cold: FileByFileDiagnostics,
        only: Collection[str] | None = None,
    ) -> dict[str, str]:
        """:meth:`OwedImporters.ask`; the caller holds ``changing``."""
        return await self.owed.ask(
            cold,
            touched,
            self.files,
            self.late,
            workspace,
            self.settle_timeout_s,
            self.progress,
            only,
        )

    async def before_the_run(self, ctx: GateContext, threshold: int) -> list[str]:
        """A run-start snapshot taken after a cold change: the baseline of
        the files with errors in it is asked for as before the run
        (:func:`~rein.analysis.cold_start.before_the_run`). Returns the files
        whose baseline is not known yet (asked again at the next verdict)."""
        if not self._after_change or self.baseline is None:
            return []
        found, self.outside, unknown = await corrected_baseline(
            self.diagnostics,
            self.baseline,
            {*self.files, *self.late, *self._before_run, *ctx.touched},
            await self.before_and_now(ctx),
            ctx,
            self.files,
            threshold,
            self.settle_timeout_s,
            self.environment_changed(),
        )
        self._before_run.update(found)
        self._after_change = bool(unknown)
        return unknown

    async def before_and_now(
        self, ctx: GateContext
    ) -> tuple[dict[str, str], dict[str, str]] | None:
        return await before_and_now(ctx.touched, self.files, ctx.workspace, self.diagnostics)
