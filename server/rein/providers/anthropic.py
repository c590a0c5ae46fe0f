"""The Anthropic Messages API, streamed over SSE.

Thinking blocks keep their signature (and redacted thinking its opaque data)
so they can be sent back verbatim; the system prompt and the last stable
message carry prompt-caching breakpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from httpx_sse import ServerSentEvent

from rein.harness.calls.arguments import checked_arguments, parse_arguments
from rein.harness.errors import StreamError
from rein.harness.messages import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    StopReason,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from rein.harness.ports import (
    ModelDelta,
    ModelRequest,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolChoice,
)
from rein.providers._errors import error_from_payload
from rein.providers._estimate import estimated_usage
from rein.providers._http import IMAGES_OFF, HttpModel, decode_json, incomplete

__all__ = [
    "ANTHROPIC_VERSION",
    "AnthropicAssembler",
    "AnthropicModel",
    "anthropic_messages",
    "anthropic_tool_choice",
]

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
_EPHEMERAL = {"type": "ephemeral"}
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_use",
    "max_tokens": "length",
}


#: The image types the Messages API takes.
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
#: Its limit per image (decoded bytes).
MAX_IMAGE_BYTES = 5 * 1024 * 1024


def _image_blocks(images: Sequence[ImagePart], send: bool) -> list[dict[str, Any]]:
    """Image blocks, or text placeholders for what the API would refuse."""
    blocks: list[dict[str, Any]] = []
    for image in images:
        if not send:
            blocks.append({"type": "text", "text": image.placeholder(IMAGES_OFF)})
        elif image.mime_type not in IMAGE_TYPES:
            blocks.append({"type": "text", "text": image.placeholder("the API takes no such type")})
        elif image.size > MAX_IMAGE_BYTES:
            blocks.append({"type": "text", "text": image.placeholder("over the API's 5 MB")})
        else:
            source: dict[str, Any] = {
                "type": "base64",
                "media_type": image.mime_type,
                "data": image.data,
            }
            blocks.append({"type": "image", "source": source})
    return blocks


def _blocks(message: Message, images: bool = True) -> list[dict[str, Any]]:
    if isinstance(message, UserMessage):
        text: list[dict[str, Any]] = (
            [{"type": "text", "text": message.content}] if message.content else []
        )
        return text + _image_blocks(message.images, images)
    if isinstance(message, ToolResultMessage):
        content: str | list[dict[str, Any]] = message.content
        if message.images:
            content = [{"type": "text", "text": message.content}] if message.content else []
            content += _image_blocks(message.images, images)
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": content,
        }
        if message.is_error:
            block["is_error"] = True
        return [block]
    if message.is_empty():
        return []  # an aborted partial: nothing the API would accept
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ThinkingPart):
            if part.redacted and part.signature:
                blocks.append({"type": "redacted_thinking", "data": part.signature})
            elif part.signature:
                blocks.append(
                    {"type": "thinking", "thinking": part.thinking, "signature": part.signature}
                )
            # Unsigned thinking (another provider, an abort) cannot be sent back.
        elif isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        else:
            blocks.append(
                {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
            )
    return blocks


def anthropic_messages(messages: Sequence[Message], *, images: bool = True) -> list[dict[str, Any]]:
    """Rein messages as Messages API messages: tool results become
    ``tool_result`` blocks of a user message (their images inside them),
    consecutive messages of one role are merged, and the last stable message
    (the one before the newest user turn) gets a cache breakpoint.
    ``images=False`` (a text-only model) sends placeholders for images."""
    out: list[dict[str, Any]] = []
    for message in messages:
        blocks = _blocks(message, images)
        if not blocks:
            continue
        role = "assistant" if isinstance(message, AssistantMessage) else "user"
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    last_user = max((i for i, m in enumerate(out) if m["role"] == "user"), default=-1)
    if last_user >= 1:
        for block in reversed(out[last_user - 1]["content"]):
            if block["type"] not in ("thinking", "redacted_thinking"):
                block["cache_control"] = dict(_EPHEMERAL)
                break
    return out


def anthropic_tool_choice(choice: ToolChoice) -> dict[str, Any]:
    if choice == "auto":
        return {"type": "auto"}
    if choice == "required":
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    return {"type": "tool", "name": choice}


@dataclass(slots=True)
class _Block:
    kind: str
    pieces: list[str] = field(default_factory=list)
    signature: str | None = None
    id: str = ""
    name: str = ""
    ordinal: int = 0
    initial_input: dict[str, Any] = field(default_factory=dict)


class AnthropicAssembler:
    """Assembles Messages API stream events into one assistant message."""

    def __init__(self, label: str, model: str | None, request: ModelRequest | None = None) -> None:
        self.label = label
        self.done = False
        self._model = model
        #: The request, to estimate a count the stream did not give.
        self._request = request
        self._blocks: dict[int, _Block] = {}
        self._tools = 0
        self._stop: str | None = None
        self._usage: dict[str, int] = {}

    def feed(self, event: ServerSentEvent) -> list[ModelDelta]:
        if event.event == "ping" or not event.data:
            return []
        data = decode_json(event.data, self.label)
        if not isinstance(data, dict):
            raise StreamError(
                f"{self.label} sent an event that is not a JSON object: {event.data[:200]!r}"
            )
        try:
            return self._event(data.get("type") or event.event, data)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise StreamError(
                f"{self.label} sent an event of an unexpected shape ({exc!r}): {event.data[:200]!r}"
            ) from exc

    def _event(self, kind: str, data: dict[str, Any]) -> list[ModelDelta]:
        if kind == "content_block_delta":
            return self._delta(self._blocks[data["index"]], data["delta"])
        if kind == "content_block_start":
            return self._start(int(data["index"]), data["content_block"])
        if kind == "message_start":
            message = data["message"]
            self._model = message.get("model") or self._model
            self._take_usage(message.get("usage"))
        elif kind == "message_delta":
            stop = (data.get("delta") or {}).get("stop_reason")
            self._stop = stop or self._stop
            self._take_usage(data.get("usage"))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            raise error_from_payload(data, label=self.label)
        return []

    def _start(self, index: int, block: dict[str, Any]) -> list[ModelDelta]:
        kind = block["type"]
        if kind == "text":
            self._blocks[index] = b = _Block("text")
            text = block.get("text") or ""
            if text:
                b.pieces.append(text)
                return [TextDelta(text)]
        elif kind == "thinking":
            self._blocks[index] = b = _Block("thinking", signature=block.get("signature") or None)
            text = block.get("thinking") or ""
            if text:
                b.pieces.append(text)
                return [ThinkingDelta(text)]
        elif kind == "redacted_thinking":
            self._blocks[index] = _Block("redacted", signature=block.get("data") or "")
        elif kind == "tool_use":
            b = _Block("tool", id=block["id"], name=block["name"], ordinal=self._tools)
            b.initial_input = block.get("input") or {}
            self._blocks[index] = b
            self._tools += 1
            return [ToolCallDelta(b.ordinal, b.id, b.name, "")]
        else:
            self._blocks[index] = _Block("ignored")
        return []

    def _delta(self, block: _Block, delta: dict[str, Any]) -> list[ModelDelta]:
        if block.kind == "ignored":
            return []  # a block type Rein does not use (server tools, ...)
        kind = delta["type"]
        if kind == "text_delta":
            text = delta["text"]
            block.pieces.append(text)
            return [TextDelta(text)] if text else []
        if kind == "input_json_delta":
            partial = delta["partial_json"]
            block.pieces.append(partial)
            return [ToolCallDelta(block.ordinal, None, None, partial)] if partial else []
        if kind == "thinking_delta":
            text = delta["thinking"]
            block.pieces.append(text)
            return [ThinkingDelta(text)] if text else []
        if kind == "signature_delta":
            block.signature = (block.signature or "") + delta["signature"]
        return []

    def _take_usage(self, usage: Any) -> None:
        if isinstance(usage, dict):
            for key, value in usage.items():
                if isinstance(value, int):
                    self._usage[key] = value

    def finish(self) -> AssistantMessage:
        if not self.done:
            raise incomplete(self.label)
        parts: list[ContentPart] = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            if block.kind == "text":
                text = "".join(block.pieces)
                if text:
                    parts.append(TextPart(text=text))
            elif block.kind == "thinking":
                parts.append(
                    ThinkingPart(thinking="".join(block.pieces), signature=block.signature)
                )
            elif block.kind == "redacted":
                parts.append(ThinkingPart(thinking="", signature=block.signature, redacted=True))
            elif block.kind == "tool":
                raw = "".join(block.pieces)
                arguments, error = (
                    parse_arguments(raw) if raw else checked_arguments(block.initial_input)
                )
                parts.append(
                    ToolCall(id=block.id, name=block.name, arguments=arguments, parse_error=error)
                )
        stop = _STOP_REASONS.get(self._stop or "end_turn", "stop")
        return AssistantMessage(
            content=tuple(parts), stop_reason=stop, usage=self._counted(parts), model=self._model
        )

    def _counted(self, parts: Sequence[ContentPart]) -> Usage:
        """The usage the stream reported; a count it did not give (a
        ``message_start`` without ``input_tokens``, a stream without its
        ``message_delta`` usage) estimated and the usage marked so, never 0."""
        counts = self._usage
        given_in, given_out = counts.get("input_tokens"), counts.get("output_tokens")
        guess = (
            estimated_usage(self._request, parts)
            if self._request is not None and (given_in is None or given_out is None)
            else None
        )
        return Usage(
            input_tokens=given_in if given_in is not None or guess is None else guess.input_tokens,
            output_tokens=(
                given_out if given_out is not None or guess is None else guess.output_tokens
            ),
            cache_read_tokens=counts.get("cache_read_input_tokens", 0),
            cache_write_tokens=counts.get("cache_creation_input_tokens", 0),
            estimated=guess is not None,
        )


class AnthropicModel(HttpModel):
    """The Messages API over SSE (``POST {baseUrl}/v1/messages``)."""

    provider = "anthropic"

    def endpoint(self) -> str:
        return "/v1/messages"

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        key = self.config.api_key()
        if key:
            headers["x-api-key"] = key
        return headers

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        options = request.options
        payload: dict[str, Any] = {
            "model": options.model or self.config.model,
            "max_tokens": options.max_tokens or self.config.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": anthropic_messages(request.messages, images=self.config.images),
            "stream": True,
        }
        if request.system:
            payload["system"] = [
                {"type": "text", "text": request.system, "cache_control": dict(_EPHEMERAL)}
            ]
        if request.tools:
            payload["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in request.tools
            ]
            if options.tool_choice is not None:
                payload["tool_choice"] = anthropic_tool_choice(options.tool_choice)
        temperature = options.temperature
        if temperature is None:
            temperature = self.config.temperature
        if temperature is not None:
            payload["temperature"] = temperature
        if self.config.thinking_budget is not None:
            payload["thinking"] = {"type": "enabled", "budget_tokens": self.config.thinking_budget}
        return payload

    def assembler(self, request: ModelRequest) -> AnthropicAssembler:
        return AnthropicAssembler(
            self.label, request.options.model or self.config.model or None, request
        )
