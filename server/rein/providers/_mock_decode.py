"""What the mock server hears: a wire request decoded back into Rein
messages, so a scenario turn's ``expect`` can be checked against it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rein.harness.messages import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["DecodedRequest", "decode_anthropic_request", "decode_openai_request"]


@dataclass(slots=True)
class DecodedRequest:
    system: str
    messages: list[Message]
    tools: list[str]
    tool_choice: str | None


def _text(content: Any) -> str:
    """A content value as text: a string, or the text of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


def _images(content: Any) -> tuple[ImagePart, ...]:
    """The images of a list of parts: Anthropic ``image`` blocks (base64)
    and OpenAI ``image_url`` parts (data URLs)."""
    if not isinstance(content, list):
        return ()
    images: list[ImagePart] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "image":
            source = part.get("source") or {}
            images.append(
                ImagePart(
                    mime_type=str(source.get("media_type", "")), data=str(source.get("data", ""))
                )
            )
        elif part.get("type") == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            head, _, data = url.partition(";base64,")
            images.append(ImagePart(mime_type=head.removeprefix("data:"), data=data))
    return tuple(images)


def _load_arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def decode_openai_request(body: dict[str, Any]) -> DecodedRequest:
    system: list[str] = []
    messages: list[Message] = []
    names: dict[str, str] = {}
    for m in body.get("messages") or []:
        role = m.get("role")
        if role in ("system", "developer"):
            system.append(_text(m.get("content")))
        elif role == "user":
            content = m.get("content")
            messages.append(UserMessage(content=_text(content), images=_images(content)))
        elif role == "tool":
            call_id = str(m.get("tool_call_id") or "")
            messages.append(
                ToolResultMessage(
                    tool_call_id=call_id,
                    tool_name=names.get(call_id, ""),
                    content=_text(m.get("content")),
                )
            )
        elif role == "assistant":
            parts: list[ContentPart] = []
            text = _text(m.get("content"))
            if text:
                parts.append(TextPart(text=text))
            for call in m.get("tool_calls") or []:
                function = call.get("function") or {}
                names[call.get("id", "")] = function.get("name", "")
                parts.append(
                    ToolCall(
                        id=str(call.get("id") or ""),
                        name=str(function.get("name") or ""),
                        arguments=_load_arguments(function.get("arguments")),
                    )
                )
            messages.append(AssistantMessage(content=tuple(parts)))
    tools = [str((t.get("function") or {}).get("name", "")) for t in body.get("tools") or []]
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        choice = (choice.get("function") or {}).get("name")
    return DecodedRequest("\n\n".join(system), messages, tools, choice)


_ANTHROPIC_CHOICE = {"auto": "auto", "any": "required", "none": "none"}


def decode_anthropic_request(body: dict[str, Any]) -> DecodedRequest:
    messages: list[Message] = []
    names: dict[str, str] = {}
    for m in body.get("messages") or []:
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if m.get("role") == "assistant":
            parts: list[ContentPart] = []
            for b in blocks:
                kind = b.get("type")
                if kind == "text":
                    parts.append(TextPart(text=b.get("text", "")))
                elif kind == "thinking":
                    parts.append(
                        ThinkingPart(thinking=b.get("thinking", ""), signature=b.get("signature"))
                    )
                elif kind == "redacted_thinking":
                    parts.append(ThinkingPart(thinking="", signature=b.get("data"), redacted=True))
                elif kind == "tool_use":
                    names[b.get("id", "")] = b.get("name", "")
                    parts.append(
                        ToolCall(
                            id=b.get("id", ""),
                            name=b.get("name", ""),
                            arguments=b.get("input") or {},
                        )
                    )
            messages.append(AssistantMessage(content=tuple(parts)))
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                call_id = str(b.get("tool_use_id") or "")
                messages.append(
                    ToolResultMessage(
                        tool_call_id=call_id,
                        tool_name=names.get(call_id, ""),
                        content=_text(b.get("content")),
                        is_error=bool(b.get("is_error")),
                        images=_images(b.get("content")),
                    )
                )
            elif b.get("type") == "text":
                messages.append(UserMessage(content=str(b.get("text", ""))))
            elif b.get("type") == "image":
                messages.append(UserMessage(content="", images=_images([b])))
    choice = body.get("tool_choice")
    tool_choice: str | None = None
    if isinstance(choice, dict):
        kind = str(choice.get("type"))
        tool_choice = choice.get("name") if kind == "tool" else _ANTHROPIC_CHOICE.get(kind, kind)
    tools = [str(t.get("name", "")) for t in body.get("tools") or []]
    return DecodedRequest(_text(body.get("system")), messages, tools, tool_choice)
