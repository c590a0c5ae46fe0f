"""Lines from the client that are not JSON-RPC messages are answered here,
never handed to the ACP SDK.

The SDK's transport logs a line that is not JSON and reads on, so the
client hears nothing; and it hands on any JSON value, so a line such as
``42`` or ``[]`` reached its dispatcher, which expects an object, and
ended the connection (``rein acp`` exited on it). :class:`GuardedReader`
stands between stdin and the SDK: a line that does not parse is answered
with JSON-RPC's parse error (-32700), one that is JSON but not an object
with the invalid-request error (-32600), both with a null id as JSON-RPC
2.0 says, and so is an object whose id is not a string, a number or null,
or whose method is not a string (with its id when that is valid), or that
has neither a method nor a result or an error (the SDK took it for the
answer to a request it never sent and dropped it, so the client heard
nothing). The SDK sees only such objects (and blank lines, which it skips).
A ``$/cancel_request`` notification (optional in ACP v1; Rein cancels
prompts with ``session/cancel``) is left out, logged in one line.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["GuardedReader", "problem_answer"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
CANCEL_REQUEST = "$/cancel_request"

log = logging.getLogger(__name__)


def problem_answer(line: bytes) -> bytes | None:
    """The error response for ``line`` when it is not a JSON object (None
    when it is one, or blank)."""
    text = line.strip()
    if not text:
        return None
    try:
        message = json.loads(text)
    except ValueError as exc:
        code, why = PARSE_ERROR, f"Parse error: not JSON ({exc})"
    else:
        if not isinstance(message, dict):
            kind = type(message).__name__
            code, why = INVALID_REQUEST, f"Invalid Request: a message is a JSON object, not {kind}"
        elif "id" in message and not _valid_id(message["id"]):
            code, why = INVALID_REQUEST, "Invalid Request: an id is a string, a number or null"
        elif "method" in message and not isinstance(message["method"], str):
            return _error(
                message.get("id"), INVALID_REQUEST, "Invalid Request: a method is a string"
            )
        elif not {"method", "result", "error"} & message.keys():
            return _error(
                message.get("id"),
                INVALID_REQUEST,
                "Invalid Request: a message has a method (a request or a notification) "
                "or a result or an error (a response)",
            )
        else:
            return None
    return _error(None, code, why)


def _ignored(line: bytes) -> bool:
    """``$/cancel_request``, the protocol's optional cancel of one request,
    which Rein does not implement (``session/cancel`` cancels a prompt): left
    out with a line in the log (the SDK took it for an unknown method and
    logged a traceback)."""
    if CANCEL_REQUEST.encode() not in line:
        return False
    message = json.loads(line)
    if message.get("method") != CANCEL_REQUEST or "id" in message:
        return False
    log.info("ignored %s %s (use session/cancel)", CANCEL_REQUEST, message.get("params"))
    return True


def _valid_id(value: object) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def _error(request_id: object, code: int, message: str) -> bytes:
    answer = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(answer).encode() + b"\n"


class GuardedReader(asyncio.StreamReader):
    """``source`` as the SDK's transport reads it (``readuntil`` a newline,
    ``readexactly`` the rest of a long line), with every line that is not
    a JSON object answered through ``answer`` and left out. A line longer
    than the stream's limit is read whole here before it is checked.
    ``on_end`` is called when the input ends, before the SDK is told (and
    fails the requests still waiting on the client)."""

    def __init__(
        self,
        source: asyncio.StreamReader,
        answer: Callable[[bytes], None],
        on_end: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__()
        self._source = source
        self._answer = answer
        #: Called once the input has ended, before the SDK hears of it.
        self._on_end = on_end

    # ``separator``: typeshed's private buffer protocol; the SDK passes b"\n".
    async def readuntil(self, separator: Any = b"\n") -> bytes:
        while True:
            try:
                line = await self._whole_line(separator)
            except asyncio.IncompleteReadError as exc:  # the last line, without its newline
                reply = problem_answer(exc.partial)
                if reply is not None:
                    self._answer(reply)
                if exc.partial and reply is None:
                    raise  # the SDK takes the last message; the end comes next
                self._on_end()
                raise asyncio.IncompleteReadError(b"", None) from None
            reply = problem_answer(line)
            if reply is None and _ignored(line):
                continue
            if reply is None:
                return line
            self._answer(reply)

    async def readexactly(self, n: int) -> bytes:
        return await self._source.readexactly(n)

    async def _whole_line(self, separator: Any) -> bytes:
        chunks: list[bytes] = []
        while True:
            try:
                chunks.append(await self._source.readuntil(separator))
            except asyncio.LimitOverrunError as exc:
                chunks.append(await self._source.readexactly(exc.consumed))
                continue
            except asyncio.IncompleteReadError as exc:
                raise asyncio.IncompleteReadError(b"".join([*chunks, exc.partial]), None) from None
            return b"".join(chunks)
