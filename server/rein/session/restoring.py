"""A restore in a live session: refused while the session runs, then the
engine (:mod:`rein.checkpoints.restore`), then the transcript's note and the
``files_restored`` event. The language server's ``rein/restore`` calls it;
``rein undo`` (no live session) does the same over the store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from rein.checkpoints.model import CheckpointStore
from rein.checkpoints.restore import Restorer, RestoreRequest, RestoreResult, restore_note
from rein.checkpoints.restore_types import files_restored
from rein.harness.errors import BusyError
from rein.harness.messages import UserMessage
from rein.harness.ports import Workspace
from rein.session.session import Session

__all__ = ["add_note", "files_restored", "restore_in_session", "writing_files"]


@asynccontextmanager
async def writing_files(
    session: Session, what: str, *, in_use: bool = False
) -> AsyncIterator[None]:
    """Hold ``session`` while a restore or an undo writes its files: refused
    (BusyError naming ``what``, nothing changed) while a run or a
    restore is active or ``in_use``; no run starts until it ends, and the
    session is touched when it ends well."""
    if in_use or session.busy or session.restoring:
        raise BusyError(
            f"session {session.id} is "
            + ("restoring files" if session.restoring else "running a task")
            + f"; abort or wait for the run before {what}"
        )
    session.restoring = True
    try:
        yield
    finally:
        session.restoring = False
    session.touch()


async def add_note(session: Session, note: UserMessage) -> None:
    """Tell the session's model (and its planner's) what the person did."""
    await session.agent.add_note(note)
    if session.planner is not None:
        await session.planner.add_note(note)


async def restore_in_session(
    session: Session,
    store: CheckpointStore,
    workspace: Workspace,
    request: RestoreRequest,
    *,
    in_use: bool = False,
) -> RestoreResult:
    """Restore, unless a run (or another restore) is active in the session
    or it is ``in_use`` (a prompt is starting): BusyError then, and nothing
    changed. While it restores, no run starts in the session
    (:meth:`Session.run` refuses)."""
    async with writing_files(session, "restoring", in_use=in_use):
        result = await Restorer(store, workspace).restore(request)
        if result.restored or result.conflicts or result.skipped:
            await add_note(session, UserMessage(content=restore_note(result), origin="restore"))
    session.emit_flow(files_restored(result))
    return result
