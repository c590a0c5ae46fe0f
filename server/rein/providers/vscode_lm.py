"""The ``vscode-lm`` provider: the models VS Code offers through its
Language Model API (``vscode.lm``), reached through the editor.

The model sends one ``rein/lm/chat`` request per turn through an
:class:`LmHost` (the language server implements it; this module imports no
pygls) and turns the ``rein/lm/delta`` notifications the editor streams
back into the turn's deltas. The API reports no token counts: usage is
estimated with :mod:`rein.harness.conversation.tokens` and marked ``estimated``.

Wire shapes (docs/protocol.md):

* request ``{requestId, sessionId, model, system, messages, tools, toolMode,
  maxTokens?}`` where a message is ``{role: "user", text}``, ``{role:
  "assistant", text, toolCalls: [{id, name, input}]}`` or ``{role: "tool",
  toolCallId, name, text, isError}``;
* deltas ``{requestId, kind: "text", text}`` and ``{requestId, kind:
  "tool_call", id, name, input}``;
* result ``{stopReason: "stop"|"tool_use"|"length"|"error", error?, deltas?}``
  (``deltas``: how many were sent; the host waits for them all).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Protocol

from rein.harness.calls.arguments import checked_arguments
from rein.harness.errors import AuthError, ProviderError, ReinError, StreamError
from rein.harness.messages import (
    AssistantMessage,
    ContentPart,
    Message,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from rein.harness.ports import (
    ModelDelta,
    ModelRequest,
    TextDelta,
    ToolCallDelta,
    ToolSchema,
    TurnDone,
)
from rein.providers._estimate import estimated_usage

__all__ = [
    "CONSENT_REQUIRED",
    "ConsentRequired",
    "LmHost",
    "LmRequestError",
    "VsCodeLmModel",
    "chat_params",
    "wire_messages",
]

#: The editor's error code for "no person has allowed Rein to use its models yet".
CONSENT_REQUIRED = -32001

Delta = dict[str, Any]


class LmRequestError(ReinError):
    """The editor answered ``rein/lm/chat`` with an error (``code`` as sent)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class ConsentRequired(AuthError):
    """No person has allowed Rein to use the editor's language models yet."""


class LmHost(Protocol):
    """The editor's side of the provider (the language server implements it).

    ``chat`` sends ``rein/lm/chat`` with ``params`` and returns its result;
    until it returns, every ``rein/lm/delta`` for ``params["requestId"]``
    is passed to ``on_delta`` in the order it arrived. Cancelling the call
    cancels the request in the editor (``$/cancelRequest``). An error answer
    raises :class:`LmRequestError`; a host that cannot reach an editor at all
    raises :class:`LmRequestError` too (its own code).
    """

    async def chat(
        self, params: dict[str, Any], on_delta: Callable[[Delta], None]
    ) -> dict[str, Any]: ...


def _user_text(message: UserMessage | ToolResultMessage) -> str:
    text = message.content
    for image in message.images:
        text += "\n" + image.placeholder("the vscode-lm provider sends no images")
    return text


def wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The transcript as ``rein/lm/chat`` sends it (thinking is not sent:
    the API has no place for it)."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            wire.append({"role": "user", "text": _user_text(message)})
        elif isinstance(message, ToolResultMessage):
            wire.append(
                {
                    "role": "tool",
                    "toolCallId": message.tool_call_id,
                    "name": message.tool_name,
                    "text": _user_text(message),
                    "isError": message.is_error,
                }
            )
        else:
            wire.append(
                {
                    "role": "assistant",
                    "text": message.text,
                    "toolCalls": [
                        {"id": c.id, "name": c.name, "input": c.arguments}
                        for c in message.tool_calls
                    ],
                }
            )
    return wire


def _tools_and_mode(
    tools: Sequence[ToolSchema], choice: str | None
) -> tuple[list[ToolSchema], str]:
    """The tools offered and the API's tool mode for a ``tool_choice``: the
    API knows only "auto" and "required", so "none" offers no tool and a
    tool's name offers that one tool, required."""
    if choice in (None, "auto"):
        return list(tools), "auto"
    if choice == "none":
        return [], "auto"
    if choice == "required":
        return list(tools), "required"
    return [t for t in tools if t.name == choice], "required"


def chat_params(
    request: ModelRequest,
    *,
    request_id: str,
    session_id: str | None,
    selector: str,
    max_tokens: int | None,
) -> dict[str, Any]:
    """The ``rein/lm/chat`` params for one turn."""
    tools, mode = _tools_and_mode(request.tools, request.options.tool_choice)
    params: dict[str, Any] = {
        "requestId": request_id,
        "sessionId": session_id,
        "model": request.options.model or selector,
        "system": request.system,
        "messages": wire_messages(request.messages),
        "tools": [
            {"name": t.name, "description": t.description, "inputSchema": t.parameters}
            for t in tools
        ],
        "toolMode": mode,
    }
    limit = request.options.max_tokens or max_tokens
    if limit is not None:
        params["maxTokens"] = limit
    return params


class _End:
    """The chat request returned (or failed): the stream ends."""


_END = _End()


class VsCodeLmModel:
    """A :class:`~rein.harness.ports.Model` answered by the editor's
    language models. ``selector``: ``vendor/family``, a model id, or ``""``
    for the editor's first model. ``idle_timeout``: seconds without a delta
    (or the answer) before the turn fails as stalled."""

    def __init__(
        self,
        host: LmHost,
        selector: str = "",
        *,
        session_id: str | None = None,
        max_tokens: int | None = None,
        idle_timeout: float = 60.0,
    ) -> None:
        self._host = host
        self.selector = selector
        self.session_id = session_id
        self._max_tokens = max_tokens
        self._idle = idle_timeout

    @property
    def name(self) -> str:
        return f"vscode-lm:{self.selector}" if self.selector else "vscode-lm"

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        request_id = uuid.uuid4().hex
        params = chat_params(
            request,
            request_id=request_id,
            session_id=self.session_id,
            selector=self.selector,
            max_tokens=self._max_tokens,
        )
        queue: asyncio.Queue[Delta | _End] = asyncio.Queue()
        call = asyncio.ensure_future(self._host.chat(params, queue.put_nowait))
        call.add_done_callback(lambda _: queue.put_nowait(_END))
        text: list[str] = []
        calls: list[ToolCall] = []
        try:
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), self._idle)
                except TimeoutError:
                    raise StreamError(
                        f"the editor's model sent nothing for {self._idle:g} s "
                        "(model.streamIdleTimeout)",
                        streamed=bool(text or calls),
                    ) from None
                if isinstance(item, _End):
                    break
                delta = self._delta(item, len(calls))
                if isinstance(delta, TextDelta):
                    text.append(delta.text)
                elif isinstance(delta, ToolCallDelta):
                    calls.append(_tool_call(item))
                if delta is not None:
                    yield delta
            result = self._result(call, streamed=bool(text or calls))
        finally:
            if not call.done():
                call.cancel()
        stop = result.get("stopReason")
        if stop == "error":
            raise ProviderError(
                f"the editor's model failed: {result.get('error') or 'no reason given'}",
                streamed=bool(text or calls),
            )
        if stop not in ("stop", "tool_use", "length"):
            raise StreamError(f"rein/lm/chat answered an unknown stopReason {stop!r}")
        content: list[ContentPart] = [TextPart(text="".join(text))] if text else []
        content.extend(calls)
        if calls and stop == "stop":
            stop = "tool_use"
        message = AssistantMessage(
            content=tuple(content),
            stop_reason=stop,
            usage=estimated_usage(request, content),
            model=self.name,
        )
        yield TurnDone(message)

    @staticmethod
    def _delta(item: Delta, index: int) -> ModelDelta | None:
        kind = item.get("kind")
        if kind == "text":
            text = item.get("text")
            if not isinstance(text, str):
                raise StreamError(f"rein/lm/delta: a text delta without text: {item!r:.200}")
            return TextDelta(text) if text else None
        if kind == "tool_call":
            call = _tool_call(item)
            return ToolCallDelta(
                index=index,
                id=call.id,
                name=call.name,
                arguments_delta=json.dumps(call.arguments),
            )
        raise StreamError(f"rein/lm/delta: unknown kind {kind!r}")

    @staticmethod
    def _result(call: asyncio.Future[dict[str, Any]], *, streamed: bool) -> dict[str, Any]:
        try:
            result = call.result()
        except LmRequestError as exc:
            if exc.code == CONSENT_REQUIRED:
                said = str(exc)
                if not said.startswith("consent required"):
                    said = f"consent required: {said}"
                raise ConsentRequired(f"{said}; once allowed, send the prompt again") from exc
            raise ProviderError(f"rein/lm/chat failed: {exc}", streamed=streamed) from exc
        if not isinstance(result, dict):
            raise StreamError(f"rein/lm/chat answered {result!r:.200}, not an object")
        return result


def _tool_call(item: Delta) -> ToolCall:
    ident, name, arguments = item.get("id"), item.get("name"), item.get("input")
    if not isinstance(ident, str) or not ident or not isinstance(name, str) or not name:
        raise StreamError(f"rein/lm/delta: a tool call without id or name: {item!r:.200}")
    if isinstance(arguments, dict):
        checked, error = checked_arguments(arguments)
        return ToolCall(id=ident, name=name, arguments=checked, parse_error=error)
    return ToolCall(
        id=ident, name=name, parse_error=f"the input is not a JSON object: {arguments!r:.100}"
    )
