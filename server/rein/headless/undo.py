"""``rein undo``: restore a workspace to before a run (or a turn) headless.

The same engine as ``rein/restore`` (:mod:`rein.checkpoints.restore`), over
the disk (atomic writes: a file is either fully old or fully new, also
after a kill) and the session store: the session's transcript gets the
note the model reads at its next run (``rein run --resume``).

Defaults: the session is the workspace's latest session with checkpoints;
the run is that session's latest run that is not itself a restore (``rein
undo`` on a restore's id undoes that restore). Exit codes: 0 every file
restored (or already as before), 3 some conflicted or were skipped, 2 the
restore was refused (nothing changed) or the store cannot be used.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio

from rein.checkpoints.model import CheckpointStore
from rein.checkpoints.restore import Restorer, RestoreRequest, RestoreResult, restore_note
from rein.checkpoints.restore_types import files_restored
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.errors import ReinError, RestoreError, StoreError, ToolError
from rein.harness.events import FilesRestored
from rein.harness.messages import UserMessage
from rein.store import SessionRecord, SqliteStore, StorePersistence, default_storage_path
from rein.store.checkpoints import SqliteCheckpointStore
from rein.store.memory_keys import PLANNER_MEMORY, memory_key

__all__ = ["UndoArgs", "undo", "undo_command"]

EXIT_OK, EXIT_ERROR, EXIT_PARTIAL = 0, 2, 3


@dataclass(frozen=True, slots=True)
class UndoArgs:
    root: Path
    storage: str
    session_id: str | None = None
    run_id: str | None = None
    turn: int | None = None
    paths: tuple[str, ...] | None = None
    as_json: bool = False


class UndoRefused(ReinError):
    """``rein undo`` cannot start: the message says why (exit 2)."""


async def _pick_session(
    sessions: SqliteStore, checkpoints: CheckpointStore, root: str, wanted: str | None
) -> SessionRecord:
    if wanted is not None:
        record = await sessions.get_session(wanted)
        if record is None:
            raise UndoRefused(f"no session {wanted!r} in {sessions.path.parent}")
        return record
    for record in await sessions.list_sessions():  # newest first
        if any(r.workspace == root for r in await checkpoints.runs(record.id)):
            return record
    raise UndoRefused(f"no session has checkpoints of {root} in {sessions.path.parent}")


async def _pick_run(
    checkpoints: CheckpointStore, session_id: str, wanted: str | None, root: str
) -> str:
    runs = await checkpoints.runs(session_id)
    if wanted is not None:
        run = next((r for r in runs if r.run_id == wanted), None)
        if run is not None and run.workspace != root:
            # Restoring it here would write that folder's old files into this one.
            raise UndoRefused(
                f"run {wanted} of session {session_id} changed {run.workspace}, not {root}: "
                f"name that folder"
            )
        return wanted
    mine = [r for r in runs if r.kind == "run" and r.workspace == root]
    if not mine:
        elsewhere = sorted({r.workspace for r in runs if r.kind == "run"})
        where = f" (its runs changed {', '.join(elsewhere)}: name that folder)" if elsewhere else ""
        raise UndoRefused(f"session {session_id} has no run that changed files in {root}{where}")
    return mine[-1].run_id


async def _isolated_copy_gone(
    sessions: SqliteStore, checkpoints: CheckpointStore, args: UndoArgs, session_id: str
) -> UndoRefused | None:
    """Why ``session_id`` cannot be undone in ``args.root`` when it ran in
    an isolated copy that is gone (None otherwise): what it brought into the
    folder is its apply's session (``rein apply`` titles it), named here;
    "name that folder" named a folder that no longer exists."""
    copies = Path(args.storage) / "isolated"  # absolute: undo() made it so
    places = {r.workspace for r in await checkpoints.runs(session_id)}
    for place in places:
        if not Path(place).is_relative_to(copies) or await anyio.Path(place).is_dir():
            return None
    if not places:
        return None
    root = str(args.root)
    title = f"rein apply {session_id}"
    applies = [
        s.id for s in await sessions.list_sessions() if s.title == title and s.workspace == root
    ]
    copy = f"session {session_id} ran in an isolated copy that is gone (applied, discarded or kept as a branch)"
    if not applies:
        return UndoRefused(f"{copy}, and nothing of it was applied to {root}")
    undo = _redo_command(args, applies[0], None)
    more = f" (and earlier applies: {', '.join(applies[1:])})" if len(applies) > 1 else ""
    return UndoRefused(
        f"{copy}; what it brought into {root} is the apply's session {applies[0]}{more}: "
        f"undo it with {undo}"
    )


async def _note(sessions: SqliteStore, record: SessionRecord, result: RestoreResult) -> None:
    """The transcript's note (the agent's memory, and the planner's in plan mode)."""
    note = UserMessage(content=restore_note(result), origin="restore")
    keys = [memory_key(record.mode)] + ([PLANNER_MEMORY] if record.mode == "plan" else [])
    for key in keys:
        persistence = StorePersistence(sessions, record.id, key, created=True)
        persistence.append(note)
        await persistence.checkpoint()


async def run_undo(
    args: UndoArgs, sessions: SqliteStore, checkpoints: CheckpointStore
) -> tuple[RestoreResult, str]:
    """The restore ``args`` ask for; UndoRefused/RestoreError before any write.
    A run undone already (every file as it was before it) registers no
    restore: the result's ``restore_id`` is empty."""
    root = str(args.root)
    record = await _pick_session(sessions, checkpoints, root, args.session_id)
    if record.status == "running":
        raise UndoRefused(
            f"session {record.id} is running a task; abort or wait for the run before undoing"
        )
    try:
        run_id = await _pick_run(checkpoints, record.id, args.run_id, root)
    except UndoRefused as refused:
        gone = await _isolated_copy_gone(sessions, checkpoints, args, record.id)
        raise (gone or refused) from None
    try:
        workspace = DiskWorkspace(args.root)
    except ToolError as exc:
        raise UndoRefused(str(exc)) from exc
    request = RestoreRequest(record.id, run_id, args.turn, args.paths)
    restorer = Restorer(checkpoints, workspace)
    plan = await restorer.plan(request)
    if plan.already:
        # Undone already: no restore of nothing is registered (or offered to undo).
        already = tuple(p.path for p in plan.paths)
        return RestoreResult("", record.id, run_id, args.turn, already_restored=already), record.id
    result = await restorer.apply(plan)
    if result.restored or result.conflicts or result.skipped:
        await _note(sessions, record, result)
    return result, record.id


def _redo_command(args: UndoArgs, session_id: str, restore_id: str | None) -> str:
    """The ``rein undo`` that undoes this restore (the session's latest run
    when ``restore_id`` is None), runnable from any folder: the storage
    folder when it is not the default, and the workspace."""
    where = (
        ""
        if args.storage == str(default_storage_path())
        else f" --storage {shlex.quote(args.storage)}"
    )
    run = f" --run {restore_id}" if restore_id is not None else ""
    return f"rein undo --session {session_id}{run}{where} {shlex.quote(str(args.root))}"


def _print(args: UndoArgs, result: RestoreResult, session_id: str, event: FilesRestored) -> None:
    what = f"turn {result.turn} of run {result.run_id}" if result.turn else f"run {result.run_id}"
    if not result.restore_id:
        print(
            f"session {session_id}: {what} is undone already: its files are as they were "
            "before it; nothing was changed"
        )
        for path in result.already_restored:
            print(f"  already   {path}")
        return
    print(f"session {session_id}: {event.restore_id} restored to before {what}")
    for f in result.restored:
        print(f"  restored  {f.path} ({f.change}{'; ' + f.detail if f.detail else ''})")
    for path in result.already_restored:
        print(f"  already   {path}")
    for s in result.skipped:
        print(f"  skipped   {s.path}: {s.reason}")
    for c in result.conflicts:
        print(f"  conflict  {c.path}: {c.reason}; left as it is")
        for line in c.diff.splitlines():
            print(f"    {line}")
    if not (result.restored or result.already_restored or result.skipped or result.conflicts):
        print("  nothing to restore")
    print(f"undo this restore with: {_redo_command(args, session_id, event.restore_id)}")


async def _main(args: UndoArgs, open_checkpoints: Any) -> int:
    try:
        sessions = SqliteStore.open(args.storage)
    except StoreError as exc:
        print(f"rein undo: {exc}", file=sys.stderr)
        return EXIT_ERROR
    try:
        checkpoints: CheckpointStore = open_checkpoints(sessions)
        result, session_id = await run_undo(args, sessions, checkpoints)
    except (UndoRefused, RestoreError, StoreError) as exc:
        print(f"rein undo: {exc}; nothing was changed", file=sys.stderr)
        return EXIT_ERROR
    finally:
        sessions.close()
    event = files_restored(result)
    if args.as_json:
        # An undo done already registers no restore: its restoreId is null.
        data = {**result.to_json(), "restoreId": result.restore_id or None}
        print(json.dumps({"sessionId": session_id, **data}))
    else:
        _print(args, result, session_id, event)
    return EXIT_PARTIAL if result.conflicts or result.skipped else EXIT_OK


def undo(args: UndoArgs, open_checkpoints: Any) -> int:
    """Run ``rein undo``; the exit code. ``open_checkpoints(sessions)``
    opens the checkpoint store next to the session database."""
    if not (Path(args.storage).expanduser() / "sessions.db").is_file():
        # Opening would create an empty store in a mistyped folder.
        print(
            f"rein undo: no session store in {args.storage} (no sessions.db); nothing was changed",
            file=sys.stderr,
        )
        return EXIT_ERROR
    # Absolute: the commands it prints run from any folder, and an isolated
    # copy's place under it is recognised.
    args = replace(args, storage=os.path.abspath(os.path.expanduser(args.storage)))
    return anyio.run(_main, args, open_checkpoints)


def undo_command(args: UndoArgs) -> int:
    """``rein undo``: :func:`undo` over the checkpoint store next to the
    session database (in ``args.storage``)."""
    return undo(args, lambda sessions: SqliteCheckpointStore.open(args.storage))
