"""What an analyzer verdict says: its blockers, as the model and the
front-ends see them (one per error however many analyzers saw it, the first
few with their code around them), and its detail and "unverified" reason,
which grow by one clause per thing the verdict could not look at
(:func:`not_checked`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rein.analysis.cold_start import PARTIAL
from rein.analysis.reach import describe
from rein.harness.events import Blocker
from rein.harness.gating.gate_types import MAX_BLOCKERS_IN_PROMPT, code_context
from rein.harness.ports import Diagnostic, DiagnosticsSnapshot, Workspace

__all__ = [
    "VerdictText",
    "blockers_of",
    "importers_not_baselined",
    "importers_owed",
    "not_checked",
    "stale_reason",
]


def _describe(d: Diagnostic) -> str:
    code = f" {d.code}" if d.code else ""
    return f"{d.source or 'analyzer'}{code}: {d.message}"


async def blockers_of(
    gate: str,
    groups: Sequence[tuple[Diagnostic, Sequence[Diagnostic]]],
    workspace: Workspace | None,
) -> list[Blocker]:
    """One blocker per group (an error and the same error in other
    analyzers' words), in order; only the first few, which the prompt
    shows in full, get their code context."""
    return [
        Blocker(
            gate=gate,
            path=d.path,
            line=d.line,
            character=d.character,
            severity=d.severity,
            code=d.code,
            source=", ".join([d.source or "analyzer", *(o.source or "analyzer" for o in others)]),
            message=d.message,
            context=await code_context(workspace, d.path, d.line)
            if index < MAX_BLOCKERS_IN_PROMPT
            else None,
            also=[_describe(o) for o in others],
        )
        for index, (d, others) in enumerate(groups)
    ]


def stale_reason(snap: DiagnosticsSnapshot, settled: bool) -> str:
    """Why a stale verdict's diagnostics may be out of date."""
    if snap.stale_reason is not None:
        return snap.stale_reason
    if snap.stale:
        return "the analyzers did not answer in time"
    return "the analyzers did not finish within the settle bound"


class VerdictText:
    """A verdict's detail, and its "unverified" reason (None: it looked at
    everything it was asked to)."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        self.unverified: str | None = None

    @classmethod
    def of(
        cls,
        *,
        serious: int,
        blocking: int,
        importers: int,
        partial: bool,
        without_run: int,
        sources: Sequence[str],
    ) -> VerdictText:
        """A verdict's opening: how many errors were at or above the
        threshold (``serious``) and how many of them block, how many
        importers of the changed files were checked, whether it is
        ``partial`` (cold: the changed files and their importers only), how
        many errors are there ``without_run`` (not blocking), and from
        which analyzers."""
        text = cls(f"{serious} diagnostics at or above the threshold, {blocking} blocking")
        if importers:
            text.note(f"{importers} importer(s) of the changed files checked")
        if partial:
            text.note(PARTIAL)
        if without_run:
            text.note(
                f"{without_run} error(s) in unchanged files are there without the "
                "run's changes too, or not reported when asked again: not blocking"
            )
        if sources:
            text.detail += f" (from {', '.join(sources)})"
        return text

    def note(self, clause: str) -> None:
        """A clause of the detail only."""
        self.detail += f"; {clause}"

    def not_checked(self, clause: str, why: str | None = None) -> None:
        """A clause of the detail whose reason (``why``, else the clause)
        makes the verdict unverified."""
        self.note(clause)
        why = clause if why is None else why
        self.unverified = why if self.unverified is None else f"{self.unverified}; {why}"


def not_checked(
    text: VerdictText,
    importers_left: tuple[str, str | None] | None,
    unsure: Sequence[str],
    nobody: str,
    snap: DiagnosticsSnapshot,
    settled: bool,
) -> None:
    """The clauses of what the verdict did not look at: importers left past
    the source's bound (``importers_left``: the clause, and why it makes the
    verdict unverified, None when no public name changed, so it may pass),
    files with errors whose state before the run is not known
    (``unsure``), changed files no analyzer covers (``nobody``: described,
    with why when the source says: :func:`~rein.analysis.reach.
    why_not_analysed`), and
    diagnostics that may be stale (``snap`` stale, or not ``settled``)."""
    if importers_left is not None:
        clause, why_left = importers_left
        if why_left is None:
            text.note(clause)  # no public name changed: it may pass
        else:
            text.not_checked(clause, why_left)
    if unsure:
        text.not_checked(
            f"partial: {len(unsure)} file(s) with errors not checked (the workspace "
            f"baseline was taken after the change, the state before it not known): "
            f"{describe(unsure)}"
        )
    if nobody:
        text.not_checked(f"changed files no analyzer covers were not analysed: {nobody}")
    if snap.stale or not settled:
        why = stale_reason(snap, settled)
        text.not_checked(f"diagnostics may be stale ({why})", f"diagnostics may be stale: {why}")


def importers_owed(text: VerdictText, importers: Sequence[str]) -> None:
    """The clause of a verdict that blocked on the changed files' own errors
    before their ``importers`` were asked (a cold session's,
    :func:`~rein.analysis.cold_start.changed_files_first`): not checked yet,
    asked by the first verdict that does not block on those errors."""
    if importers:
        text.not_checked(
            f"partial: blocked on the changed files' own errors; {len(importers)} "
            f"importer(s) of them not checked yet, checked once those errors are "
            f"fixed: {describe(importers)}"
        )


def importers_not_baselined(text: VerdictText, not_had: Mapping[str, str]) -> None:
    """The clauses of a verdict whose owed importers' baseline was asked and
    not had (``not_had``: each with why, :func:`~rein.analysis.cold_start.
    owed_baselines`): they are not judged, the verdict is unverified
    whatever changed, and the next verdict asks again."""
    by_why: dict[str, list[str]] = {}
    for path, why in sorted(not_had.items()):
        by_why.setdefault(why, []).append(path)
    for why, paths in by_why.items():
        text.not_checked(
            f"partial: {len(paths)} importer(s) of the changed files not checked: "
            f"their state before the run could not be had ({why}); asked again at "
            f"the next verdict: {describe(paths)}",
            f"{len(paths)} importer(s) of the changed files not checked ({why}): {describe(paths)}",
        )
