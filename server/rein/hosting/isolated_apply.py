"""An isolated run brought back into a session of the person's folder, for
every host (``rein apply``, ``rein/applyIsolated``, ACP's
``_rein/applyIsolated``): :func:`~rein.isolation.apply_run.bring_back_as_run`
applies the clean hunks (or the ones the person kept) as one change of a
run of that session (a new one, or the person's open session), which its
gates judge, and the session is stored when something was applied (so its
checkpoint run can be undone: ``rein undo --session``, ``rein/restore``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Container, Sequence
from contextlib import AbstractContextManager, nullcontext

from rein.harness.messages import UserMessage
from rein.harness.ports import AnnouncingWorkspace
from rein.isolation.apply_run import BroughtBack, bring_back_as_run
from rein.isolation.bring_back import RunChange
from rein.session import Session
from rein.session.restoring import add_note
from rein.store import StorePersistence

__all__ = ["bring_back_into"]


async def bring_back_into(
    session: Session,
    workspace: AnnouncingWorkspace,
    changes: Sequence[RunChange],
    *,
    title: str,
    can_branch: bool,
    keep: Container[str] | None = None,
    named: bool = True,
    atomic: Callable[[], AbstractContextManager[object]] = nullcontext,
    on_applied: Callable[[BroughtBack], Awaitable[None]] | None = None,
) -> BroughtBack:
    """``changes`` (only the hunks in ``keep``, when given) applied as one
    change of a new run of ``session`` (over ``workspace``, the session's
    own), judged by its gates; the session is stored when something was
    applied (its checkpoint run is kept either way, by the store the
    session's capture writes to) and, when ``named`` (a session made for
    the apply, not the person's open one), titled ``title``. The session is
    stored as soon as the files are written, before the gates judge them
    (``atomic``, ``on_applied``: :func:`bring_back_as_run`'s, ``on_applied``
    after the session is stored)."""
    persistence = session.agent.persistence

    async def applied(brought: BroughtBack) -> None:
        brought.session_id = session.id
        if isinstance(persistence, StorePersistence):
            await persistence.ensure_session()
            if named:
                await persistence.store.set_title(session.id, title)
        if on_applied is not None:
            await on_applied(brought)

    brought = await bring_back_as_run(
        changes,
        workspace,
        gates=session.gates,
        capture=session.capture,
        title=title,
        can_branch=can_branch,
        keep=keep,
        atomic=atomic,
        on_applied=applied,
    )
    brought.session_id = session.id
    if brought.result.applied and not named:
        # The person's own session: its model is told what changed under it.
        files = ", ".join(brought.result.applied)
        note = f"The person applied changes of an isolated run ({title}): {files}."
        await add_note(session, UserMessage(content=note, origin="restore"))
    return brought
