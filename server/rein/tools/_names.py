"""File names as the tools show them: one name, one line.

A file name may hold any byte but ``/`` and NUL: a newline (``y\\nz.py``
would read as the two entries ``y`` and ``z.py``), a carriage return or a
terminal escape sequence (which redraw what a person sees), bidirectional
overrides, or bytes that are not UTF-8 (Python's ``surrogateescape`` gives
lone surrogates, which cannot be encoded for the model at all). Such a name
is shown escaped: ``\\n``, ``\\r``, ``\\t``, ``\\xNN`` for other control
characters and for each undecodable byte, ``\\uNNNN`` for line separators
and bidirectional controls, and its backslashes doubled. Every other name
is shown as it is, backslashes and all. ``list_dir``, ``glob`` and ``grep``
say under their output when a name was escaped (:data:`ESCAPED_NOTE`).
"""

from __future__ import annotations

import re

__all__ = ["ESCAPED_NOTE", "shown_name"]

#: The note under a listing that shows an escaped name.
ESCAPED_NOTE = "[Names with control characters or bytes that are not UTF-8 are shown escaped.]"

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}
#: C0 and C1 controls and DEL; line and paragraph separators; bidirectional
#: marks, embeddings, overrides and isolates; surrogates (undecodable bytes).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte surrogateescape could not decode
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown_name(name: str) -> str:
    """``name`` as one line the model reads unambiguously."""
    if _UNSAFE.search(name) is None:
        return name
    return re.sub(r"[\\]|" + _UNSAFE.pattern, _escape, name)
