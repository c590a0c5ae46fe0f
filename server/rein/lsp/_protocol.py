"""pygls plumbing: Rein's protocol class and the loop that feeds it frames.

Custom messages' params and results stay plain dicts: by default pygls
turns the params of methods it does not know into namedtuples (keys that
are not Python names get renamed, and a namedtuple sent back serialises as
a JSON array). Rein validates custom params with pydantic instead.

:class:`ReinProtocol` makes the wire robust (docs/protocol.md, "Malformed
messages"): every request gets exactly one response; a message that is not
JSON, not a JSON-RPC message, nested too deep, not valid Unicode, or whose
params do not fit the method's LSP type is answered with -32700, -32600 or
-32602 naming the field; no traceback or file path reaches the client (it
goes to the log); quoted values in error messages are bounded. (A late
answer to a request Rein gave up on finds its request still pending: Rein
never cancels pygls's future of a request it sent, see
:meth:`rein.lsp.channel.ClientChannel.request`.)
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable, Generator
from typing import Any

import attrs
from cattrs import BaseValidationError, Converter, transform_error
from lsprotocol import types as lsp
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
)
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    MsgId,
)
from pygls.protocol.language_server import _prepare_command_arguments, lsp_method

from rein.lsp._depth import deep_envelope, too_deep
from rein.lsp._envelope import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_DEPTH,
    PARSE_ERROR,
    Envelope,
    Rejected,
    bounded,
    classify,
    find_problem,
    nesting_problem,
)
from rein.lsp._framing import FrameError, FrameReader
from rein.lsp._memory import MemoryRelease
from rein.lsp.errors import log_failed_request

__all__ = ["ReinProtocol", "plain_dict_converter", "serve_frames"]

log = logging.getLogger(__name__)

_INTERNAL = -32603


def _as_is(obj: Any, cls: type) -> Any:
    # Missing fields (params may be omitted) are None; unknown keys are dropped.
    return cls(**{f.name: obj.get(f.name) for f in attrs.fields(cls)})


def _action_or_command(obj: Any, _type: Any) -> Any:
    # lsprotocol 2025.0.0 can parse a CodeAction carrying a command object as
    # a Command: decide by the shape of "command".
    if isinstance(obj, dict) and isinstance(obj.get("command"), str):
        return converter_for_actions.structure(obj, lsp.Command)
    return converter_for_actions.structure(obj, lsp.CodeAction)


converter_for_actions: Converter = default_converter()


def plain_dict_converter() -> Converter:
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCResponseMessage, JsonRPCNotification):
        converter.register_structure_hook(cls, _as_is)
    converter.register_structure_hook(lsp.Command | lsp.CodeAction, _action_or_command)
    result: Converter = converter
    return result


_SNAKE = re.compile(r"_([a-z])")
_ERROR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def _wire_names(text: str) -> str:
    """cattrs speaks of ``text_document``; the client sent ``textDocument``."""
    return _SNAKE.sub(lambda m: m.group(1).upper(), text).replace("$.", "")


def _structure_problem(exc: BaseException) -> str:
    if isinstance(exc, BaseValidationError):
        problems = [_wire_names(p) for p in transform_error(exc, path="$")]
        return "; ".join(problems[:5]) + ("; …" if len(problems) > 5 else "")
    return f"params do not have the expected shape ({type(exc).__name__})"


def _internal(kind: str) -> str:
    return f"internal error ({bounded(kind, 80)}); the details are in the server log"


def internal_message(exc: BaseException) -> str:
    """What the client is told about an exception a handler raised: the
    message of an error Rein raises on purpose (written for the person,
    redacted), else only the exception's type (its text can hold file paths)."""
    from rein.harness.errors import ReinError
    from rein.harness.redaction import redact

    if isinstance(exc, ReinError):
        return redact(str(exc))
    return _internal(type(exc).__name__)


def public_error(error: lsp.ResponseError) -> lsp.ResponseError:
    """An error as the client may see it: no traceback (pygls puts one in
    ``data`` when it turns an exception into an internal error; then the
    exception's text goes too), a bounded message."""
    data = error.data
    if isinstance(data, dict) and "traceback" in data:
        if error.code == _INTERNAL:
            head = error.message.split(":", 1)[0].strip()
            return lsp.ResponseError(
                code=_INTERNAL, message=_internal(head if _ERROR_NAME.fullmatch(head) else "error")
            )
        data = None
    return lsp.ResponseError(code=error.code, message=bounded(error.message), data=data)


class ReinProtocol(LanguageServerProtocol):
    """pygls's LSP protocol with a robust intake (:meth:`handle_frame`) and
    errors fit for the client."""

    def handle_frame(self, body: bytes, reader: FrameReader | None = None) -> None:
        """One framed body: decode, check, structure, dispatch. Never raises
        (except SystemExit from ``exit``): every request is answered."""
        if too_deep(body, MAX_DEPTH):
            self._reject_deep(body)
            return
        try:
            data = json.loads(body.decode("utf-8"))
        except UnicodeDecodeError as exc:
            self._reject(
                Rejected(PARSE_ERROR, f"the message is not UTF-8 (byte {exc.start})", None)
            )
            if reader is not None:
                reader.recover(body)
            return
        except (ValueError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            self._reject(Rejected(PARSE_ERROR, f"the message is not JSON: {reason}", None))
            if reader is not None:
                reader.recover(body)
            return
        envelope = classify(data)
        if isinstance(envelope, Rejected):
            self._reject(envelope)
            return
        if envelope.kind != "response":
            problem = find_problem(data)
            if problem is not None:
                code = INVALID_PARAMS if problem.startswith("params") else INVALID_REQUEST
                self._reject_or_log(envelope, Rejected(code, problem, envelope.id))
                return
        try:
            message = self._structure(data, envelope)
        except JsonRpcException as exc:
            self._reject_or_log(envelope, Rejected(exc.code, exc.message, envelope.id))
            return
        try:
            self.handle_message(message)
        except JsonRpcException as exc:
            self._reject_or_log(envelope, Rejected(exc.code, exc.message, envelope.id))
        except Exception:
            log.exception("failed to handle %s %r", envelope.kind, envelope.method)
            self._reject_or_log(envelope, Rejected(_INTERNAL, "internal error", envelope.id))

    def _reject_deep(self, body: bytes) -> None:
        """A body nested deeper than ``MAX_DEPTH``, refused unparsed: under
        its id when the id comes before the part too deep (InvalidParams
        when that part is in ``params``), else a parse error."""
        deep = deep_envelope(body, MAX_DEPTH)
        problem = nesting_problem(deep.path or ("message",), MAX_DEPTH)
        envelope = classify(deep.members)
        if isinstance(envelope, Envelope):
            code = INVALID_PARAMS if deep.path[:1] == ("params",) else INVALID_REQUEST
            self._reject_or_log(envelope, Rejected(code, problem, envelope.id))
        else:
            code = PARSE_ERROR if envelope.id is None else INVALID_REQUEST
            self._reject(Rejected(code, problem, envelope.id))

    def _structure(self, data: dict[str, Any], envelope: Envelope) -> Any:
        method = envelope.method or ""
        params = data.get("params")
        if method == lsp.WORKSPACE_EXECUTE_COMMAND and isinstance(params, dict):
            arguments = params.get("arguments")
            if arguments is not None and not isinstance(arguments, list):
                raise JsonRpcInvalidParams(f"{method}: invalid params: arguments: must be an array")
        try:
            return self.structure_message(data)
        except Exception as exc:
            cause = exc.__cause__ or exc
            if envelope.kind == "response":
                raise JsonRpcInvalidParams(
                    f"the client's answer does not fit: {_structure_problem(cause)}"
                ) from exc
            log.info("%s %r: params do not fit: %s", envelope.kind, method, cause)
            raise JsonRpcInvalidParams(
                f"{bounded(method, 100)}: invalid params: {_structure_problem(cause)}"
            ) from exc

    def _reject_or_log(self, envelope: Envelope, rejected: Rejected) -> None:
        """Requests are answered; a notification cannot be; a response that
        does not fit fails the request waiting for it (never left pending)."""
        if envelope.kind == "request":
            self._reject(rejected)
            return
        log.warning("dropped a %s (%r): %s", envelope.kind, envelope.method, rejected.message)
        if envelope.kind == "response" and envelope.id is not None:
            self._result_types.pop(envelope.id, None)
            future = self._request_futures.pop(envelope.id, None)
            if future is not None and not future.done():
                future.set_exception(JsonRpcInvalidParams(bounded(rejected.message, 300)))

    def _reject(self, rejected: Rejected) -> None:
        log.warning("rejected a message: %s", bounded(rejected.message, 300))
        self._send_error(
            rejected.id, lsp.ResponseError(code=rejected.code, message=rejected.message)
        )

    def _send_error(self, msg_id: MsgId | None, error: lsp.ResponseError) -> None:
        # Plain JSON: the id must be sent, as null for a parse error or an
        # id that was not one.
        shown = public_error(error)
        body: dict[str, Any] = {"code": shown.code, "message": shown.message}
        if shown.data is not None:
            body["data"] = shown.data
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": body})

    def reject_frame(self, error: FrameError) -> None:
        self._reject(Rejected(PARSE_ERROR, error.message, None))

    # ------------------------------------------------------ pygls overrides

    def __init__(self, server: Any, converter: Converter) -> None:
        super().__init__(server, converter)
        #: ``initialize`` arrived (:meth:`_before_initialize` until then).
        self._initialize_asked = False
        #: A ``shutdown`` request came (its handler may still be running):
        #: ``exit`` then ends the process with 0, as the LSP says.
        self.shutdown_received = False

    def _before_initialize(self, message: Any, method: str) -> None:
        """A message before ``initialize``, as the LSP spec says: a
        notification is dropped (``exit`` excepted), a request refused with
        ServerNotInitialized. No handler runs: they need the workspace
        ``initialize`` sets up."""
        msg_id = getattr(message, "id", None)
        if msg_id is None:
            log.warning(
                "dropped a notification (%r) that came before initialize", bounded(method, 100)
            )
            return
        log.warning("refused a request (%r) that came before initialize", bounded(method, 100))
        self._send_error(
            msg_id,
            lsp.ResponseError(
                code=lsp.ErrorCodes.ServerNotInitialized,
                message=f"{bounded(method, 100)}: the server is not initialized (initialize first)",
            ),
        )

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method is not None and not self._initialize_asked:
            if method == lsp.INITIALIZE:
                self._initialize_asked = True
            elif method != lsp.EXIT:
                self._before_initialize(message, method)
                return
        if method == lsp.SHUTDOWN:
            self.shutdown_received = True
        if self._shutdown and getattr(message, "method", lsp.EXIT) != lsp.EXIT:
            if hasattr(message, "method") and getattr(message, "id", None) is not None:
                self._send_error(
                    message.id,
                    lsp.ResponseError(code=INVALID_REQUEST, message="the server is shutting down"),
                )
                return
        super().handle_message(message)

    def _send_handler_result(self, future: Any, *, msg_id: MsgId) -> None:
        exc = None if future.cancelled() else future.exception()
        if isinstance(exc, JsonRpcException):
            # A JSON-RPC error the handler raised on purpose (a setting to
            # fix, an unknown session): one warning line, no traceback.
            self._request_futures.pop(msg_id, None)
            log_failed_request(msg_id, exc)
            self._send_response(msg_id, error=exc.to_response_error())
            return
        if exc is not None:
            self._request_futures.pop(msg_id, None)
            log.error("request %r failed", msg_id, exc_info=exc)
            error = lsp.ResponseError(code=_INTERNAL, message=internal_message(exc))
            self._send_response(msg_id, error=error)
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _send_response(
        self, msg_id: MsgId, result: Any | None = None, error: lsp.ResponseError | None = None
    ) -> None:
        if error is not None:
            if isinstance(error.data, dict) and "traceback" in error.data:
                log.error("request %r failed: %s %s", msg_id, error.message, error.data)
            error = public_error(error)
        super()._send_response(msg_id, result, error)

    @lsp_method(lsp.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(
        self, params: lsp.ExecuteCommandParams
    ) -> Generator[Any, Any, Any]:
        handler = self.fm.commands.get(params.command)
        if handler is None:
            raise JsonRpcInvalidParams(
                f"workspace/executeCommand: invalid params: command: no command "
                f"{bounded(repr(params.command), 80)}"
            )
        try:
            args, kwargs = _prepare_command_arguments(handler, params, self._converter)
        except Exception as exc:
            raise JsonRpcInvalidParams(
                f"{bounded(params.command, 80)}: invalid arguments: {exc}"
            ) from exc
        result = yield handler, args, kwargs
        return result


def _cancellation_is_no_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's exception handler: a handler's task cancelled (the
    server stopping with requests in flight: ``exit`` without ``shutdown``)
    is said in one debug line, not as an error with its traceback; anything
    else goes to the default handler."""
    if isinstance(context.get("exception"), asyncio.CancelledError):
        log.debug("cancelled while the server stopped: %s", context.get("message"))
        return
    loop.default_exception_handler(context)


async def serve_frames(
    read: Callable[[], Awaitable[bytes]],
    protocol: ReinProtocol,
    stop: threading.Event,
    max_bytes: int,
) -> None:
    """Read frames from ``read`` and hand them to ``protocol`` until the
    stream ends or ``stop`` is set."""
    asyncio.get_running_loop().set_exception_handler(_cancellation_is_no_error)
    reader = FrameReader(read, max_bytes)
    memory = MemoryRelease()
    while not stop.is_set():
        frame = await reader.next()
        if frame is None:
            break
        if isinstance(frame, FrameError):
            protocol.reject_frame(frame)
        else:
            memory.release()  # the last large message's handler has run
            protocol.handle_frame(frame, reader)
            memory.handled(len(frame))
        # Yield to the loop between frames: the handlers this frame started
        # run before the next buffered frame is read.
        await asyncio.sleep(0)
