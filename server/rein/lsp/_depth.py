"""How deep a JSON text nests, found before it is parsed.

``json.loads`` recurses once per level: a message nested a few thousand
levels deep fails with a ``RecursionError`` that says nothing of the
request, and the request is never answered under its id (the client waits
for ever). :func:`too_deep` looks at the raw body first, at C speed: a body
with at most ``limit`` opening brackets cannot nest deeper (almost every
message); otherwise the strings are taken out and the depth profile of the
brackets left is summed. A body nested deeper than ``limit`` is not parsed:
:func:`deep_envelope` reads its top-level members up to the first level
too deep, so the error can go to the request's id and name the member.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

__all__ = ["DeepMessage", "deep_envelope", "too_deep"]

#: A JSON string (with its escapes).
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
#: The tokens :func:`deep_envelope` reads: strings, scalars, punctuation.
_TOKENS = re.compile(
    _STRING + rb"|-?[0-9][0-9.eE+-]*|true|false|null|[\[\]{}:,]",
)
#: Every byte but quotes and brackets.
_NOT_KEPT = bytes(b for b in range(256) if b not in b'"[{]}')
#: A string once only quotes and brackets are left of the text.
_QUOTED = re.compile(rb'"[^"]*"')
#: ``[`` and ``{`` become +1, ``]`` and ``}`` -1 (as signed bytes).
_SIGNS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_PAIR = b"\x01\xff"
#: The depth profile is summed this many brackets at a time (it stops at
#: the first chunk that goes too deep).
_CHUNK = 65_536
#: Tokens read for the envelope of a deep message before giving up.
_MAX_TOKENS = 100_000


def too_deep(body: bytes, limit: int, *, chunk: int = _CHUNK) -> bool:
    """True when the JSON text ``body`` nests deeper than ``limit`` levels
    (brackets inside strings do not count). Linear, no recursion, and
    every step but the last runs in C; ``chunk`` is a test's knob."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    # Escaped backslashes, then escaped quotes, go; of the rest only quotes
    # and brackets are kept, and the strings (quote to quote) go.
    structure = body.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_KEPT)
    signs = _QUOTED.sub(b"", structure).translate(_SIGNS, b'"')
    # Innermost pairs go, one level a round, while that takes a good part
    # of the text (a wide, shallow text is gone in a few rounds).
    while len(signs) > chunk:
        shorter = signs.replace(_PAIR, b"")
        if len(shorter) > len(signs) - len(signs) // 16:
            break
        signs, limit = shorter, limit - 1
    depth = 0
    view = memoryview(signs).cast("b")
    for start in range(0, len(view), chunk):
        part = view[start : start + chunk]
        if max(accumulate(part, initial=depth)) > limit:
            return True
        depth += sum(part)
    return False


@dataclass(frozen=True)
class DeepMessage:
    """What was read of a message nested too deep: its top-level members
    (scalars as sent, containers as ``{}``/``[]``; ``id``, ``method``,
    ``jsonrpc`` say what it is) and the path to the first level too deep
    (empty when it was not reached)."""

    members: dict[str, Any]
    path: tuple[str | int, ...]


def deep_envelope(body: bytes, limit: int) -> DeepMessage:
    """The top-level members of ``body`` (a JSON text nested deeper than
    ``limit``) read up to the first level too deep, and the path there. At
    most ``_MAX_TOKENS`` tokens are read."""
    members: dict[str, Any] = {}
    #: The open containers (``[`` or ``{``) and the key or index in each.
    kinds: list[bytes] = []
    path: list[str | int] = []
    expect_key = False
    for count, match in enumerate(_TOKENS.finditer(body)):
        if count >= _MAX_TOKENS:
            break
        token = match.group()
        first = token[:1]
        if first in (b"[", b"{"):
            if len(kinds) == 1 and isinstance(path[0], str):
                members[path[0]] = {} if first == b"{" else []
            if len(kinds) >= limit:
                return DeepMessage(members, tuple(path))
            kinds.append(first)
            path.append(0)
            expect_key = first == b"{"
        elif first in (b"]", b"}"):
            if not kinds:
                break
            kinds.pop()
            path.pop()
            if not kinds:
                break
        elif not kinds:
            break
        elif first == b",":
            if kinds[-1] == b"[":
                path[-1] = int(path[-1]) + 1
            else:
                expect_key = True
        elif first == b":":
            expect_key = False
        elif expect_key:
            key = _scalar(token)
            path[-1] = key if isinstance(key, str) else ""
        elif len(kinds) == 1 and isinstance(path[0], str):
            members[path[0]] = _scalar(token)
    return DeepMessage(members, ())


def _scalar(token: bytes) -> Any:
    try:
        return json.loads(token)
    except ValueError:
        return None
