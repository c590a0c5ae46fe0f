"""The JSON-RPC errors ``rein acp`` answers with, each naming what was wrong.

- ``-32602`` invalid params: the field (``cwd``, ``prompt[2]``, ``modeId``)
  in the message and as ``data.field``; the SDK's own validation of a
  request's shape answers the same code with pydantic's errors, whose
  ``loc`` names the field;
- ``-32002`` resource not found: an unknown session, its id in the message
  and as ``data.sessionId``;
- ``-32600`` invalid request: a prompt on a busy session (also one that
  turns busy as it starts: Rein's ``BusyError``, its message as is), a
  steer or follow-up with no run to take it;
- ``-32000`` authentication required: the provider's key is not set, the
  variable named.
"""

from __future__ import annotations

from acp import RequestError

from rein.harness.errors import BusyError

__all__ = [
    "auth_required",
    "busy",
    "busy_now",
    "invalid_field",
    "no_active_run",
    "unknown_session",
]


def invalid_field(field: str, problem: str) -> RequestError:
    return RequestError(-32602, f"Invalid params: {field}: {problem}", {"field": field})


def unknown_session(session_id: str) -> RequestError:
    return RequestError(
        -32002,
        f"Resource not found: no session {session_id!r} (session/new makes one; "
        "session/load loads a stored one)",
        {"sessionId": session_id},
    )


def busy(session_id: str) -> RequestError:
    return RequestError(
        -32600,
        f"session {session_id} is running a prompt; cancel it or wait",
        {"sessionId": session_id},
    )


def busy_now(session_id: str, exc: BusyError) -> RequestError:
    """Rein's :class:`~rein.harness.errors.BusyError` (a restore is writing
    the session's files, a run started meanwhile), its message as is."""
    return RequestError(-32600, str(exc), {"sessionId": session_id})


def no_active_run(session_id: str, method: str) -> RequestError:
    return RequestError(
        -32600,
        f"{method}: session {session_id} is not running a prompt; send it with session/prompt",
        {"sessionId": session_id},
    )


def auth_required(variable: str) -> RequestError:
    return RequestError(
        -32000,
        f"Authentication required: the model key is read from {variable}, which is not set; "
        "set it where the editor starts rein acp, then retry",
        {"variable": variable, "methodId": f"env:{variable}"},
    )
