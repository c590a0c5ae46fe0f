"""What an analyzer verdict says: its blockers, as the model and the
front-ends see them (one per error however many analyzers saw it, the first
few with their code around them), and its detail and "unverified" reason,
which grow by one clause per thing the verdict could not look at."""

from __future__ import annotations

from collections.abc import Sequence

from rein.harness.events import Blocker
from rein.harness.gating.gate_types import MAX_BLOCKERS_IN_PROMPT, code_context
from rein.harness.ports import Diagnostic, DiagnosticsSnapshot, Workspace

__all__ = ["VerdictText", "blockers_of", "stale_reason"]


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

    def note(self, clause: str) -> None:
        """A clause of the detail only."""
        self.detail += f"; {clause}"

    def not_checked(self, clause: str, why: str | None = None) -> None:
        """A clause of the detail whose reason (``why``, else the clause)
        makes the verdict unverified."""
        self.note(clause)
        why = clause if why is None else why
        self.unverified = why if self.unverified is None else f"{self.unverified}; {why}"
