"""What a session's checkpoints show: the runs, turns and files of
``rein/checkpoints`` and one file's stored content (``rein/checkpointContent``).

A run's entry for a path is its *net* change: from the path's version
before the run's first change to it to the version after its last (a file
created and deleted again in one run is no change and is not listed). A
restore that wrote nothing (everything was already as before, or in
conflict) is not listed either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from rein.checkpoints.model import (
    CheckpointChange,
    CheckpointRun,
    CheckpointStore,
    FileChange,
    FileVersion,
    ReviewStatus,
)
from rein.checkpoints.restore import workspace_path
from rein.harness.errors import RestoreError

__all__ = ["checkpoint_content", "list_checkpoints", "net_changes"]

Side = Literal["before", "after"]


def net_changes(changes: Sequence[CheckpointChange]) -> dict[str, FileChange]:
    """Per path, the first ``before`` and the last ``after`` of ``changes``
    (in their order); paths that end as they began are left out."""
    first: dict[str, FileChange] = {}
    last: dict[str, FileChange] = {}
    for change in changes:
        for file in change.files:
            first.setdefault(file.path, file)
            last[file.path] = file
    out: dict[str, FileChange] = {}
    for path, start in first.items():
        end = last[path]
        if start.before.same_as(end.after) and start.before.state != "unstored":
            continue
        renamed = start.renamed_from if start.before.state == "absent" else None
        out[path] = FileChange(path, start.before, end.after, renamed)
    return out


def _entry(
    file: FileChange, run: CheckpointRun, review: ReviewStatus | None = None
) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": file.path, "change": file.kind}
    if file.renamed_from is not None:
        entry["renamedFrom"] = file.renamed_from
    if run.pruned_at is not None:
        entry["restorable"] = False
        entry["reason"] = f"the checkpoint was dropped ({run.pruned_reason or 'pruned'})"
    elif file.before.state == "unstored":
        entry["restorable"] = False
        entry["reason"] = file.before.reason
    else:
        entry["restorable"] = True
    if review is not None:
        entry["review"] = review
    return entry


async def list_checkpoints(store: CheckpointStore, session_id: str) -> dict[str, Any]:
    """The ``rein/checkpoints`` result of a session."""
    runs = await store.runs(session_id)
    changes = await store.changes(session_id)
    reviews = await store.reviews(session_id)
    workspaces = {r.workspace for r in runs}
    size = sum([await store.size(w) for w in sorted(workspaces)])
    out: list[dict[str, Any]] = []
    for run in runs:
        own = [c for c in changes if c.run_id == run.run_id]
        if run.kind == "restore" and not own:
            continue  # a restore that found nothing to write
        item: dict[str, Any] = {
            "runId": run.run_id,
            "kind": run.kind,
            "title": run.title,
            "startedAt": run.started_at,
            "bytes": run.bytes,
            "pruned": run.pruned_at is not None,
        }
        if run.pruned_at is not None:
            item["prunedReason"] = run.pruned_reason
        if run.restored_run is not None:
            item["restoredRun"] = run.restored_run
        if run.restored_turn is not None:
            item["restoredTurn"] = run.restored_turn
        item["files"] = [
            _entry(f, run, reviews.get((run.run_id, f.path))) for f in net_changes(own).values()
        ]
        item["turns"] = [
            {
                "turn": turn,
                "files": [
                    _entry(f, run) for f in net_changes([c for c in own if c.turn == turn]).values()
                ],
            }
            for turn in sorted({c.turn for c in own})
        ]
        out.append(item)
    return {"sessionId": session_id, "bytes": size, "runs": out}


async def checkpoint_content(
    store: CheckpointStore,
    session_id: str,
    root: str,
    run_id: str,
    path: str,
    side: Side,
    turn: int | None = None,
) -> dict[str, Any]:
    """A path's version before the run's (or turn's) first change to it, or
    after its last: ``{path, state, text?, reason?}``. RestoreError for an
    unknown run, a path it did not change, a pruned checkpoint."""
    rel = workspace_path(root, path)
    runs = await store.runs(session_id)
    run = next((r for r in runs if r.run_id == run_id), None)
    if run is None:
        raise RestoreError(f"no checkpoint of run {run_id!r} in session {session_id}")
    if run.pruned_at is not None:
        raise RestoreError(
            f"the checkpoint of run {run_id} was dropped ({run.pruned_reason or 'pruned'})"
        )
    own = [c for c in await store.changes(session_id, run_id) if turn is None or c.turn == turn]
    files = [f for c in own for f in c.files if f.path == rel]
    if not files:
        where = f" in turn {turn}" if turn is not None else ""
        raise RestoreError(f"run {run_id} did not change {rel}{where}")
    version: FileVersion = files[0].before if side == "before" else files[-1].after
    result: dict[str, Any] = {"path": rel, "state": version.state}
    if version.state == "unstored":
        result["reason"] = version.reason
    elif version.state == "text" and version.blob is not None:
        text = await store.get_text(version.blob)
        if text is None:
            raise RestoreError(f"the stored content of {rel} is gone (the checkpoint was pruned)")
        result["text"] = text
    return result
