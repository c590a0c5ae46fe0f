"""Cheap token estimates for context budgeting (no tokenizer, no deps).

BPE tokenizers spend about one token on a common word, one per four
characters of a long identifier, one per punctuation mark or pair of them,
and roughly one per character of CJK text. :func:`estimate_tokens` counts
those pieces. It is a heuristic, not a tokenizer: it errs high on dense
symbols, the safe side for a budget. Results are cached per text, so
re-estimating an unchanged transcript every turn costs a dictionary lookup
per message.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rein.harness.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
)

__all__ = ["IMAGE_TOKENS", "MESSAGE_OVERHEAD", "estimate_message_tokens", "estimate_tokens"]

#: Tokens every message costs beyond its text (role, separators).
MESSAGE_OVERHEAD = 4
_CALL_OVERHEAD = 8
#: What one image costs: providers scale images to about a megapixel, which
#: is ~1,600 tokens at Anthropic's (width * height / 750).
IMAGE_TOKENS = 1600
_PIECES = re.compile(r"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]+|\n")
#: Below this size the cache costs more than it saves.
_CACHE_FROM = 64


def _count(text: str) -> int:
    tokens = 0
    for piece in _PIECES.findall(text):
        first = piece[0]
        if first.isascii() and (first.isalnum() or first == "_"):
            size = len(piece)  # a word (one token) or a long identifier
            tokens += 1 if size <= 7 else (size + 3) // 4
        elif piece.isascii():
            tokens += (len(piece) + 1) // 2  # punctuation, newlines
        else:
            tokens += len(piece)  # non-ASCII: about one token a character
    return tokens


_cached_count = lru_cache(maxsize=8192)(_count)


def estimate_tokens(text: str) -> int:
    """An estimate of the tokens ``text`` costs a typical BPE model."""
    if not text:
        return 0
    if len(text) < _CACHE_FROM:
        return _count(text)
    return _cached_count(text)


def _call_tokens(call: ToolCall) -> int:
    if not call.arguments:
        return _CALL_OVERHEAD + estimate_tokens(call.name) + 1
    # repr is close enough to the JSON the provider sends, at a third of the cost.
    return _CALL_OVERHEAD + estimate_tokens(call.name) + estimate_tokens(repr(call.arguments))


def estimate_message_tokens(message: Message) -> int:
    """The estimate for one transcript message, overhead included."""
    if isinstance(message, ToolResultMessage):
        return (
            MESSAGE_OVERHEAD
            + estimate_tokens(message.tool_name)
            + estimate_tokens(message.content)
            + IMAGE_TOKENS * len(message.images)
        )
    if not isinstance(message, AssistantMessage):
        return (
            MESSAGE_OVERHEAD + estimate_tokens(message.content) + IMAGE_TOKENS * len(message.images)
        )
    total = MESSAGE_OVERHEAD
    for part in message.content:
        if isinstance(part, TextPart):
            total += estimate_tokens(part.text)
        elif isinstance(part, ThinkingPart):
            total += estimate_tokens(part.thinking)
        else:
            total += _call_tokens(part)
    return total
