"""Reviews in a live session and on the wire: a decision refused while the
session runs (an undo writes files), the transcript's note after an undo,
and the ``rein/review`` and ``rein/reviewDecide`` results (camelCase), from
:mod:`rein.checkpoints.review`. Host-neutral: the language server uses them,
and any other host can."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rein.checkpoints.model import ReviewStatus
from rein.checkpoints.review import DecideResult, Decision, ReviewedFile, review_note
from rein.harness.errors import StoreError
from rein.harness.messages import UserMessage
from rein.session.restoring import add_note, writing_files
from rein.session.session import Session

__all__ = ["decide_in_session", "decide_json", "mark_pending", "review_json"]


async def decide_in_session(
    session: Session,
    run_id: str,
    decision: Decision,
    path: str | None = None,
    hunk: int | None = None,
    *,
    in_use: bool = False,
) -> DecideResult:
    """Keep or undo through the session's reviewer. An undo writes files:
    refused (BusyError, nothing changed) while a run or a restore is
    active or a prompt is starting (``in_use``), and while it writes no run
    starts; the transcript then gets a note saying what was undone."""
    reviewer = session.reviewer
    if reviewer is None:
        raise ValueError(f"session {session.id} keeps no checkpoints")
    if decision == "keep":
        return await reviewer.decide(run_id, decision, path, hunk)
    async with writing_files(session, "undoing its changes", in_use=in_use):
        result = await reviewer.decide(run_id, decision, path, hunk)
        note = review_note(result)
        if note is not None:
            await add_note(session, UserMessage(content=note, origin="restore"))
    return result


def _file_json(file: ReviewedFile) -> dict[str, Any]:
    out: dict[str, Any] = {
        "path": file.path,
        "change": file.change,
        "status": file.status,
        "diff": file.diff,
        "hunks": [
            {
                "index": h.hunk.index,
                "oldStart": h.hunk.old_start,
                "oldLines": h.hunk.old_lines,
                "newStart": h.hunk.new_start,
                "newLines": h.hunk.new_lines,
                "header": h.hunk.header,
                "lines": h.hunk.diff_lines(),
                "status": h.status,
            }
            for h in file.hunks
        ],
    }
    if file.renamed_from is not None:
        out["renamedFrom"] = file.renamed_from
    if file.reason:
        # Why it cannot be undone (its earlier content was not stored).
        out["reason"] = file.reason
    return out


def review_json(runs: list[tuple[str, list[ReviewedFile]]]) -> dict[str, Any]:
    """The ``rein/review`` result."""
    return {
        "runs": [
            {"runId": run_id, "files": [_file_json(f) for f in files]} for run_id, files in runs
        ]
    }


def decide_json(result: DecideResult) -> dict[str, Any]:
    """The ``rein/reviewDecide`` result."""

    def item(path: str, hunk: int | None, **rest: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"path": path}
        if hunk is not None:
            out["hunk"] = hunk
        return out | rest

    out: dict[str, Any] = {
        "runId": result.run_id,
        "decided": [item(d.path, d.hunk, status=d.status) for d in result.decided],
        "refused": [item(r.path, r.hunk, reason=r.reason) for r in result.refused],
    }
    if result.restore_id is not None:
        out["restoreId"] = result.restore_id
    return out


async def mark_pending(
    session: Session, runs: list[str], on_error: Callable[[str], None]
) -> dict[str, ReviewStatus]:
    """In review mode: the prompt's changed files become pending (a
    ``review_pending`` event per run). The review state of each path the
    prompt changed (its latest run's), for the result's ``changes``."""
    reviewer = session.reviewer
    if reviewer is None or not session.review_edits or not session.last_changes:
        return {}
    states: dict[str, ReviewStatus] = {}
    try:
        for run_id in runs:
            await reviewer.mark_pending(run_id)
        for run_id in runs:
            states |= {f.path: f.status for f in await reviewer.files(run_id)}
    except StoreError as exc:
        on_error(f"review: the changes could not be marked pending: {exc}")
    return states
