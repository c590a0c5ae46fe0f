"""The JSON-RPC errors ``rein serve`` answers with, for every handler (the
LSP side of what :mod:`rein.acp.errors` is for ACP).

- ``-32602`` invalid params: the method and the field in the message
  (``rein/session: invalid params: sessionId: no session 'x'``);
- ``-32600`` invalid request: a prompt on a busy session (it points to
  ``rein/steer`` and ``rein/followUp``);
- ``-32803`` RequestFailed: a valid request that cannot be done, the reason
  in the message: invalid model settings (``Rein: ...``), a review, restore
  or checkpoint that cannot be done, a session that keeps no checkpoints, a
  store that cannot be used, a session (or agent) that is busy restoring or
  running.

:func:`as_jsonrpc` maps the errors Rein raises on purpose
(:class:`rein.harness.errors.ReinError`) to these; the handlers' table
(:func:`rein.lsp.handlers.register`) applies it to every handler, so a
handler raises Rein's errors and never maps them itself. Anything else
keeps pygls's path: an internal error whose traceback goes to the log.

:func:`log_failed_request` logs a mapped error as one warning line: it is
an answer the person acts on (a setting to fix), not a defect.

Imports only pygls (the server starts fast); Rein's error tree is imported
when an error is mapped.
"""

from __future__ import annotations

import logging

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest

__all__ = [
    "RequestFailed",
    "as_jsonrpc",
    "log_failed_request",
    "no_session",
    "session_closing",
    "shown",
]

log = logging.getLogger(__name__)

#: The requests for which a busy session means the request itself is wrong
#: (InvalidRequest: steer or follow up instead); for the others it is a
#: request that cannot be done now (RequestFailed).
_BUSY_IS_INVALID = frozenset({"rein/prompt"})


class RequestFailed(JsonRpcException):
    """LSP's RequestFailed: a valid request that cannot be done, e.g. a
    prompt while the model settings cannot be used (the message says why).

    The wire form of a Rein error (:func:`as_jsonrpc`), not one of Rein's
    errors itself: it stays outside the ``ReinError`` tree."""

    CODE = -32803


def shown(value: str, limit: int = 80) -> str:
    """A client's value quoted in an error message, bounded."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


def no_session(method: str, session_id: str) -> JsonRpcInvalidParams:
    """InvalidParams naming ``sessionId``: no such session."""
    return JsonRpcInvalidParams(
        f"{method}: invalid params: sessionId: no session {shown(session_id)}"
    )


def session_closing(method: str, session_id: str) -> JsonRpcInvalidParams:
    """InvalidParams naming ``sessionId``: the session is being closed
    (``rein/closeSession``)."""
    return JsonRpcInvalidParams(
        f"{method}: invalid params: sessionId: session {shown(session_id)} is closing"
    )


def as_jsonrpc(exc: BaseException, method: str) -> JsonRpcException | None:
    """The JSON-RPC error ``method`` answers ``exc`` with; None for an
    exception that is not Rein's (it stays an internal error) and for one
    that is a JSON-RPC error already."""
    if isinstance(exc, JsonRpcException):
        return None
    from rein.harness.errors import (
        BusyError,
        CheckpointsOffError,
        ConfigError,
        RestoreError,
        ReviewError,
        StoreError,
    )

    if isinstance(exc, ConfigError):
        # Model settings that cannot be used: nothing was created.
        return RequestFailed(f"Rein: {exc}")
    if isinstance(exc, BusyError):
        if method in _BUSY_IS_INVALID:
            return JsonRpcInvalidRequest(f"{method}: {exc}")
        return RequestFailed(f"{method}: {exc}")
    if isinstance(exc, (ReviewError, RestoreError, StoreError, CheckpointsOffError)):
        return RequestFailed(f"{method}: {exc}")
    # Rein's other errors stay internal errors that carry their (redacted)
    # message (rein.lsp._protocol.internal_message).
    return None


def log_failed_request(msg_id: object, error: JsonRpcException) -> None:
    """A request answered with a JSON-RPC error its handler raised on
    purpose: one warning line, no traceback."""
    log.warning("request %r failed: %s", msg_id, error.message)
