"""Rein's extension methods over ACP, which ACP v1 lacks:

- ``_rein/steer`` and ``_rein/followUp``: steering the running prompt and
  queueing a follow-up (a ``/name`` command expanded as ``session/prompt``
  expands it); no running prompt: -32600;
- ``_rein/isolatedHunks`` and ``_rein/applyIsolated``: an isolated
  session's changes listed and brought back (:mod:`rein.acp.isolated`).
"""

from __future__ import annotations

from typing import Any, Protocol

from acp import RequestError

from rein.acp import errors
from rein.acp.commands import command_prompt
from rein.acp.isolated import AcpIsolation
from rein.acp.live import Live
from rein.config import ReinConfig

__all__ = ["ExtendedSessions", "ext_method"]


class ExtendedSessions(Protocol):
    """What the extension methods use of the agent's sessions
    (:class:`rein.acp.sessions.AcpSessions`)."""

    config: ReinConfig
    live: dict[str, Live]
    isolation: AcpIsolation | None

    def live_of(self, session_id: str) -> Live: ...


async def ext_method(
    sessions: ExtendedSessions, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    """The answer to ``_<method>`` (the agent checked the name)."""
    if method == "rein/applyIsolated":
        return await _apply_isolated(sessions, params)
    if method == "rein/isolatedHunks" and sessions.isolation is not None:
        hunks_of = params.get("sessionId")
        live = sessions.live.get(hunks_of) if isinstance(hunks_of, str) else None
        if isinstance(hunks_of, str) and live is not None and live.session.busy:
            raise errors.busy(hunks_of)
        return await sessions.isolation.hunks(hunks_of, live.session if live is not None else None)
    if method not in ("rein/steer", "rein/followUp"):
        raise RequestError.method_not_found(f"_{method}")
    session_id = params.get("sessionId")
    text = params.get("text")
    if not isinstance(session_id, str) or not session_id:
        raise errors.invalid_field("sessionId", "a session id (string) is required")
    if not isinstance(text, str) or not text.strip():
        raise errors.invalid_field("text", "a non-empty text is required")
    live = sessions.live_of(session_id)
    # A /name command is expanded as session/prompt expands it.
    text = command_prompt(sessions.config, live.host.root, text, "text").text
    if not live.session.busy:
        raise errors.no_active_run(session_id, f"_{method}")
    if method == "rein/steer":
        live.session.agent.steer(text)
        return {"delivered": True}
    live.session.agent.follow_up(text)
    return {"queued": True}


async def _apply_isolated(sessions: ExtendedSessions, params: dict[str, Any]) -> dict[str, Any]:
    session_id = params.get("sessionId")
    if not isinstance(session_id, str) or sessions.isolation is None:
        raise errors.invalid_field("sessionId", "an isolated session's id is required")
    live = sessions.live.get(session_id)
    if live is not None and live.session.busy:
        raise errors.busy(session_id)
    into = None
    if "intoSessionId" in params:
        into_id = params["intoSessionId"]
        found = sessions.live.get(into_id) if isinstance(into_id, str) else None
        into = await sessions.isolation.into(
            session_id, into_id, found.session if found is not None else None
        )
    result = await sessions.isolation.bring_back(
        session_id, params, live.session if live is not None else None, into
    )
    if session_id not in sessions.isolation.records and live is not None:
        live.unsubscribe()  # its copy is gone: the session is over
        live.updates.close()
        del sessions.live[session_id]
    return result
