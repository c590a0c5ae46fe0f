"""What the session store records about a run: "running" with its title
as it starts; its status, turns, usage, the state a load needs and the run
itself as it ends; and, for a run cancelled from outside, what it ended
as, shielded and bounded. A write that fails is told to the person
(:mod:`rein.session.store_trouble`) and the run goes on.
:class:`~rein.session.manager.SessionManager` calls these around a run."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import anyio

from rein.harness import RunResult
from rein.harness.errors import StoreError
from rein.session.builder import memory_key
from rein.session.session import Session
from rein.session.store_trouble import StoreTrouble
from rein.store import SqliteStore, StorePersistence

__all__ = [
    "CANCELLED_STORE_BOUND_S",
    "bookkeeping",
    "record_cancelled",
    "record_end",
    "record_start",
]

#: The longest the store's record of a cancelled run may take (seconds).
CANCELLED_STORE_BOUND_S = 5.0


async def bookkeeping(trouble: StoreTrouble, write: Awaitable[None]) -> None:
    """A write about a run (its status, usage, state): when the store
    fails, the person is told and the run goes on."""
    try:
        await write
    except StoreError as exc:
        trouble.failed(exc, kept=False)


async def record_start(
    store: SqliteStore, session: Session, trouble: StoreTrouble, *, untitled: bool
) -> None:
    """The session stored (once), titled by its first prompt when it had
    no title, and marked "running"."""
    persistence = session.agent.persistence
    if isinstance(persistence, StorePersistence):
        await bookkeeping(trouble, persistence.ensure_session())
    if untitled:  # `rein sessions` lists it by its first prompt
        await bookkeeping(trouble, store.set_title(session.id, session.title))
    await bookkeeping(trouble, store.set_status(session.id, "running"))


async def record_end(
    store: SqliteStore,
    session: Session,
    result: RunResult,
    state: dict[str, Any],
    trouble: StoreTrouble,
) -> None:
    """The run's status, turns and usage, the session's ``state`` for a
    load (``SessionManager._memory_state``) and the run's own record."""
    usage = result.usage.model_dump(exclude={"estimated"})
    await bookkeeping(
        trouble, store.set_status(session.id, result.status, turns=result.turns, usage=usage)
    )
    await bookkeeping(trouble, store.set_memory_state(session.id, memory_key(session.mode), state))
    await bookkeeping(trouble, store.record_run(session.id, result, usage))


async def record_cancelled(store: SqliteStore, session: Session, trouble: StoreTrouble) -> None:
    """A run cancelled from outside (Ctrl-C of ``rein run``, the client
    gone) stored as it ended, shielded and bounded: left "running", the
    store said a live run had it (``rein undo`` refused it) until the
    next start marked it interrupted."""
    task = session.task
    done = task is not None and task.done() and not task.cancelled()
    result = task.result() if done and task is not None and not task.exception() else None
    with anyio.CancelScope(shield=True), anyio.move_on_after(CANCELLED_STORE_BOUND_S):
        if result is None:
            await bookkeeping(trouble, store.set_status(session.id, "aborted"))
            return
        usage = result.usage.model_dump(exclude={"estimated"})
        await bookkeeping(
            trouble, store.set_status(session.id, result.status, turns=result.turns, usage=usage)
        )
        await bookkeeping(trouble, store.record_run(session.id, result, usage))
