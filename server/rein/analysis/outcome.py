"""The analyzer gate's verdict on one snapshot.

Given the diagnostics the analyzers gave for the changes (the whole
workspace's, or the changed files' and their importers' asked file by
file), the verdict is what blocks (:mod:`rein.analysis.blocking`: new
relative to each file's baseline; in unchanged files, asked again without
the run's changes when the snapshot is the whole workspace's,
:mod:`rein.analysis.counterfactual`), cause first
(:mod:`rein.analysis.blocker_order`), and a text that says what was
looked at and what was not (:mod:`rein.analysis.verdict_text`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from rein.analysis.baselines import FileBaseline, merge_same_errors
from rein.analysis.blocker_order import by_cause
from rein.analysis.blocking import blocking_in_snapshot, without_own_baseline
from rein.analysis.counterfactual import not_the_runs
from rein.analysis.reach import importers_not_checked, not_analysed, why_not_analysed
from rein.analysis.run_texts import unread_by
from rein.analysis.verdict_text import (
    VerdictText,
    blockers_of,
    importers_not_baselined,
    importers_owed,
    not_checked,
)
from rein.harness.gating.gate_types import GateContext, GateOutcome
from rein.harness.ports import Diagnostic, DiagnosticsSnapshot, DiagnosticsSource

__all__ = ["Judging", "outcome_of"]


@dataclass(frozen=True)
class Judging:
    """What a verdict is judged against: the gate's baselines."""

    gate: str
    threshold: int
    diagnostics: DiagnosticsSource
    files: Mapping[str, FileBaseline]
    #: The run-start snapshot (None: not taken).
    baseline: DiagnosticsSnapshot | None
    #: A file's diagnostics before the run.
    baseline_of: Callable[[str], Sequence[Diagnostic]]
    #: The importers baselined so far (counted in the detail).
    importers: Collection[str]
    settle_timeout_s: float
    #: The changed files' texts before the run and now (None: not known).
    before_and_now: Callable[[], Awaitable[tuple[dict[str, str], dict[str, str]] | None]]
    #: The analyzers' environment changed since the baselines were taken
    #: (an install): it cannot be shown as it was.
    environment_changed: bool
    #: A verdict asked file by file where the analyzers check the open files
    #: only (the counterfactual question is asked there too, file by file,
    #: with no wait for the whole workspace): the importers asked as they
    #: were in this verdict, after the as-is question, which it does not ask
    #: again. None: a partial verdict asks no counterfactual question.
    asked_after: Collection[str] | None = None


async def outcome_of(
    judging: Judging,
    ctx: GateContext,
    snap: DiagnosticsSnapshot,
    settled: bool,
    partial: bool,
    unbaselined: set[str],
    unsure: list[str],
    owed: Collection[str] = (),
    not_had: Mapping[str, str] | None = None,
) -> GateOutcome:
    """The verdict on ``snap`` (``partial``: cold, no counterfactual);
    ``owed``: importers not asked yet (:func:`~rein.analysis.cold_start.
    changed_files_first`), named not checked; ``not_had``: owed importers
    whose baseline was asked and not had (with why), which make it
    unverified."""
    j = judging
    if snap.blind is not None:
        if ctx.touched and all(unread_by(j.diagnostics, p) for p in ctx.touched):
            # Prose, data: nothing an analyzer would have read (review31:
            # notes.txt in a folder of no language was "unverified", and
            # rein run exited 5, where a README in a Python project passed).
            return GateOutcome(
                detail=f"nothing an analyzer reads changed ({', '.join(sorted(ctx.touched)[:5])}); "
                f"none runs here: {snap.blind}"
            )
        return GateOutcome(
            detail=f"nobody looked: {snap.blind}",
            unverified=f"no diagnostics: {snap.blind}",
        )
    serious = [d for d in snap.diagnostics if d.severity <= j.threshold]
    blocking = await blocking_in_snapshot(
        serious,
        ctx.touched,
        {*unbaselined, *unsure},
        j.baseline_of,
        lambda p: j.files.get(p) or without_own_baseline(p, ctx.first_change.get(p), j.baseline),
        ctx.workspace,
    )
    # The counterfactual question waits for the whole workspace: not asked
    # cold, but where the open files only are analysed (asked file by file).
    # There an importer's baseline taken before this verdict was asked before
    # its as-is question: basedpyright's order of inference can leave errors
    # out of it that the same question asked after has (review33).
    blocking, without_run = (
        await not_the_runs(
            j.diagnostics,
            blocking,
            ctx.touched,
            j.files,
            ctx.workspace,
            j.settle_timeout_s,
            j.environment_changed,
            j.asked_after or (),
            serious,
        )
        if not partial or j.asked_after is not None
        else (blocking, 0)
    )
    groups = by_cause(merge_same_errors(blocking), ctx.touched)
    blockers = await blockers_of(j.gate, groups, ctx.workspace)
    owed_left = sorted(set(owed) - ctx.touched)
    text = VerdictText.of(
        serious=len(serious),
        blocking=len(groups),
        importers=len(set(j.importers) - set(owed)),
        partial=partial and not owed_left and not not_had,  # else the clauses say how
        without_run=without_run,
        sources=snap.sources,
    )
    left = await importers_not_checked(j.diagnostics, unbaselined, ctx.touched, j.before_and_now)
    stale = snap.stale or not settled
    nobody = not_analysed(j.diagnostics, ctx.touched)
    nobody_text = why_not_analysed(j.diagnostics, nobody) if nobody else ""
    not_checked(text, left, unsure, nobody_text, snap, settled)
    importers_owed(text, owed_left)
    importers_not_baselined(text, not_had or {})
    return GateOutcome(blockers, stale, text.detail, unverified=text.unverified)
