"""``session/close`` (optional in ACP v1, advertised as
``sessionCapabilities.close``): the editor closed a session's thread.

As ``session/cancel`` first (the prompt being answered answers
``cancelled``, waited for within
:data:`~rein.acp.answering.CANCELLED_END_WAIT_S`), then the session leaves
this process: its stream stops, its SessionEnd hooks run (reason
``other``) and it leaves memory; a stored one stays in the store, so
``session/load`` opens it again. Meanwhile a prompt of it is refused as of
an unknown session. An isolated session is refused (it ends with
``_rein/applyIsolated``); an unknown one is -32002.
"""

from __future__ import annotations

from typing import Protocol

import anyio
from acp import RequestError

from rein.acp import errors
from rein.acp.answering import CANCELLED_END_WAIT_S, Answering
from rein.acp.isolated import AcpIsolation
from rein.acp.live import Live
from rein.session.ending import end_sessions

__all__ = ["CLOSED", "ClosingSessions", "close_session"]


class ClosingSessions(Protocol):
    """What closing a session uses of the agent's sessions
    (:class:`rein.acp.sessions.AcpSessions`)."""

    live: dict[str, Live]
    answering: dict[str, Answering]
    closing: set[str]
    isolation: AcpIsolation | None

    def mark_cancelled(self, session_id: str, reason: str) -> bool: ...


#: Why the session's run ends.
CLOSED = "the session was closed"


async def close_session(sessions: ClosingSessions, session_id: str) -> None:
    live = sessions.live.get(session_id)
    if live is None or session_id in sessions.closing:
        raise errors.unknown_session(session_id)
    if sessions.isolation is not None and session_id in sessions.isolation.records:
        raise errors.invalid_field(
            "sessionId",
            "an isolated session ends with _rein/applyIsolated (keep, branch or discard)",
        )
    sessions.closing.add(session_id)
    try:
        answering = sessions.answering.get(session_id)
        sessions.mark_cancelled(session_id, CLOSED)
        live.session.abort(CLOSED)
        if answering is not None:
            with anyio.move_on_after(CANCELLED_END_WAIT_S):
                await answering.answered.wait()
            # The prompt may have switched the session's mode meanwhile: a
            # new session (same id) in the table, the old one discarded.
            live = sessions.live.get(session_id, live)
        if session_id in sessions.answering or live.session.busy:
            raise RequestError(
                -32603,
                f"session {session_id} was not closed: its run did not end within "
                f"{CANCELLED_END_WAIT_S:g} s of the abort",
                {"sessionId": session_id},
            )
        live.unsubscribe()
        live.updates.close()
        sessions.live.pop(session_id, None)
        await end_sessions([live.session], "other")
        live.host.manager.discard(live.session)
    finally:
        sessions.closing.discard(session_id)
