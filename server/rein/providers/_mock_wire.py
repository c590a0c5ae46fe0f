"""What the mock server says: a replay turn encoded as OpenAI or Anthropic
SSE events (or a plain JSON reply), and error bodies in each API's shape."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Literal

from rein.harness.messages import (
    AssistantMessage,
    TextPart,
    ThinkingPart,
)
from rein.providers.script import ReplayTurn

__all__ = [
    "WireEvent",
    "anthropic_events",
    "anthropic_message",
    "error_body",
    "malformed_event",
    "openai_completion",
    "openai_events",
]

Api = Literal["openai", "anthropic"]
#: head: before any content; content: streams something to the caller;
#: frame: structure between content; tail: after the last content.
EventKind = Literal["head", "content", "frame", "tail"]

_OPENAI_FINISH = {"stop": "stop", "tool_use": "tool_calls", "length": "length"}
_ANTHROPIC_STOP = {"stop": "end_turn", "tool_use": "tool_use", "length": "max_tokens"}


@dataclass(frozen=True, slots=True)
class WireEvent:
    data: bytes
    kind: EventKind


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _pieces(text: str, size: int) -> list[str]:
    if not text:
        return []
    size = size or len(text)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _raw_arguments(turn: ReplayTurn, index: int) -> str:
    call = turn.tool_calls[index]
    return call.raw_arguments if call.raw_arguments is not None else _dumps(call.arguments)


# ------------------------------------------------------------------- openai


def openai_events(
    turn: ReplayTurn, turn_index: int, model: str, *, include_usage: bool
) -> list[WireEvent]:
    """Chat Completions chunks. Parallel tool calls are interleaved: every
    call's first chunk, then their argument pieces round-robin."""
    message = turn.to_message(turn_index, model)
    ident = f"chatcmpl-mock-{turn_index}"
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + _dumps(body).encode() + b"\n\n"

    events = [WireEvent(chunk({"role": "assistant", "content": ""}), "head")]
    for piece in _pieces(turn.thinking or "", turn.chunk_size):
        events.append(WireEvent(chunk({"reasoning_content": piece}), "content"))
    for piece in _pieces(turn.text, turn.chunk_size):
        events.append(WireEvent(chunk({"content": piece}), "content"))
    fragments: list[list[str]] = []
    for i, call in enumerate(turn.tool_calls):
        header = {
            "index": i,
            "id": turn.tool_call_id(turn_index, i),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        events.append(WireEvent(chunk({"tool_calls": [header]}), "content"))
        fragments.append(_pieces(_raw_arguments(turn, i), turn.chunk_size))
    for step in range(max((len(f) for f in fragments), default=0)):
        for i, pieces in enumerate(fragments):
            if step < len(pieces):
                delta = {"tool_calls": [{"index": i, "function": {"arguments": pieces[step]}}]}
                events.append(WireEvent(chunk(delta), "content"))
    events.append(WireEvent(chunk({}, _OPENAI_FINISH[message.stop_reason]), "tail"))
    if include_usage:
        body = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": _openai_usage(message),
        }
        events.append(WireEvent(b"data: " + _dumps(body).encode() + b"\n\n", "tail"))
    events.append(WireEvent(b"data: [DONE]\n\n", "tail"))
    return events


def _openai_usage(message: AssistantMessage) -> dict[str, Any]:
    usage = message.usage
    prompt = usage.input_tokens + usage.cache_read_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
    }


def openai_completion(turn: ReplayTurn, turn_index: int, model: str) -> dict[str, Any]:
    """A non-streaming ``chat.completion``."""
    message = turn.to_message(turn_index, model)
    reply: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    if turn.thinking:
        reply["reasoning_content"] = turn.thinking
    if turn.tool_calls:
        reply["tool_calls"] = [
            {
                "id": turn.tool_call_id(turn_index, i),
                "type": "function",
                "function": {"name": call.name, "arguments": _raw_arguments(turn, i)},
            }
            for i, call in enumerate(turn.tool_calls)
        ]
    return {
        "id": f"chatcmpl-mock-{turn_index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": reply, "finish_reason": _OPENAI_FINISH[message.stop_reason]}
        ],
        "usage": _openai_usage(message),
    }


# ---------------------------------------------------------------- anthropic


def _sse(kind: str, body: dict[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + _dumps(body).encode() + b"\n\n"


def _anthropic_usage(message: AssistantMessage) -> dict[str, int]:
    return {
        "input_tokens": message.usage.input_tokens,
        "cache_creation_input_tokens": message.usage.cache_write_tokens,
        "cache_read_input_tokens": message.usage.cache_read_tokens,
        "output_tokens": message.usage.output_tokens,
    }


def anthropic_events(turn: ReplayTurn, turn_index: int, model: str) -> list[WireEvent]:
    """Messages API stream events, one content block after the other."""
    message = turn.to_message(turn_index, model)
    usage = _anthropic_usage(message)
    start: dict[str, Any] = {
        "id": f"msg_mock_{turn_index}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    events = [
        WireEvent(_sse("message_start", {"type": "message_start", "message": start}), "head"),
        WireEvent(_sse("ping", {"type": "ping"}), "head"),
    ]
    index = 0

    def block(first: dict[str, Any], deltas: list[dict[str, Any]], start_kind: EventKind) -> None:
        nonlocal index
        body = {"type": "content_block_start", "index": index, "content_block": first}
        events.append(WireEvent(_sse("content_block_start", body), start_kind))
        for delta in deltas:
            body = {"type": "content_block_delta", "index": index, "delta": delta}
            kind: EventKind = "frame" if delta["type"] == "signature_delta" else "content"
            events.append(WireEvent(_sse("content_block_delta", body), kind))
        body = {"type": "content_block_stop", "index": index}
        events.append(WireEvent(_sse("content_block_stop", body), "frame"))
        index += 1

    if turn.thinking:
        deltas = [
            {"type": "thinking_delta", "thinking": p}
            for p in _pieces(turn.thinking, turn.chunk_size)
        ]
        if turn.thinking_signature:
            deltas.append({"type": "signature_delta", "signature": turn.thinking_signature})
        block({"type": "thinking", "thinking": ""}, deltas, "frame")
    if turn.text:
        deltas = [{"type": "text_delta", "text": p} for p in _pieces(turn.text, turn.chunk_size)]
        block({"type": "text", "text": ""}, deltas, "frame")
    for i, call in enumerate(turn.tool_calls):
        first = {"type": "tool_use", "id": turn.tool_call_id(turn_index, i), "name": call.name}
        deltas = [
            {"type": "input_json_delta", "partial_json": p}
            for p in _pieces(_raw_arguments(turn, i), turn.chunk_size)
        ]
        block({**first, "input": {}}, deltas, "content")
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": _ANTHROPIC_STOP[message.stop_reason], "stop_sequence": None},
        "usage": {"output_tokens": usage["output_tokens"]},
    }
    events.append(WireEvent(_sse("message_delta", delta), "tail"))
    events.append(WireEvent(_sse("message_stop", {"type": "message_stop"}), "tail"))
    return events


def anthropic_message(turn: ReplayTurn, turn_index: int, model: str) -> dict[str, Any]:
    """A non-streaming Messages API reply."""
    message = turn.to_message(turn_index, model)
    content: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ThinkingPart):
            content.append(
                {"type": "thinking", "thinking": part.thinking, "signature": part.signature or ""}
            )
        elif isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        else:
            content.append(
                {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
            )
    return {
        "id": f"msg_mock_{turn_index}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _ANTHROPIC_STOP[message.stop_reason],
        "stop_sequence": None,
        "usage": _anthropic_usage(message),
    }


# ---------------------------------------------------------------- errors


def error_body(
    api: Api | None, message: str, kind: str = "invalid_request_error"
) -> dict[str, Any]:
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": None}}


def malformed_event(api: Api) -> bytes:
    if api == "anthropic":
        return b'event: content_block_delta\ndata: {"type": "content_block_delta", "ind\n\n'
    return b'data: {"id": "chatcmpl-mock", "choices": [{"delta": {"content": "x"\n\n'
