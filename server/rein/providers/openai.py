"""OpenAI-compatible Chat Completions, streamed over SSE.

One wire format serves OpenAI, Ollama, vLLM, the llama.cpp server, LM
Studio and OpenRouter: only the base URL, the key and the model differ.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from httpx_sse import ServerSentEvent

from rein.harness.calls.arguments import parse_arguments
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
    ToolSchema,
)
from rein.providers._errors import error_from_payload
from rein.providers._estimate import estimated_usage
from rein.providers._http import IMAGES_OFF, HttpModel, decode_json, incomplete

__all__ = [
    "OpenAIAssembler",
    "OpenAIModel",
    "openai_messages",
    "openai_tool_choice",
]

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "length",
}


def _user_content(text: str, images: Sequence[ImagePart], send: bool) -> str | list[dict[str, Any]]:
    """A user message's content: its text, or parts when it has images."""
    if not images:
        return text
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for image in images:
        if send:
            url = f"data:{image.mime_type};base64,{image.data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:
            parts.append({"type": "text", "text": image.placeholder(IMAGES_OFF)})
    return parts


def _tool_images(results: Sequence[ToolResultMessage], send: bool) -> dict[str, Any] | None:
    """The user message carrying a batch's tool-result images (Chat
    Completions takes images only in user messages), or None."""
    with_images = [r for r in results if r.images]
    if not with_images:
        return None
    parts: list[dict[str, Any]] = []
    for result in with_images:
        label = f"The images returned by the {result.tool_name} call {result.tool_call_id}:"
        content = _user_content(label, result.images, send)
        assert isinstance(content, list)
        parts.extend(content)
    return {"role": "user", "content": parts}


def openai_messages(
    system: str, messages: Sequence[Message], *, images: bool = True
) -> list[dict[str, Any]]:
    """Rein messages as Chat Completions messages (system prompt first).

    Tool messages carry text only, so the images of a batch of tool results
    follow the batch as one user message naming the call each came from;
    ``images=False`` (a text-only model) sends placeholders instead."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    batch: list[ToolResultMessage] = []

    def close_batch() -> None:
        extra = _tool_images(batch, images)
        if extra is not None:
            out.append(extra)
        batch.clear()

    for message in messages:
        if isinstance(message, ToolResultMessage):
            out.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            )
            batch.append(message)
            continue
        close_batch()
        if isinstance(message, UserMessage):
            content = _user_content(message.content, message.images, images)
            out.append({"role": "user", "content": content})
        elif not message.is_empty():
            calls = message.tool_calls
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for c in calls
                ]
            out.append(entry)
    close_batch()
    return out


def openai_tools(tools: Sequence[ToolSchema]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def openai_tool_choice(choice: ToolChoice) -> Any:
    if choice in ("auto", "required", "none"):
        return choice
    return {"type": "function", "function": {"name": choice}}


@dataclass(slots=True)
class _CallSlot:
    ordinal: int
    id: str | None
    name: str | None
    arguments: list[str] = field(default_factory=list)


class OpenAIAssembler:
    """Assembles ``chat.completion.chunk`` events into one assistant message."""

    def __init__(self, label: str, model: str | None, request: ModelRequest | None = None) -> None:
        self.label = label
        self.done = False
        self._model = model
        #: The request, to estimate the usage of a reply that came without it.
        self._request = request
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._slots: list[_CallSlot] = []
        self._by_index: dict[int, _CallSlot] = {}
        self._finish: str | None = None
        #: The last usage that had a number (a later one without is ignored).
        self._counts: _Counts | None = None

    def feed(self, event: ServerSentEvent) -> list[ModelDelta]:
        data = event.data
        if not data:
            return []
        if data[0] != "{" and data.strip() == "[DONE]":
            self.done = True
            return []
        chunk = decode_json(data, self.label)
        if not isinstance(chunk, dict):
            raise StreamError(
                f"{self.label} sent a chunk that is not a JSON object: {data[:200]!r}"
            )
        try:
            return self._chunk(chunk)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise StreamError(
                f"{self.label} sent a chunk of an unexpected shape ({exc}): {data[:200]!r}"
            ) from exc

    def _chunk(self, chunk: dict[str, Any]) -> list[ModelDelta]:
        if chunk.get("error") and not chunk.get("choices"):
            raise error_from_payload(chunk, label=self.label)
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self._model = chunk["model"]
        usage = chunk.get("usage")
        counts = _counts(usage) if isinstance(usage, dict) else None
        if counts is not None:
            self._counts = counts
        out: list[ModelDelta] = []
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or choice.get("message") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                self._thinking.append(reasoning)
                out.append(ThinkingDelta(reasoning))
            content = delta.get("content")
            if isinstance(content, str) and content:
                self._text.append(content)
                out.append(TextDelta(content))
            for position, call in enumerate(delta.get("tool_calls") or ()):
                out.append(self._tool_call(position, call))
            finish = choice.get("finish_reason")
            if finish:
                self._finish = str(finish)
        return out

    def _tool_call(self, position: int, call: dict[str, Any]) -> ToolCallDelta:
        index = call.get("index")
        ident = call.get("id") or None
        function = call.get("function") or {}
        name = function.get("name") or None
        arguments = function.get("arguments")
        if arguments is None:
            arguments = ""
        elif not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        if not isinstance(index, int):
            # No index (some servers): a new id starts a call, else the last continues.
            known = self._slots[-1] if self._slots else None
            fresh = known is None or (ident is not None and ident != known.id)
            index = -(len(self._slots) + 1) if fresh else -len(self._slots)
        slot = self._by_index.get(index)
        if slot is not None and ident is not None and slot.id is not None and ident != slot.id:
            slot = None  # the same index reused for another call
        if slot is None:
            slot = _CallSlot(len(self._slots), ident, name)
            self._slots.append(slot)
            self._by_index[index] = slot
            slot.arguments.append(arguments)
            return ToolCallDelta(slot.ordinal, ident, name, arguments)
        new_id = ident if slot.id is None else None
        new_name = name if slot.name is None else None
        slot.id = slot.id or ident
        slot.name = slot.name or name
        slot.arguments.append(arguments)
        return ToolCallDelta(slot.ordinal, new_id, new_name, arguments)

    def finish(self) -> AssistantMessage:
        if not self.done and self._finish is None:
            raise incomplete(self.label)
        parts: list[ContentPart] = []
        if self._thinking:
            parts.append(ThinkingPart(thinking="".join(self._thinking)))
        if self._text:
            parts.append(TextPart(text="".join(self._text)))
        for slot in self._slots:
            arguments, error = parse_arguments("".join(slot.arguments))
            parts.append(
                ToolCall(
                    id=slot.id or f"call_{uuid.uuid4().hex[:16]}",
                    name=slot.name or "",
                    arguments=arguments,
                    parse_error=error,
                )
            )
        stop = _STOP_REASONS.get(self._finish or "stop", "stop")
        if self._slots and stop == "stop":
            stop = "tool_use"  # some servers say "stop" after tool calls
        return AssistantMessage(
            content=tuple(parts), stop_reason=stop, usage=self._usage(parts), model=self._model
        )

    def _usage(self, parts: Sequence[ContentPart]) -> Usage:
        """The reported usage; what it lacks (no usage chunk: a server
        without stream_options, a stream cut after its finish_reason; a
        usage of ``{}`` or null counts) estimated and marked, never zero."""
        counts = self._counts
        if counts is not None and counts.prompt is not None and counts.completion is not None:
            return counts.usage(counts.prompt, counts.completion, estimated=False)
        if self._request is None:
            return (
                Usage()
                if counts is None
                else counts.usage(counts.prompt or 0, counts.completion or 0, estimated=False)
            )
        guess = estimated_usage(self._request, parts)
        if counts is None:
            return guess
        prompt = counts.prompt if counts.prompt is not None else guess.input_tokens
        completion = counts.completion if counts.completion is not None else guess.output_tokens
        return counts.usage(prompt, completion, estimated=True)


@dataclass(frozen=True, slots=True)
class _Counts:
    """A usage chunk's numbers; None for a count it did not give."""

    prompt: int | None
    completion: int | None
    cached: int

    def usage(self, prompt: int, completion: int, *, estimated: bool) -> Usage:
        return Usage(
            input_tokens=max(0, prompt - self.cached),
            output_tokens=completion,
            cache_read_tokens=self.cached,
            estimated=estimated,
        )


def _counts(data: dict[str, Any]) -> _Counts | None:
    """The numbers of a ``usage`` object; None when it has neither
    ``prompt_tokens`` nor ``completion_tokens`` (``{}``, nulls)."""
    prompt = _count(data.get("prompt_tokens"))
    completion = _count(data.get("completion_tokens"))
    if prompt is None and completion is None:
        return None
    details = data.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else None
    cached = cached or _count(data.get("prompt_cache_hit_tokens")) or 0
    return _Counts(prompt, completion, cached)


def _count(value: Any) -> int | None:
    """A token count: a finite number not below 0, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return int(value)


class OpenAIModel(HttpModel):
    """Chat Completions over SSE (``POST {baseUrl}/chat/completions``)."""

    provider = "openai"

    def endpoint(self) -> str:
        return "/chat/completions"

    def headers(self) -> dict[str, str]:
        key = self.config.api_key()
        return {"authorization": f"Bearer {key}"} if key else {}

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        options = request.options
        payload: dict[str, Any] = {
            "model": options.model or self.config.model,
            "messages": openai_messages(
                request.system, request.messages, images=self.config.images
            ),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            payload["tools"] = openai_tools(request.tools)
            if options.tool_choice is not None:
                payload["tool_choice"] = openai_tool_choice(options.tool_choice)
        max_tokens = options.max_tokens or self.config.max_tokens
        if max_tokens is not None:
            # OpenAI's own API wants the newer name; every compatible server
            # understands the older one.
            key = "max_completion_tokens" if "api.openai.com" in self.base_url else "max_tokens"
            payload[key] = max_tokens
        temperature = options.temperature
        if temperature is None:
            temperature = self.config.temperature
        if temperature is not None:
            payload["temperature"] = temperature
        return payload

    def assembler(self, request: ModelRequest) -> OpenAIAssembler:
        return OpenAIAssembler(
            self.label, request.options.model or self.config.model or None, request
        )

    def events_from_json(self, data: Any) -> list[ServerSentEvent] | None:
        if isinstance(data, dict) and isinstance(data.get("choices"), list):
            return [ServerSentEvent(data=json.dumps(data)), ServerSentEvent(data="[DONE]")]
        if isinstance(data, dict) and data.get("error"):
            raise error_from_payload(data, label=self.label)
        return None
