"""Bring an isolated run back as a change of the person's session, judged
by the folder's gates.

:func:`bring_back_as_run` applies the clean hunks
(:func:`~rein.isolation.bring_back.apply_changes`: one multi-file change,
one mutation generation) inside a run of its own of the person's session:
the session's checkpoint capture records it as one checkpoint run (so
``rein undo`` or the panel's undo reverts the whole apply), and the
session's gates take each file's baseline before the change and then judge
the applied files against it (the analyzer gate, the tests gate, as
configured for the folder), exactly as they judge a run's edits. The
verdict informs: the apply is never held back or undone by it (the person
chose to apply), and nothing is repaired.

The write and what records it (the checkpoint, and ``on_applied``: the host
stores the session there, so the apply can be undone even when the gates
never finish) run inside the host's ``atomic()``: ``rein apply`` holds a
SIGTERM off it, so a stop leaves the folder as before or fully applied,
never half (:mod:`rein.headless.terminate`). The write is bounded (each
file's lock and write are).

Host-neutral: the host gives the session's workspace (the editor's, the
ACP client's buffers, the disk), its gates and its capture.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Container, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Literal

from rein.checkpoints.capture import CheckpointCapture
from rein.harness.agent import new_run_id
from rein.harness.events import Event, GateStart, RunStart
from rein.harness.gating.gates import GatePipeline
from rein.harness.ports import AnnouncingWorkspace
from rein.harness.run.run_record import RunRecord, recording
from rein.harness.run.run_validation import RunValidation
from rein.isolation.bring_back import RunChange, apply_changes
from rein.isolation.three_way import BringBack

__all__ = ["ApplyVerdict", "BroughtBack", "bring_back_as_run"]


@dataclass(frozen=True, slots=True)
class ApplyVerdict:
    """What the folder's gates said of the applied files: ``passed``,
    ``blocked`` (with the blockers, one line each) or ``unverified`` (with
    why)."""

    status: Literal["passed", "blocked", "unverified"]
    blockers: tuple[str, ...] = ()
    reason: str = ""

    def to_json(self) -> dict[str, object]:
        return {"status": self.status, "blockers": list(self.blockers), "reason": self.reason}

    def line(self) -> str:
        """The verdict in one line (then the blockers, one per line)."""
        if self.status == "blocked":
            return "\n".join(
                [f"the folder's gates: blocked ({len(self.blockers)})"]
                + [f"  {b}" for b in self.blockers]
            )
        if self.status == "unverified":
            return f"the folder's gates: unverified ({self.reason})"
        return "the folder's gates: passed"


@dataclass(slots=True)
class BroughtBack:
    """The apply (:class:`BringBack`), the run it was recorded as, and the
    gates' verdict (None when nothing was applied)."""

    result: BringBack
    run_id: str
    verdict: ApplyVerdict | None = None
    #: The session the apply was recorded in (set by the host).
    session_id: str | None = None
    events: list[Event] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        applied = bool(self.result.applied)
        return {
            **self.result.to_json(),
            "sessionId": self.session_id if applied else None,
            "runId": self.run_id if applied else None,
            "gates": self.verdict.to_json() if self.verdict is not None else None,
        }


def _place(path: str | None, line: int | None) -> str:
    if path is None:
        return ""
    return f"{path}:{line + 1}: " if line is not None else f"{path}: "


async def bring_back_as_run(
    changes: Sequence[RunChange],
    workspace: AnnouncingWorkspace,
    *,
    gates: GatePipeline | None,
    capture: CheckpointCapture | None,
    title: str,
    can_branch: bool = False,
    keep: Container[str] | None = None,
    atomic: Callable[[], AbstractContextManager[object]] = nullcontext,
    on_applied: Callable[[BroughtBack], Awaitable[None]] | None = None,
) -> BroughtBack:
    """Apply ``changes``' clean hunks (only those with an id in ``keep``,
    when given) to ``workspace`` as one change of a new run of the
    person's session (recorded by ``capture``, judged by ``gates``); see
    the module's docstring. ``on_applied`` is awaited once something was
    applied, before the gates, inside ``atomic()`` with the write."""
    run_id = new_run_id()
    out = BroughtBack(BringBack(), run_id)
    if capture is not None:
        capture.on_event(RunStart(run_id=run_id, prompt=title))
    record = RunRecord(run_id=run_id)
    record.turn = 1
    validation = RunValidation(gates, record, out.events.append)
    await validation.begin(workspace)
    try:
        with atomic():
            with recording(record):
                out.result = await apply_changes(
                    changes, workspace, can_branch=can_branch, keep=keep
                )
            if capture is not None:
                await capture.flush()
            if out.result.applied and on_applied is not None:
                await on_applied(out)
        if out.result.applied:
            out.verdict = await _judge(validation, gates, workspace, out.events)
    finally:
        validation.end()
        if capture is not None:
            await capture.flush()
    return out


async def _judge(
    validation: RunValidation,
    gates: GatePipeline | None,
    workspace: AnnouncingWorkspace,
    events: Sequence[Event],
) -> ApplyVerdict:
    if gates is None or not gates.gates:
        return ApplyVerdict("unverified", reason="no gate is configured for the folder")
    before = len(events)
    verdict = await validation.check(workspace)
    if not any(isinstance(e, GateStart) for e in events[before:]):
        # Every gate skipped itself (the dependencies gate with no manifest
        # changed, the analyzers and tests off): nothing looked.
        return ApplyVerdict("unverified", reason="no gate of the folder ran")
    if verdict.blockers:
        return ApplyVerdict(
            "blocked",
            tuple(f"{b.gate}: {_place(b.path, b.line)}{b.message}" for b in verdict.blockers),
        )
    if verdict.unverified:
        reason = "; ".join(f"{u.gate}: {u.reason}" for u in verdict.unverified)
        return ApplyVerdict("unverified", reason=reason)
    return ApplyVerdict("passed")
