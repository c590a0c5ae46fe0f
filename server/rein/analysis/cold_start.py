"""A cold session's first changes, judged file by file.

The analyzer gate's run-start snapshot is the whole workspace's
diagnostics: on a cold start basedpyright analyses every file before it
says it is done, which takes many times the command line's check of the
changed files and their importers. A change that comes before that
snapshot is complete does not wait for it when the source can be asked
file by file (:class:`~rein.harness.gating.gate_types.FileByFileDiagnostics`):

* its baseline is taken as in a workspace analysed file by file: before
  the change, the file and its importers are opened and their diagnostics
  asked for (the file's own baseline; the importers' join ``late``, the
  gate's baseline of files first analysed after the run started);
* the verdict asks for the changed files' and those importers' diagnostics
  afresh and judges them only; it says it is partial (the rest of the
  workspace was not looked at yet), as a verdict of a workspace analysed
  file by file looks no further than the importers either;
* the whole-workspace snapshot goes on in the background and serves the
  verdicts after it completes (the files baselined here keep their own
  baselines: it was taken after their change); where the analyzers check
  the open files only and a command changed files, the verdicts stay file
  by file until validated (the snapshot holds the same files:
  :meth:`~rein.analysis.run_baselines.RunBaselines.per_file`).
* A written file's importers (a write can be shown to the analyzers as it
  was, a deletion cannot) are opened, not asked, before the write: their
  answers queue behind the workspace analysis, and a verdict that blocks
  on the file's own new errors never looks at them. That verdict asks for
  the changed files first and blocks at once, naming the importers not
  checked yet (:func:`changed_files_first`); one that does not block asks
  the importers with the analyzers shown the changed files as they were
  (their baseline, :func:`owed_baselines`), then as they are; one whose
  baseline is not had stays owed and the verdict is unverified, never a
  pass. A deletion's or a rename's importers, and a command's, are asked
  before the change as before, and with the changed files at the verdict;
  so are a write's once a file the run changed is gone (:func:`gone_files`:
  the state before the run could not be shown).
* A partial verdict that finds no blocker is not a pass: what the change
  broke past the direct importers (a name re-exported, used two imports
  away) is known from the whole-workspace snapshot only. The verdict waits
  for it (reported, bounded by the settle timeout) and judges with it; past
  the bound it is "unverified", naming what was not checked
  (:func:`not_past_the_importers`).
* That snapshot was taken with the change in place: an error the change
  caused past its importers (a name an importer re-exported, used further
  on) is in it. So the other files with errors in it get their baseline
  from the analyzers shown the changed files as they were before the run
  (:func:`before_the_run`, the counterfactual's mechanism); until that is
  had (a file the run deleted or renamed away cannot be shown: the
  analyzers resolve imports from the disk), their errors are not judged
  and the verdicts say which files were not checked. Only the files the
  changes can reach (their importers, transitively,
  :mod:`rein.analysis.closure`) are asked so: a file out of reach cannot
  have a new error from the run, its errors are pre-existing as they are.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence

from rein.analysis.baselines import FileBaseline
from rein.analysis.closure import reach_of
from rein.analysis.command_baselines import with_tools_changes
from rein.analysis.run_texts import users_of_created
from rein.harness.gating.gate_types import (
    FileByFileCounterfactual,
    FileByFileDiagnostics,
    GateContext,
    GateOutcome,
    ProgressReporter,
)
from rein.harness.gating.waiting import reported
from rein.harness.ports import (
    CounterfactualDiagnostics,
    Diagnostic,
    DiagnosticsSnapshot,
    DiagnosticsSource,
)

__all__ = [
    "PARTIAL",
    "WHOLE_WORKSPACE",
    "before_the_run",
    "changed_files_first",
    "cold_source",
    "corrected_baseline",
    "file_baseline",
    "gone_files",
    "importers_later",
    "not_past_the_importers",
    "owed_baselines",
    "taken_in_time",
    "verdict_snapshot",
]

#: What a cold verdict's detail says.
PARTIAL = (
    "partial: judged on the changed files and their importers (the workspace "
    "analysis had not finished or was deferred, or the analyzers check the open "
    "files only; a verdict without blockers looks further)"
)
#: What a partial verdict that found no blocker waits for.
WHOLE_WORKSPACE = "the analyzers: the whole workspace, past the changed files' importers"


def cold_source(
    source: DiagnosticsSource, taking: asyncio.Task[None] | None
) -> FileByFileDiagnostics | None:
    """The source to ask file by file while the run-start snapshot is still
    being taken; None when it is taken (or the source cannot be asked so)."""
    if taking is None or taking.done():
        return None
    if isinstance(source, FileByFileDiagnostics) and source.answers_per_file():
        return source
    return None


async def file_baseline(
    cold: FileByFileDiagnostics,
    path: str,
    timeout_s: float,
    progress: ProgressReporter | None,
    *,
    importers_later: bool = False,
) -> tuple[DiagnosticsSnapshot, list[str]]:
    """``path`` and its importers opened and analysed before the change:
    their snapshot (stale when an analyzer did not answer in time) and the
    importers. ``importers_later``: ``path`` alone is analysed (a write,
    which the analyzers can be shown as it was: its importers' baseline is
    asked at the verdict that needs it, :func:`owed_baselines`)."""
    importers = [p for p in await cold.open_with_importers([path]) if p != path]
    asked = [path] if importers_later else [path, *importers]
    snap = await reported(
        cold.snapshot_files(asked, timeout_s),
        progress,
        f"the analyzers: {path} before its first change"
        if importers_later
        else f"the analyzers: {path} and its importers before its first change",
        len(asked),
    )
    return snap, importers


async def gone_files(
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    now: Callable[[str], Awaitable[str | None]],
) -> list[str]:
    """The changed files that existed before the run and are gone now: they
    cannot be shown to the analyzers as they were (imports are resolved
    from the disk)."""
    return [
        p for p in touched if (b := files.get(p)) and b.text_before_the_run and await now(p) is None
    ]


async def importers_later(
    writes: bool,
    cold: FileByFileDiagnostics | None,
    files: Mapping[str, FileBaseline],
    now: Callable[[str], Awaitable[str | None]],
) -> bool:
    """Whether a change's importers are baselined at the verdict that needs
    them (:func:`owed_baselines`) rather than before it: a cold write's,
    while no file the run changed is gone (else the state before the run
    cannot be shown to the analyzers)."""
    return (
        writes
        and isinstance(cold, FileByFileCounterfactual)
        and not await gone_files(files, files, now)
    )


async def owed_baselines(
    cold: FileByFileDiagnostics,
    owed: Collection[str],
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    now: Callable[[str], Awaitable[str | None]],
    created_users: Callable[[Sequence[str]], Awaitable[Collection[str]]],
    timeout_s: float,
    progress: ProgressReporter | None,
) -> tuple[dict[str, tuple[Diagnostic, ...]], dict[str, str]]:
    """The diagnostics before the run of the importers of written files
    whose baseline was not taken before the write (``owed``,
    :func:`file_baseline`'s ``importers_later``): asked with the analyzers
    shown every changed file as it was before the run. Returns them, and
    the importers whose baseline was not had this time, each with why (a
    changed file is gone, which cannot be shown; it imports a module the
    run created, ``created_users``; no answer in time): they stay owed,
    are not judged, and make the verdict unverified (never a pass)."""
    paths = sorted(set(owed) - set(touched))
    if not paths:
        return {}, {}
    if await gone_files(touched, files, now):
        why = "a changed file is gone: the analyzers cannot be shown it as it was"
        return {}, dict.fromkeys(paths, why)
    if not isinstance(cold, FileByFileCounterfactual):
        return {}, dict.fromkeys(paths, "the analyzers cannot be shown the files as they were")
    unknown = dict.fromkeys(
        await created_users(paths), "they import a module the run created (it cannot be shown away)"
    )
    asked = [p for p in paths if p not in unknown]
    if not asked:
        return {}, unknown
    shown = await with_tools_changes({}, touched, files, now)
    snap = await reported(
        cold.snapshot_files_with(shown, asked, timeout_s),
        progress,
        "the analyzers: the changed files' importers as before the change",
        len(asked),
    )
    if snap.blind is not None or snap.stale:
        why = (
            f"nobody looked: {snap.blind}"
            if snap.blind is not None
            else snap.stale_reason or "the analyzers did not answer in time"
        )
        return {}, {**unknown, **dict.fromkeys(asked, why)}
    return {p: tuple(d for d in snap.diagnostics if d.path == p) for p in asked}, unknown


async def verdict_snapshot(
    cold: FileByFileDiagnostics,
    touched: Collection[str],
    importers: Collection[str],
    timeout_s: float,
    progress: ProgressReporter | None,
) -> DiagnosticsSnapshot:
    """The changed files' and their importers' diagnostics, asked for
    afresh (stale when an analyzer did not answer in time)."""
    paths = sorted({*touched, *importers})
    return await reported(
        cold.snapshot_files(paths, timeout_s),
        progress,
        "the analyzers: the changed files and their importers",
        len(paths),
    )


async def changed_files_first(
    cold: FileByFileDiagnostics,
    touched: Collection[str],
    timeout_s: float,
    progress: ProgressReporter | None,
) -> DiagnosticsSnapshot:
    """The changed files' own diagnostics, asked for before their
    importers': a verdict that blocks on the changed files' own new errors
    need not ask the importers, whose answers queue behind the workspace
    analysis (issue 32 item 7). Such a verdict says which importers it did
    not check; the next verdict asks them, and a pass always needs them
    all."""
    paths = sorted(touched)
    return await reported(
        cold.snapshot_files(paths, timeout_s),
        progress,
        "the analyzers: the changed files",
        len(paths),
    )


async def before_the_run(
    source: DiagnosticsSource,
    snapshot: DiagnosticsSnapshot,
    baselined: Collection[str],
    texts: tuple[Mapping[str, str], Mapping[str, str]] | None,
    threshold: int,
    timeout_s: float,
    unshowable: Callable[[Sequence[str]], Awaitable[Collection[str]]] | None = None,
    reach: Collection[str] | None = None,
) -> tuple[dict[str, tuple[Diagnostic, ...]], list[str]]:
    """The baseline, from before the run, of the files with errors (at or
    above ``threshold``) in ``snapshot`` (taken after a change) that are not
    ``baselined`` already: their diagnostics with the analyzers shown each
    changed file's text before the run (``texts``: before and now, "" for a
    file that does not exist). Returns it, or the files whose baseline
    could not be had (not every prior text is known, a changed file is gone,
    the analyzers did not answer in time), with the files ``unshowable``
    says cannot be asked so (they import a module the run created: it
    cannot be shown away, :func:`~rein.analysis.run_texts.users_of_created`).
    A file outside ``reach`` (what the changes can reach,
    :mod:`rein.analysis.closure`; None: not known) is not asked: its
    diagnostics in ``snapshot`` are its baseline."""
    paths = sorted(
        {d.path for d in snapshot.diagnostics if d.severity <= threshold} - set(baselined)
    )
    if reach is None:
        return await _as_before_the_run(source, snapshot, paths, texts, timeout_s, unshowable)
    outside = {p: tuple(d for d in snapshot.diagnostics if d.path == p) for p in paths}
    inside = [p for p in paths if p in reach]
    for p in inside:
        del outside[p]
    found, unknown = await _as_before_the_run(
        source, snapshot, inside, texts, timeout_s, unshowable
    )
    return {**outside, **found}, unknown


async def corrected_baseline(
    source: DiagnosticsSource,
    snapshot: DiagnosticsSnapshot,
    baselined: Collection[str],
    texts: tuple[Mapping[str, str], Mapping[str, str]] | None,
    ctx: GateContext,
    files: Mapping[str, FileBaseline],
    threshold: int,
    timeout_s: float,
    environment_changed: bool,
) -> tuple[dict[str, tuple[Diagnostic, ...]], list[str], list[str]]:
    """:func:`before_the_run` for the run-start snapshot taken after a cold
    change, narrowed to what the changes can reach: the baselines had, the
    files among them out of reach (judged pre-existing as they are), and
    the files whose baseline is not known yet. Once the run changed the
    analyzers' environment (``environment_changed``: an install), the
    environment before it cannot be shown: a file with errors in the
    snapshot gets no baseline, and its errors are kept (as for a setting
    the run changed, :func:`~rein.analysis.counterfactual.not_the_runs`)."""
    if environment_changed:
        kept = {d.path for d in snapshot.diagnostics if d.severity <= threshold}
        return {p: () for p in sorted(kept - set(baselined))}, [], []
    found, unknown = await before_the_run(
        source,
        snapshot,
        baselined,
        texts,
        threshold,
        timeout_s,
        lambda paths: users_of_created(ctx.touched, files, ctx.workspace, paths),
        reach := await reach_of(source, ctx.touched, environment_changed),
    )
    outside = sorted(p for p in found if reach is not None and p not in reach)
    return found, outside, unknown


async def _as_before_the_run(
    source: DiagnosticsSource,
    snapshot: DiagnosticsSnapshot,
    paths: Sequence[str],
    texts: tuple[Mapping[str, str], Mapping[str, str]] | None,
    timeout_s: float,
    unshowable: Callable[[Sequence[str]], Awaitable[Collection[str]]] | None,
) -> tuple[dict[str, tuple[Diagnostic, ...]], list[str]]:
    """:func:`before_the_run` for ``paths``."""
    if not paths:
        return {}, []
    if texts is None or not isinstance(source, CounterfactualDiagnostics):
        return {}, list(paths)
    before, now = texts
    if any(before[p] and not now[p] for p in before):
        return {}, list(paths)  # a file the run deleted cannot be shown
    unknown = set(await unshowable(paths)) if unshowable is not None else set()
    asked = [p for p in paths if p not in unknown]
    shown = {p: was for p, was in before.items() if was != now[p]}
    if not shown:  # no analysed file's text changed: the snapshot is as before
        found = {p: tuple(d for d in snapshot.diagnostics if d.path == p) for p in asked}
        return found, sorted(unknown)
    if not asked:
        return {}, list(paths)
    snap = await source.snapshot_with(shown, asked, timeout_s)
    if snap is None or snap.blind is not None or snap.stale:
        return {}, list(paths)
    found = {p: tuple(d for d in snap.diagnostics if d.path == p) for p in asked}
    return found, sorted(unknown)


async def taken_in_time(
    taking: asyncio.Task[None] | None, timeout_s: float, progress: ProgressReporter | None
) -> bool:
    """Wait for the run-start snapshot being taken (``taking``), bounded by
    ``timeout_s`` and reported; False when it was not taken in time (it goes
    on: a later verdict may have it)."""
    if taking is None:
        return True
    await reported(asyncio.wait({taking}, timeout=timeout_s), progress, WHOLE_WORKSPACE)
    return taking.done()


def not_past_the_importers(partial: GateOutcome, timeout_s: float) -> GateOutcome:
    """A partial verdict without blockers whose whole-workspace snapshot was
    not taken within ``timeout_s``: unverified, naming what was not checked."""
    why = (
        "partial: only the changed files and their direct importers were checked; "
        "files that use the changes through those importers were not (the workspace "
        f"analysis did not finish within the settle bound, {timeout_s:g} s)"
    )
    unverified = why if partial.unverified is None else f"{partial.unverified}; {why}"
    return GateOutcome([], partial.stale, f"{partial.detail}; {why}", unverified=unverified)
