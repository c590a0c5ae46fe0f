"""The events of the gates around a run: a gate's start, its result and
its blockers (or why it could not look: :class:`Unverified`), its waits,
the changes an earlier run left unvalidated, and each repair attempt. They
are members of the one closed union :data:`rein.harness.events.Event`
(import them from there); this module only keeps them apart from the run's
own events."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rein.harness._event_base import EVENT_CONFIG, _Event

__all__ = [
    "Blocker",
    "CarriedChanges",
    "GateResult",
    "GateStart",
    "GateStatus",
    "GateWaiting",
    "RepairAttempt",
    "Unverified",
]


class Unverified(BaseModel):
    """A gate that could not look: the generation it was asked about is not
    validated (no analyzer, a client without diagnostics, a stale answer)."""

    model_config = EVENT_CONFIG

    gate: str
    generation: int
    reason: str


class Blocker(BaseModel):
    """One problem a gate found that the model must fix."""

    model_config = EVENT_CONFIG

    gate: str
    message: str
    path: str | None = None
    #: 0-based, as in LSP.
    line: int | None = None
    character: int | None = None
    severity: int | None = None
    code: str | None = None
    source: str | None = None
    #: A few lines of surrounding code, or a command's output tail.
    context: str | None = None
    #: The same error in other analyzers' words ("basedpyright
    #: reportUndefinedVariable: ..."): one blocker however many saw it.
    also: list[str] = Field(default_factory=list)


class GateStart(_Event):
    type: Literal["gate_start"] = "gate_start"
    gate: str
    generation: int


#: ``passed``: the gate looked and found nothing; ``blocked``: it found
#: blockers; ``unverified``: it could not look (never counted as passed).
GateStatus = Literal["passed", "blocked", "unverified"]


class GateResult(_Event):
    """One gate's verdict on a generation. ``detail`` says what it looked
    at; an ``unverified`` result's detail starts with why it could not look
    (the tests runner was not found, the analyzers did not answer)."""

    type: Literal["gate_result"] = "gate_result"
    gate: str
    #: True only for status "passed" (kept for older clients).
    passed: bool
    status: GateStatus = "passed"
    blockers: list[Blocker] = Field(default_factory=list)
    duration_ms: float = 0.0
    #: The diagnostics may be older than the generation (the wait was bounded).
    stale: bool = False
    detail: str = ""


class GateWaiting(_Event):
    """A gate has waited on something (the analyzers) for more than a
    second: ``begin`` then, ``end`` when the wait is over. Front-ends show
    it (``rein run`` a line on stderr, the editor a ``$/progress``, ACP a
    notice), so that no wait is silent."""

    type: Literal["gate_waiting"] = "gate_waiting"
    gate: str
    phase: Literal["begin", "end"]
    #: What it waits for ("the analyzers: the workspace baseline").
    message: str
    #: How many files the wait is for, when known.
    files: int | None = None


class CarriedChanges(_Event):
    """The run starts with changes an earlier run of the session left
    unvalidated (its repair budget ran out, it was aborted): this run
    validates them before it can complete."""

    type: Literal["carried_changes"] = "carried_changes"
    generations: list[int]
    paths: list[str]


class RepairAttempt(_Event):
    type: Literal["repair_attempt"] = "repair_attempt"
    attempt: int
    max_attempts: int
    blockers: list[Blocker] = Field(default_factory=list)
