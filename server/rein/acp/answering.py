"""The ``session/prompt`` being answered for a session, and what a
``session/cancel`` does to it.

A cancel cancels the prompt from the moment it arrived, not only once its
run is under way: while the prompt waits before its run (the session's
first prompt waits for its analyzers to start, a mode chosen meanwhile is
applied) it is kept (:attr:`Answering.cancel_asked`), and the prompt then
answers ``cancelled`` without running, or its run is aborted at its
``agent_start`` when it already began (the store's bookkeeping before a
run). A prompt sent after a cancel, before the cancelled one answered (as
an editor sends the person's next message), waits for that answer within
:data:`CANCELLED_END_WAIT_S` instead of being refused as busy; it is
known while it waits (``AcpSessions.waiting``), so a cancel read meanwhile
cancels it as well.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import anyio

from rein.harness.events import Event
from rein.session import Session

__all__ = ["CANCELLED_END_WAIT_S", "Answering"]

#: How long a prompt sent after ``session/cancel`` waits for the cancelled
#: prompt's answer before it is refused as busy (the abort ends the run's
#: tool calls first: a command killed, its terminal released).
CANCELLED_END_WAIT_S = 30.0


@dataclass(eq=False)
class Answering:
    """One ``session/prompt`` from its checks to its answer."""

    #: ``session/cancel``'s reason (None: not cancelled).
    cancel_asked: str | None = None
    #: Set once the prompt has its answer.
    answered: anyio.Event = field(default_factory=anyio.Event)

    def abort_at_start(self, session: Session) -> Callable[[], None]:
        """Have a cancel that came before ``session``'s run opened abort it
        at its ``agent_start``; returns the unsubscribe function."""

        def at_start(event: Event) -> None:
            if event.type == "agent_start" and self.cancel_asked is not None:
                session.abort(self.cancel_asked)

        return session.subscribe(at_start)

    async def cancelled_and_ended(self) -> bool:
        """True once a cancelled prompt has its answer (waited for within
        :data:`CANCELLED_END_WAIT_S`); False at once when it was not
        cancelled."""
        if self.cancel_asked is None:
            return False
        with anyio.move_on_after(CANCELLED_END_WAIT_S):
            await self.answered.wait()
        return self.answered.is_set()
