"""The values of a restore (:mod:`rein.checkpoints.restore`): the request, what
it did per file, its result as ``rein/restore`` answers it and as the
``files_restored`` event, the note the transcript gets, and how a path given by a client is made workspace-relative."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any, Literal

from rein.harness.errors import RestoreError
from rein.harness.feature_events import FilesRestored

__all__ = [
    "Conflict",
    "RestoreRequest",
    "RestoreResult",
    "RestoredFile",
    "SkippedFile",
    "files_restored",
    "restore_note",
    "workspace_path",
]


@dataclass(frozen=True, slots=True)
class RestoreRequest:
    session_id: str
    run_id: str
    #: 1-based: restore to before this turn of the run (None: the whole run).
    turn: int | None = None
    #: Only these paths (workspace-relative or absolute inside the root).
    paths: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class RestoredFile:
    path: str
    #: What the restore did to the file.
    change: Literal["created", "modified", "deleted"]
    #: Besides the text: "mode 755", "a symbolic link to x", or what could
    #: not be brought back ("its mode 755 could not be set back: ...").
    detail: str = ""


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Conflict:
    """A file the person changed after the run: left as it is."""

    path: str
    reason: str
    #: Unified diff from the checkpoint's text to the current text.
    diff: str
    #: What the run left (None: no file, or not stored).
    checkpoint_text: str | None
    #: What the workspace has now (None: no file, or not text).
    current_text: str | None


@dataclass(frozen=True, slots=True)
class RestoreResult:
    restore_id: str
    session_id: str
    run_id: str
    turn: int | None
    restored: tuple[RestoredFile, ...] = ()
    already_restored: tuple[str, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()
    conflicts: tuple[Conflict, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The ``rein/restore`` result."""
        return {
            "restoreId": self.restore_id,
            "restored": [
                {"path": f.path, "change": f.change, **({"detail": f.detail} if f.detail else {})}
                for f in self.restored
            ],
            "alreadyRestored": list(self.already_restored),
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "conflicts": [
                {
                    "path": c.path,
                    "reason": c.reason,
                    "diff": c.diff,
                    "checkpointText": c.checkpoint_text,
                    "currentText": c.current_text,
                }
                for c in self.conflicts
            ],
        }


def workspace_path(root: str, path: str) -> str:
    """``path`` as a workspace-relative POSIX path; RestoreError when it is
    outside the workspace (absolute elsewhere, or climbing out with ``..``)."""
    given = path.replace("\\", "/")
    root_posix = root.replace("\\", "/").rstrip("/")
    if posixpath.isabs(given):
        norm = posixpath.normpath(given)
        if norm != root_posix and not norm.startswith(root_posix + "/"):
            raise RestoreError(f"path {path!r} is outside the workspace {root}")
        given = norm[len(root_posix) :].lstrip("/")
    rel = posixpath.normpath(given) if given else "."
    if rel in (".", "") or rel == ".." or rel.startswith("../"):
        raise RestoreError(f"path {path!r} is outside the workspace {root}")
    return rel


def files_restored(result: RestoreResult) -> FilesRestored:
    """The ``files_restored`` event of a restore (the live session's and ``rein undo``'s)."""
    return FilesRestored(
        restore_id=result.restore_id,
        run_id=result.run_id,
        turn=result.turn,
        restored=[f.path for f in result.restored],
        conflicts=[c.path for c in result.conflicts],
        skipped=[s.path for s in result.skipped],
    )


def restore_note(result: RestoreResult) -> str:
    """The message the session's transcript gets after a restore, so the
    next model turn knows the files changed under it."""
    where = (
        f"turn {result.turn} of run {result.run_id}"
        if result.turn is not None
        else f"run {result.run_id}"
    )
    lines = [f"[Rein] The person restored files to how they were before {where}."]
    if result.restored:
        lines.append(
            "Restored: " + ", ".join(f"{f.path} ({f.change} again)" for f in result.restored) + "."
        )
    if result.already_restored:
        lines.append("Already as before: " + ", ".join(result.already_restored) + ".")
    if result.conflicts:
        lines.append(
            "Not restored because the person changed them after the run: "
            + ", ".join(c.path for c in result.conflicts)
            + "."
        )
    if result.skipped:
        lines.append(
            "Skipped: " + "; ".join(f"{s.path} ({s.reason})" for s in result.skipped) + "."
        )
    lines.append("Read these files again before you change them.")
    return "\n".join(lines)
