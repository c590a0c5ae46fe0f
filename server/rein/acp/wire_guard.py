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
A notification is never answered, so the SDK logged a traceback for each
one it could not route or read (an unknown method, ``session/cancel``
without a string ``sessionId``): one a client sends on every keystroke
flooded the log. Such a notification is left out here, logged in one line:
one whose method is neither ``session/cancel`` nor an extension (``_``...:
the agent's ``ext_notification``), ``$/cancel_request`` among them (optional
in ACP v1; Rein cancels prompts with ``session/cancel``), and a
``session/cancel`` whose params are not ``{sessionId: string}``.

The SDK passes the keys of a request's ``_meta`` to the handler as
arguments, over the request's own fields: ``_meta: {"session_id": X}``
sent a prompt to session X, ``_meta: {"prompt": 5}`` failed it with an
internal error, ``_meta: {"cwd": ...}`` replaced ``cwd``. ``_meta`` is
metadata that must not change what a request means, and Rein reads only
its ``rein`` key (``session/new``'s options): every other key of the
``_meta`` of a protocol method (not an extension's, whose params the agent
gets whole) is left out before the SDK reads the message. A protocol
request without params gets ``{}`` (the SDK's refusal named no field, and
``session/list`` needs none); ``session/cancel`` sent as a request (with an
id) is refused with -32600 saying it is a notification (the SDK answered
Method not found).

**Initialize first.** A request other than ``initialize`` before the
client's ``initialize`` (``session/new``, ``load``, ``resume``, ``fork``,
``prompt``, any) is refused here with -32600 Invalid Request, as ACP's
error table says for "a request other than initialize arrived before
initialization", naming the method; nothing is made. The guard counts the
connection initialized from the ``initialize`` request it passes on (or
the one the fast start answered): a client that pipelines ``session/new``
right behind it is served. Notifications and responses are not refused.

**A bounded line.** One message is at most :data:`MAX_LINE_BYTES` (16 MiB:
a model's whole context is a few MB of text, and Rein offers no images or
audio). A longer line is read on to its end and dropped as it arrives,
never held whole, and answered -32600 with its id when the line starts
``{"jsonrpc": "2.0", "id": ...`` or ``{"id": ...`` (as SDKs write them),
else with a null id; the connection serves on, because one oversized
prompt should not end the person's other sessions and their runs. Only the
line's first :data:`_HEAD_BYTES` (4 KiB) are kept to find the id, so a
string id whose JSON text does not end within them (JSON-RPC sets no
bound; a client's ids are counters or UUIDs) or an id after other keys is
answered null too: reading it would mean holding the line.

**Answers wait for the client.** Each answer the guard writes is drained
(``drain``) before the next line is read: a client that floods bad lines
and does not read its stdout is not read either, rather than growing the
write buffer without bound.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["MAX_LINE_BYTES", "GuardedReader", "problem_answer"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
CANCEL_REQUEST = "$/cancel_request"
#: The notification the SDK routes to the agent, besides the extensions.
SESSION_CANCEL = "session/cancel"
#: What a client sends only as a notification: with an id, it is refused.
NOTIFICATIONS = frozenset({SESSION_CANCEL})
#: How much of a left-out notification's params its log line shows.
LOGGED_PARAMS = 200
#: The one key of a request's ``_meta`` Rein reads (its session options).
META_KEY = "rein"
#: The longest line (one message) read from the client, in bytes.
MAX_LINE_BYTES = 16 * 1024 * 1024
INITIALIZE = "initialize"
#: How much of an over-long line is kept to find its id.
_HEAD_BYTES = 4096
#: The id at the start of a message as SDKs write it (``jsonrpc`` first or
#: not): a number, or a string (escapes included).
_HEAD_ID = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*'
    rb'(-?\d+|"(?:[^"\\]|\\.)*")'
)

log = logging.getLogger(__name__)


def problem_answer(line: bytes) -> bytes | None:
    """The error response for ``line`` when it is not a JSON object (None
    when it is one, or blank)."""
    return _verdict(line)[0]


def _verdict(line: bytes) -> tuple[bytes | None, dict[str, Any] | None]:
    """The error response for ``line``, or the message it holds (None for
    a blank line)."""
    text = line.strip()
    if not text:
        return None, None
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
            reply = _error(
                message.get("id"), INVALID_REQUEST, "Invalid Request: a method is a string"
            )
            return reply, None
        elif message.get("method") in NOTIFICATIONS and "id" in message:
            reply = _error(
                message["id"],
                INVALID_REQUEST,
                f"Invalid Request: {message['method']} is a notification: send it without an id",
            )
            return reply, None
        elif not {"method", "result", "error"} & message.keys():
            reply = _error(
                message.get("id"),
                INVALID_REQUEST,
                "Invalid Request: a message has a method (a request or a notification) "
                "or a result or an error (a response)",
            )
            return reply, None
        else:
            return None, message
    return _error(None, code, why), None


def _ignored(message: dict[str, Any]) -> bool:
    """A notification the SDK cannot route or read: left out with a line in
    the log (the SDK logged a traceback for each)."""
    if "id" in message or "method" not in message:
        return False  # a request (the SDK answers it) or a response
    method, params = message["method"], message.get("params")
    if method.startswith("_"):
        return False  # an extension: the agent's ext_notification
    if method == SESSION_CANCEL:
        if isinstance(params, dict) and isinstance(params.get("sessionId"), str):
            return False
        log.warning(
            "ignored %s: its params are not {sessionId: string}: %.*s",
            method,
            LOGGED_PARAMS,
            json.dumps(params),
        )
        return True
    hint = " (use session/cancel)" if method == CANCEL_REQUEST else ""
    log.info(
        "ignored notification %s%s: not a method rein acp handles; params %.*s",
        method,
        hint,
        LOGGED_PARAMS,
        json.dumps(params),
    )
    return True


def _for_the_sdk(line: bytes, message: dict[str, Any]) -> bytes:
    """``line``, or the message again as the SDK should read it: a
    protocol request without params (JSON-RPC lets a client leave them
    out) with ``{}`` (the SDK refused it without naming a field, also
    ``session/list``, whose params are all optional), and without the keys
    of its params' ``_meta`` but ``rein``, which the SDK would pass as the
    handler's arguments (over the request's own fields)."""
    method, params = message.get("method"), message.get("params")
    if not isinstance(method, str) or method.startswith("_"):
        return line
    if params is None and "id" in message:
        params = {}
    elif not isinstance(params, dict):
        return line
    meta = params.get("_meta")
    if isinstance(meta, dict) and not set(meta) <= {META_KEY}:
        kept = {key: value for key, value in meta.items() if key == META_KEY}
        log.debug("%s: _meta keys left out: %s", method, ", ".join(sorted(set(meta) - {META_KEY})))
        params = {**params, "_meta": kept}
        if not kept:
            del params["_meta"]
    elif params is message.get("params"):
        return line
    return json.dumps({**message, "params": params}).encode() + b"\n"


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
    ``drain`` is awaited after each answer (the output's writer drained)
    before the next line is read. ``on_end`` is called when the input ends,
    before the SDK is told (and fails the requests still waiting on the
    client)."""

    def __init__(
        self,
        source: asyncio.StreamReader,
        answer: Callable[[bytes], None],
        on_end: Callable[[], None] = lambda: None,
        *,
        drain: Callable[[], Awaitable[None]] | None = None,
        initialized: bool = False,
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        super().__init__()
        self._source = source
        self._answer = answer
        #: Called once the input has ended, before the SDK hears of it.
        self._on_end = on_end
        self._drain = drain
        #: The client sent ``initialize`` (or the fast start answered it).
        self.initialized = initialized
        self._max_line = max_line

    async def _reply(self, answer: bytes) -> None:
        """``answer`` written, and the writer drained (when there is one)."""
        self._answer(answer)
        if self._drain is not None:
            try:
                await self._drain()
            except ConnectionError as exc:  # stdout is gone: the SDK's writes see it too
                log.debug("an answer was not delivered: %s", exc)

    def _before_initialize(self, message: dict[str, Any]) -> bytes | None:
        """The -32600 answer to a request other than ``initialize`` before
        it (None: the message passes)."""
        if "id" not in message or "method" not in message:
            return None  # a notification or a response
        if message["method"] == INITIALIZE:
            self.initialized = True
            return None
        if self.initialized:
            return None
        return _error(
            message["id"],
            INVALID_REQUEST,
            f"Invalid Request: {message['method']} before initialize: send initialize "
            "first, and the other requests once it is answered",
        )

    # ``separator``: typeshed's private buffer protocol; the SDK passes b"\n".
    async def readuntil(self, separator: Any = b"\n") -> bytes:
        while True:
            try:
                line = await self._whole_line(separator)
            except _TooLong as long:
                await self._reply(long.answer(self._max_line))
                if not long.ended:
                    continue
                self._on_end()
                raise asyncio.IncompleteReadError(b"", None) from None
            except asyncio.IncompleteReadError as exc:  # the last line, without its newline
                reply, message = _verdict(exc.partial)
                if message is not None:
                    reply = self._before_initialize(message)
                    message = message if reply is None else None
                if reply is not None:
                    await self._reply(reply)
                if message is not None and not _ignored(message):
                    # The SDK takes the last message; the end comes next.
                    raise asyncio.IncompleteReadError(
                        _for_the_sdk(exc.partial, message), None
                    ) from None
                self._on_end()
                raise asyncio.IncompleteReadError(b"", None) from None
            reply, message = _verdict(line)
            if message is not None and _ignored(message):
                continue
            if message is not None:
                reply = self._before_initialize(message)
                if reply is None:
                    return _for_the_sdk(line, message)
            elif reply is None:
                return line  # blank: the SDK skips it
            await self._reply(reply)

    async def readexactly(self, n: int) -> bytes:
        return await self._source.readexactly(n)

    async def _whole_line(self, separator: Any) -> bytes:
        """The next line, whole; past the bound its bytes are dropped as
        they arrive (:class:`_TooLong` at its end)."""
        chunks: list[bytes] = []
        size, head = 0, b""  # head: the line's first _HEAD_BYTES (its id)
        while True:
            ended = True
            try:
                chunk = await self._source.readuntil(separator)
            except asyncio.LimitOverrunError as exc:
                chunk, ended = await self._source.readexactly(exc.consumed), False
            except asyncio.IncompleteReadError as exc:
                if size + len(exc.partial) > self._max_line:
                    raise _TooLong((head + exc.partial)[:_HEAD_BYTES], ended=True) from None
                raise asyncio.IncompleteReadError(b"".join([*chunks, exc.partial]), None) from None
            if len(head) < _HEAD_BYTES:
                head += chunk[: _HEAD_BYTES - len(head)]
            size += len(chunk)
            if size > self._max_line:
                chunks.clear()  # dropped: never held whole
            else:
                chunks.append(chunk)
            if ended:
                if size > self._max_line:
                    raise _TooLong(head)
                return b"".join(chunks)


class _TooLong(Exception):
    """A line over the bound was read to its end (or the input's) and
    dropped. It is outside the error tree: it never leaves the guard, which
    answers it."""

    def __init__(self, head: bytes, *, ended: bool = False) -> None:
        super().__init__()
        self.head = head
        self.ended = ended

    def answer(self, limit: int) -> bytes:
        found = _HEAD_ID.match(self.head)
        try:
            request_id = json.loads(found.group(1)) if found else None
        except ValueError:  # an escape JSON does not know
            request_id = None
        return _error(
            request_id,
            INVALID_REQUEST,
            f"Invalid Request: a message is at most {limit} bytes (rein acp's bound on one "
            "line); this one was longer and was not read",
        )
