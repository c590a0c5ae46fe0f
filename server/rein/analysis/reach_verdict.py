"""A cold verdict past the direct importers, file by file (issue 32 item 7).

A partial cold verdict (the changed files and their direct importers,
:mod:`rein.analysis.cold_start`) that finds no blocker is not a pass: a
break can land further on (a name re-exported, a return type used two
imports away). What the change can reach is its importers, transitively
(:mod:`rein.analysis.closure`): a file outside that closure cannot gain an
error from the run. So the rest of the closure is asked file by file, as
the direct importers are, instead of waiting for the whole-workspace
analysis:

* its files are opened and their diagnostics asked for as they are now;
* those with errors (at or above the threshold) are asked again with the
  analyzers shown every changed file as it was before the run
  (:func:`~rein.analysis.cold_start.owed_baselines`): their baseline;
  a file without errors now cannot have a new one;
* the verdict blocks on their new errors, or passes, saying how many files
  the change can reach were judged (:data:`REACHED`).

It falls back to waiting for the whole-workspace snapshot, and says why
(:func:`with_fallback`), when the closure is not known (a changed file the
import scan does not read: a setting, another language's file), when it is
past :data:`CLOSURE_BOUND` files (asking that many file by file costs more
than the workspace analysis), or when a baseline was not had (a changed
file is gone, a file imports a module the run created, no answer in time).

What the import scan cannot follow needs no fallback: a module loaded from
a string (``importlib.import_module("pkg.a")``, ``__import__``) is not
resolved by the type checker either, so no diagnostic depends on it; the
forms it does resolve (star imports, ``__init__`` re-exports, relative and
submodule imports, stubs, imports inside ``if``/``try``, a created module
met by its name, a deleted one's importers) are in the closure
(:meth:`~rein.disk.importers.ImportIndex.closure`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, replace

from rein.analysis.baselines import FileBaseline
from rein.analysis.closure import OpenFilesOnly, reach_of
from rein.analysis.cold_start import PARTIAL, owed_baselines
from rein.analysis.run_texts import analysed, reader, users_of_created
from rein.harness.gating.gate_types import (
    FileByFileCounterfactual,
    FileByFileDiagnostics,
    GateContext,
    GateOutcome,
    ProgressReporter,
)
from rein.harness.gating.waiting import reported
from rein.harness.ports import Diagnostic, DiagnosticsSnapshot, DiagnosticsSource

__all__ = [
    "CLOSURE_BOUND",
    "REACHED",
    "Reach",
    "ReachJudging",
    "judge_reach",
    "judged_to_reach",
    "not_reached",
    "open_files_only",
    "reach_file_by_file",
    "with_fallback",
]

#: The most files the change can reach that are asked file by file; past
#: it, the verdict waits for the whole-workspace analysis.
CLOSURE_BOUND = 300

#: What a verdict judged on the whole closure says (``{n}``: its size).
REACHED = (
    "judged on the {n} files the change can reach (the changed files and their "
    "importers, transitively), asked file by file: the rest of the workspace "
    "cannot have a new error from the run"
)


@dataclass(frozen=True)
class ReachJudging:
    """The gate's side of :func:`judge_reach`: its source, the changed
    files' baselines, its importers' (``late``, which the closure's join)
    and its threshold."""

    source: DiagnosticsSource
    cold: FileByFileDiagnostics
    files: Mapping[str, FileBaseline]
    late: dict[str, tuple[Diagnostic, ...]]
    threshold: int
    #: The run changed the analyzers' environment (an install): the reach
    #: is not known.
    environment_changed: bool


@dataclass(frozen=True)
class Reach:
    """The closure's files asked: their diagnostics now, the baselines of
    those with errors (they join the gate's ``late``), the closure's size."""

    snapshot: DiagnosticsSnapshot
    baselines: dict[str, tuple[Diagnostic, ...]]
    files: int


async def reach_file_by_file(
    source: DiagnosticsSource,
    cold: FileByFileDiagnostics,
    ctx: GateContext,
    judged: Collection[str],
    files: Mapping[str, FileBaseline],
    threshold: int,
    timeout_s: float,
    progress: ProgressReporter | None,
    environment_changed: bool,
) -> Reach | str:
    """The files the changes (``ctx.touched``) can reach, past those
    ``judged`` already, asked file by file now and, those with errors, as
    before the run. Returns them, or why they were not (the verdict then
    waits for the whole workspace)."""
    touched = ctx.touched
    if environment_changed:
        return (
            "what the change can reach is not known: the run changed the analyzers' "
            "environment (an install), which may break any importer of what it installed"
        )
    reach = await reach_of(source, touched, environment_changed)
    if reach is None:
        return (
            "what the change can reach is not known (a changed file the analyzers "
            "read is no Python module: a setting, another language's file; or a "
            "module imported through a folder the import scan does not follow: a "
            "stubPath, extraPaths)"
        )
    if len(reach) > CLOSURE_BOUND:
        return (
            f"the change can reach {len(reach)} files, past the {CLOSURE_BOUND} asked file by file"
        )
    if not isinstance(cold, FileByFileCounterfactual):
        return "the analyzers cannot be shown the changed files as they were"
    rest = sorted(p for p in analysed(source, reach) if p not in judged)
    empty = DiagnosticsSnapshot((), 0)
    if not rest:
        return Reach(empty, {}, len(reach))
    await cold.open_with_importers(rest)
    snap = await reported(
        cold.snapshot_files(rest, timeout_s),
        progress,
        f"the analyzers: {len(rest)} more files the change can reach",
        len(rest),
    )
    if snap.blind is not None or snap.stale:
        why = snap.blind or snap.stale_reason or "the analyzers did not answer in time"
        return f"the files the change can reach were not had: {why}"
    mine = set(rest)
    own = tuple(d for d in snap.diagnostics if d.path in mine)
    with_errors = sorted({d.path for d in own if d.severity <= threshold})
    found, unknown = await owed_baselines(
        cold,
        with_errors,
        touched,
        files,
        reader(ctx.workspace),
        lambda paths: users_of_created(touched, files, ctx.workspace, paths),
        timeout_s,
        progress,
    )
    if unknown:
        path, why = sorted(unknown.items())[0]
        return (
            f"the baseline of {len(unknown)} file(s) the change can reach was not had "
            f"({path}: {why})"
        )
    return Reach(replace(snap, diagnostics=own), found, len(reach))


async def judge_reach(
    j: ReachJudging,
    ctx: GateContext,
    partial: GateOutcome,
    judged: Collection[str],
    outcome: Callable[[DiagnosticsSnapshot], Awaitable[GateOutcome]],
    timeout_s: float,
    progress: ProgressReporter | None,
) -> GateOutcome | str:
    """``partial`` (a cold verdict on the changed files and their direct
    importers, ``judged``, without blockers) completed over the rest of
    what the changes can reach: the verdict on those files (``outcome``
    judges a snapshot), or ``partial`` saying it judged them all; else why
    it was not (the verdict then waits for the whole workspace)."""
    if partial.stale or partial.unverified is not None:
        return "the changed files and their importers were not all judged"
    reach = await reach_file_by_file(
        j.source,
        j.cold,
        ctx,
        judged,
        j.files,
        j.threshold,
        timeout_s,
        progress,
        j.environment_changed,
    )
    if isinstance(reach, str):
        return reach
    j.late.update(reach.baselines)
    found = await outcome(reach.snapshot)
    return judged_to_reach(found if found.blockers else partial, reach.files)


def judged_to_reach(outcome: GateOutcome, files: int) -> GateOutcome:
    """``outcome`` (a cold verdict) saying it judged the whole closure of
    ``files`` files rather than being partial."""
    reached = REACHED.format(n=files)
    detail = outcome.detail.replace(PARTIAL, reached)
    if reached not in detail:
        detail = f"{detail}; {reached}"
    return replace(outcome, detail=detail)


def open_files_only(source: DiagnosticsSource) -> FileByFileDiagnostics | None:
    """``source``, when its analyzers check only the files opened for the
    changes and it can be asked file by file: a verdict's files past the
    importers opened are nobody's unless :func:`judge_reach` asks them."""
    if (
        isinstance(source, OpenFilesOnly)
        and source.analyses_open_files_only()
        and isinstance(source, FileByFileDiagnostics)
        and source.answers_per_file()
    ):
        return source
    return None


def not_reached(outcome: GateOutcome, why: str) -> GateOutcome:
    """``outcome`` (open files only, without blockers) unverified: the files
    the change can reach past the importers opened were checked by nobody
    (never a pass without looking), and why."""
    note = f"files the change can reach past the importers opened were not checked: {why}"
    unverified = note if outcome.unverified is None else f"{outcome.unverified}; {note}"
    return replace(outcome, detail=f"{outcome.detail}; {note}", unverified=unverified)


def with_fallback(outcome: GateOutcome, why: str | None) -> GateOutcome:
    """``outcome`` (judged on the whole workspace) saying why the change's
    reach was not judged file by file (``why``; None: it was not tried)."""
    if why is None:
        return outcome
    note = f"waited for the whole-workspace analysis: {why}"
    return replace(outcome, detail=f"{outcome.detail}; {note}")
