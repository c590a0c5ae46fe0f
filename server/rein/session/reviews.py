"""Reviews on the wire: ``rein/review`` and ``rein/reviewDecide`` results
(camelCase), from :mod:`rein.harness.review`. Host-neutral: the language
server answers with them, and any other host can."""

from __future__ import annotations

from typing import Any

from rein.harness.review import DecideResult, ReviewedFile

__all__ = ["decide_json", "review_json"]


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
