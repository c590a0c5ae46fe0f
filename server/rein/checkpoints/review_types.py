"""The values of a review (:mod:`rein.checkpoints.review`): reviewed files and
hunks, decisions and refusals, a file's status from its hunks', and the
note the transcript gets after an undo."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rein.checkpoints.hunks import Hunk
from rein.checkpoints.model import HunkStatus, ReviewStatus

__all__ = [
    "PERSON_CHANGED",
    "ChangeKind",
    "DecideResult",
    "Decided",
    "Decision",
    "Refused",
    "ReviewedFile",
    "ReviewedHunk",
    "file_status",
    "review_note",
]

Decision = Literal["keep", "undo"]
ChangeKind = Literal["created", "modified", "deleted", "renamed"]

#: What a refused hunk undo says.
PERSON_CHANGED = "the person changed this region since the run (or a later run did)"


@dataclass(frozen=True, slots=True)
class ReviewedHunk:
    hunk: Hunk
    status: HunkStatus


@dataclass(frozen=True, slots=True)
class ReviewedFile:
    """A run's net change to one path, as the person reviews it."""

    path: str
    change: ChangeKind
    status: ReviewStatus
    hunks: tuple[ReviewedHunk, ...]
    #: Unified diff of before -> after ("" when a side was not stored).
    diff: str
    #: Why it cannot be undone ("" when it can).
    reason: str
    before_text: str | None
    after_text: str | None
    #: Created (renamed onto a new path) or deleted: its one hunk is the
    #: whole file, undone by deleting or recreating it.
    whole: bool = False
    renamed_from: str | None = None
    #: A secret file's: its texts are kept apart
    #: (:meth:`~rein.checkpoints.model.CheckpointStore.put_secret`).
    secret: bool = False


@dataclass(frozen=True, slots=True)
class Decided:
    path: str
    hunk: int | None
    status: ReviewStatus


@dataclass(frozen=True, slots=True)
class Refused:
    path: str
    hunk: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class DecideResult:
    run_id: str
    decision: Decision
    decided: tuple[Decided, ...]
    refused: tuple[Refused, ...]
    #: The restore-kind checkpoint run that recorded the undo (None when
    #: nothing was written).
    restore_id: str | None = None


def file_status(statuses: list[HunkStatus]) -> ReviewStatus:
    """A file's status from its hunks' (see the module docstring)."""
    if not statuses or "pending" in statuses:
        return "pending"
    if all(s == "kept" for s in statuses):
        return "kept"
    if all(s == "undone" for s in statuses):
        return "undone"
    return "mixed"


def review_note(result: DecideResult) -> str | None:
    """The message the session's transcript gets after an undo, so the next
    model turn knows its changes were taken back; None when nothing was
    undone."""
    if result.decision != "undo" or not result.decided:
        return None
    undone = [f"{d.path} (hunk {d.hunk})" if d.hunk is not None else d.path for d in result.decided]
    lines = [
        f"[Rein] The person reviewed the changes of run {result.run_id} and undid: "
        + ", ".join(undone)
        + "."
    ]
    if result.refused:
        lines.append(
            "Not undone (the person changed them since): "
            + ", ".join(r.path for r in result.refused)
            + "."
        )
    lines.append("Read these files again before you change them.")
    return "\n".join(lines)
