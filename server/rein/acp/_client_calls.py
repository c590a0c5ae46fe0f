"""One request to the ACP client, bounded, with its failures mapped to a
:class:`~rein.harness.errors.ToolError` the model can read.

The ports (``fs/*``, ``terminal/*``, ``session/request_permission``) all
ask the client through :func:`ask_client`: an error answer
(:class:`acp.exceptions.RequestError`), a closed connection, an answer that
does not parse and no answer within the bound all become one clear error
naming the method, never a crash of the run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from acp.exceptions import RequestError
from pydantic import ValidationError

from rein.harness.errors import ToolError

__all__ = ["CLIENT_BOUND_S", "ClientCallError", "ask_client", "client_session"]

#: Seconds Rein waits for the client's answer to a file or terminal request.
CLIENT_BOUND_S = 30.0
_MAX_DETAIL = 300

T = TypeVar("T")


class ClientCallError(ToolError):
    """The client did not do what was asked (``method``): it answered with
    an error, did not answer within the bound, or the connection is gone."""

    def __init__(self, method: str, message: str, *, timed_out: bool = False) -> None:
        self.method = method
        #: No answer within the bound (rather than a refusal or a lost link).
        self.timed_out = timed_out
        super().__init__(message)


def _detail(data: Any) -> str:
    if data is None:
        return ""
    if isinstance(data, dict):
        for key in ("message", "details", "detail", "reason"):
            if isinstance(data.get(key), str):
                data = data[key]
                break
    text = str(data)
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


async def ask_client(
    method: str, request: Callable[[], Awaitable[T]], *, bound_s: float = CLIENT_BOUND_S
) -> T:
    """``await request()`` within ``bound_s`` seconds; every way it can fail
    raises :class:`ClientCallError` naming ``method``. Cancellation passes
    through."""
    try:
        with anyio.fail_after(bound_s):
            return await request()
    except TimeoutError:
        raise ClientCallError(
            method, f"the editor did not answer {method} within {bound_s:g} s", timed_out=True
        ) from None
    except RequestError as exc:
        detail = _detail(exc.data)
        raise ClientCallError(
            method,
            f"the editor answered {method} with an error: {exc} (code {exc.code})"
            + (f": {detail}" if detail else ""),
        ) from exc
    except ConnectionError as exc:
        raise ClientCallError(
            method, f"the editor is not connected any more ({method}: {exc})"
        ) from exc
    except ValidationError as exc:
        raise ClientCallError(
            method, f"the editor's answer to {method} is malformed: {_detail(exc)}"
        ) from exc


def client_session(method: str, session_id: str | None) -> str:
    """The ACP session a request is for; a request outside any session is a
    bug of the caller, reported as such."""
    if session_id is None:
        raise ClientCallError(method, f"{method} needs an ACP session, and none is active")
    return session_id
