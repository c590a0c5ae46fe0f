"""What a restore covers: the changes in scope of a run (and turn), each
path's changes, and the restore's title. Used by
:mod:`rein.checkpoints.restore`."""

from __future__ import annotations

from collections.abc import Sequence

from rein.checkpoints.model import CheckpointChange, CheckpointRun, FileChange

__all__ = ["changes_by_path", "in_scope", "restore_title"]


def in_scope(
    runs: Sequence[CheckpointRun],
    changes: Sequence[CheckpointChange],
    run_id: str,
    turn: int | None,
) -> list[CheckpointChange]:
    """The changes a restore of ``run_id`` (from ``turn`` on) undoes: that
    run's from the turn, and every change of a later run, in the order
    they were made (runs in their order, then generation, then time)."""
    order = {r.run_id: i for i, r in enumerate(runs)}
    start = order[run_id]
    kept = [
        c
        for c in changes
        if c.run_id in order
        and (order[c.run_id] > start or (c.run_id == run_id and (turn is None or c.turn >= turn)))
    ]
    return sorted(kept, key=lambda c: (order[c.run_id], c.generation, c.at))


def changes_by_path(
    changes: Sequence[CheckpointChange],
) -> dict[str, list[tuple[CheckpointChange, FileChange]]]:
    """Each path's changes, in the order of ``changes``."""
    out: dict[str, list[tuple[CheckpointChange, FileChange]]] = {}
    for change in changes:
        for file in change.files:
            out.setdefault(file.path, []).append((change, file))
    return out


def restore_title(run: CheckpointRun, turn: int | None) -> str:
    """A restore's title: what it puts back."""
    where = f"turn {turn} of run {run.run_id}" if turn is not None else f"run {run.run_id}"
    return f"restore to before {where}"
