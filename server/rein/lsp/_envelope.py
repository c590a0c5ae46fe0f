"""The JSON-RPC envelope of a decoded message, checked before pygls sees it.

:func:`classify` says what a decoded JSON value is (a request, a
notification, a response) or why it is none of them, with the id to answer
when there is one to answer. :func:`find_problem` looks through a message
for what no handler should receive: nesting deeper than
``MAX_DEPTH`` (a raw body that deep is refused before it is parsed:
:mod:`rein.lsp._depth`) and strings that are not valid Unicode (a lone surrogate,
which JSON can spell as ``"\\ud800"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_DEPTH",
    "PARSE_ERROR",
    "Envelope",
    "Rejected",
    "bounded",
    "classify",
    "find_problem",
    "nesting_problem",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

#: The deepest nesting a message may have (LSP's own messages stay under 20).
MAX_DEPTH = 128
#: The longest error message sent to the client.
MAX_ERROR_CHARS = 1000

MsgId = int | str


@dataclass(frozen=True)
class Envelope:
    kind: Literal["request", "notification", "response"]
    id: MsgId | None
    method: str | None


@dataclass(frozen=True)
class Rejected:
    """Not a message: answer ``code``/``message`` to ``id`` (None: null)."""

    code: int
    message: str
    id: MsgId | None


def bounded(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def _valid_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _type_name(value: Any) -> str:
    return {
        type(None): "null",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def classify(data: Any) -> Envelope | Rejected:
    if isinstance(data, list):
        return Rejected(INVALID_REQUEST, "batch requests are not supported by LSP", None)
    if not isinstance(data, dict):
        return Rejected(
            INVALID_REQUEST, f"a message must be a JSON object, got {_type_name(data)}", None
        )
    has_id = "id" in data
    msg_id = data.get("id")
    answer_to = msg_id if _valid_id(msg_id) else None
    if has_id and answer_to is None:
        return Rejected(
            INVALID_REQUEST, f"id must be an integer or a string, got {_type_name(msg_id)}", None
        )
    if data.get("jsonrpc") != "2.0":
        return Rejected(INVALID_REQUEST, 'jsonrpc must be "2.0"', answer_to)
    if "method" in data:
        method = data["method"]
        if not isinstance(method, str) or not method:
            return Rejected(
                INVALID_REQUEST,
                f"method must be a non-empty string, got {_type_name(method)}",
                answer_to,
            )
        return Envelope("request" if has_id else "notification", answer_to, method)
    if has_id and ("result" in data or "error" in data):
        return Envelope("response", answer_to, None)
    return Rejected(
        INVALID_REQUEST, "a message needs a method (or, as a response, a result)", answer_to
    )


def _path(parts: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in parts) or "message"


def nesting_problem(path: tuple[str | int, ...], max_depth: int = MAX_DEPTH) -> str:
    """What the client is told about a value at ``path`` nested too deep."""
    return f"{bounded(_path(path[:3]), 200)}…: nested deeper than {max_depth} levels"


def find_problem(value: Any, max_depth: int = MAX_DEPTH) -> str | None:
    """The first place in ``value`` nested deeper than ``max_depth`` or
    holding a string that is not valid Unicode, described; None if clean.
    Iterative: a message nested a thousand levels is no recursion error."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > max_depth:
            return nesting_problem(path, max_depth)
        if isinstance(item, str):
            if not _encodable(item):
                return f"{bounded(_path(path), 200)}: not valid Unicode (a lone surrogate)"
        elif isinstance(item, dict):
            for key, child in item.items():
                if not _encodable(key):
                    return f"{bounded(_path(path), 200)}: a key that is not valid Unicode"
                stack.append((child, (*path, key)))
        elif isinstance(item, list):
            stack.extend((child, (*path, i)) for i, child in enumerate(item))
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
