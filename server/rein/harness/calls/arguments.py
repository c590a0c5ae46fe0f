"""Tool-call arguments as the model sent them: parsed, and bounded in depth.

A model can send arguments nested hundreds of levels deep: ``json.loads``
fails past about 1,000 levels with a ``RecursionError``, and past about 250
the run's events no longer serialise (pydantic's depth limit), so one such
call failed the whole run. Arguments nested deeper than
:data:`MAX_ARGUMENT_DEPTH` are treated like arguments that are not JSON: the
call keeps empty arguments and a ``parse_error``, and the loop answers it
with the error result the model reads for invalid JSON. The providers parse
with :func:`parse_arguments`; :func:`bounded_tool_calls` checks every final
message (any :class:`~rein.harness.ports.Model`) before the loop uses it.
"""

from __future__ import annotations

import json
from typing import Any

from rein.harness.messages import AssistantMessage, ToolCall

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "bounded_tool_calls",
    "checked_arguments",
    "nested_too_deep",
    "parse_arguments",
]

#: The deepest tool-call arguments may nest (the arguments object is level
#: 1; the schemas of Rein's tools and of MCP tools stay far below).
MAX_ARGUMENT_DEPTH = 64
_TOO_DEEP = f"the arguments are nested deeper than {MAX_ARGUMENT_DEPTH} levels"


def nested_too_deep(value: Any, limit: int = MAX_ARGUMENT_DEPTH) -> bool:
    """True when ``value`` holds containers more than ``limit`` levels deep
    (iterative: any depth is no recursion error)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if level > limit:
            return True
        stack.extend((child, level + 1) for child in children)
    return False


def checked_arguments(value: Any) -> tuple[dict[str, Any], str | None]:
    """Decoded arguments as a call takes them: (arguments, parse_error)."""
    if not isinstance(value, dict):
        return {}, f"the arguments are a JSON {type(value).__name__}, not an object"
    if nested_too_deep(value):
        return {}, _TOO_DEEP
    return value, None


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments from their JSON text: (arguments, parse_error)."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except RecursionError:
        return {}, _TOO_DEEP
    except ValueError as exc:
        return {}, f"{exc} in {raw[:200]!r}"
    return checked_arguments(value)


def bounded_tool_calls(message: AssistantMessage) -> AssistantMessage:
    """``message`` with every tool call whose arguments nest too deep
    turned into a call with empty arguments and a ``parse_error``."""
    if not any(
        isinstance(part, ToolCall) and nested_too_deep(part.arguments) for part in message.content
    ):
        return message
    content = tuple(
        part.model_copy(update={"arguments": {}, "parse_error": _TOO_DEEP})
        if isinstance(part, ToolCall) and nested_too_deep(part.arguments)
        else part
        for part in message.content
    )
    return message.model_copy(update={"content": content})
