"""Secrets never leave: the one redactor for what Rein stores, logs, emits
or sends to a model.

:data:`REDACTOR` knows two kinds of secret: the values Rein holds (a
provider's API key is registered with :func:`remember_secret` when it is
read) and common key shapes (``sk-...``, ``sk-ant-...``, GitHub, Slack, AWS
and Google keys, bearer tokens). :func:`redact` replaces each with
``[redacted]``. It is applied where text enters Rein from outside: tool
results (their text and their ``details``, :func:`redact_value`) and
streamed tool output, error reasons, log records and provider error
bodies; the transcript, events, the store and later model requests are
built from that text, so they hold no secret either.

A cheap prefilter (substring checks in C) keeps the common case, text with
no secret, at about a microsecond per few kilobytes.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

__all__ = [
    "REDACTED",
    "REDACTOR",
    "RedactingFilter",
    "Redactor",
    "redact",
    "redact_logs",
    "redact_value",
    "remember_secret",
    "safe_cut",
]

REDACTED = "[redacted]"

#: Key shapes: the prefix a match must contain, and its pattern.
_SHAPES: tuple[tuple[str, str], ...] = (
    ("sk-", r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"),
    ("gh", r"\bgh[pousr]_[A-Za-z0-9]{30,}"),
    ("github_pat_", r"\bgithub_pat_[A-Za-z0-9_]{40,}"),
    ("xox", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
    ("AKIA", r"\bAKIA[0-9A-Z]{16}\b"),
    ("AIza", r"\bAIza[0-9A-Za-z_\-]{35}"),
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{16,}=*")
_SHAPE_RE = re.compile("|".join(pattern for _, pattern in _SHAPES))
#: The prefixes, for the test that keeps :func:`_may_hold_a_shape` in step.
_PREFIXES = tuple(prefix for prefix, _ in _SHAPES)


def _may_hold_a_shape(text: str) -> bool:
    """Whether ``text`` holds a key shape's prefix (:data:`_SHAPES`): the
    substring checks written out, without a generator (a short text, an
    analyzer's message, is checked in a fraction of a microsecond)."""
    return (
        "sk-" in text
        or "gh" in text
        or "github_pat_" in text
        or "xox" in text
        or "AKIA" in text
        or "AIza" in text
    )


#: Shorter values are not treated as secrets (they would redact ordinary words).
MIN_SECRET_CHARS = 8


class Redactor:
    """Replaces known secret values and key shapes in text."""

    def __init__(self) -> None:
        self._values: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def remember(self, value: str | None) -> None:
        """Treat ``value`` as a secret from now on (ignored when too short)."""
        if value is None or len(value.strip()) < MIN_SECRET_CHARS:
            return
        with self._lock:
            self._values = self._values | {value.strip()}

    def forget_all(self) -> None:
        """Tests: start from no known values."""
        with self._lock:
            self._values = frozenset()

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the secrets :meth:`redact` would replace lie in ``text``."""
        found: list[tuple[int, int]] = []
        for value in self._values:
            start = text.find(value)
            while start != -1:
                found.append((start, start + len(value)))
                start = text.find(value, start + 1)
        if _may_hold_a_shape(text):
            found.extend(m.span() for m in _SHAPE_RE.finditer(text))
        if "earer" in text or "EARER" in text:
            found.extend(m.span() for m in _BEARER.finditer(text))
        return found

    def redact(self, text: str) -> str:
        if not text:
            return text
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        if _may_hold_a_shape(text):
            text = _SHAPE_RE.sub(REDACTED, text)
        if "earer" in text or "EARER" in text:
            text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
        return text


#: The most characters :func:`safe_cut` holds back at the end of a text
#: (longer than any key: the end of a longer word is let go).
MAX_HOLD_CHARS = 4096

_SPACE_END = re.compile(r"\s(?=\S*\Z)")
_BEARER_END = re.compile(r"(?i)\bbearer\s*\Z")


def safe_cut(text: str, hold: int = MAX_HOLD_CHARS, redactor: Redactor | None = None) -> int:
    """Where a text that is still arriving (a command's output) may be cut
    so that no secret lies across the cut: the part before it can be
    redacted and sent on its own, the rest waits for more text.

    The cut comes after the last whitespace (a key has none, so a key still
    arriving is held whole), before a trailing ``Bearer`` (its token comes
    next), at most ``hold`` characters from the end, and never inside a
    secret the redactor finds in ``text``. ``len(text)`` when nothing needs
    holding (text that ends with a newline)."""
    space = _SPACE_END.search(text)
    cut = space.end() if space is not None else 0
    bearer = _BEARER_END.search(text, 0, cut)
    if bearer is not None:
        cut = bearer.start()
    cut = max(cut, len(text) - hold)
    spans = (redactor or REDACTOR).spans(text)
    moved = True
    while moved:
        moved = False
        for start, end in spans:
            if start < cut < end:
                cut, moved = start, True
    return max(cut, 0)


#: The process's redactor: secret values are process-wide, like the
#: environment they come from.
REDACTOR = Redactor()
redact = REDACTOR.redact
remember_secret = REDACTOR.remember


def redact_value(value: Any) -> Any:
    """A JSON-like ``value`` (a tool result's ``details``: edit_file's
    diff, a command's note) with every string in it redacted; the value
    itself when nothing changed."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        cleaned = {key: redact_value(item) for key, item in value.items()}
        same = all(cleaned[key] is item for key, item in value.items())
        return value if same else cleaned
    if isinstance(value, list | tuple):
        items = [redact_value(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return type(value)(items)
    return value


class RedactingFilter(logging.Filter):
    """A log handler's filter: the formatted message, redacted (pygls's
    debug lines of what it sends and receives included)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if record.exc_info and record.exc_text is None and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def redact_logs(logger: logging.Logger | None = None) -> None:
    """Add a :class:`RedactingFilter` to every handler of ``logger`` (the root)."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
