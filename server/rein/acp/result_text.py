"""A tool's result as the text of an ACP tool call's content, by the display
kind its tool declared (``tool_call_end.display``). ACP clients render a
text block as markdown: a markdown result and a table (a markdown pipe
table) go as they are, a diff and JSON (pretty-printed when it parses) in a
fenced code block of their language, text as it is. A ``locations``
result (the navigation tools) goes as text, and its places as the call's
locations (:func:`result_locations`)."""

from __future__ import annotations

import json
import re

from rein.harness.calls.display import parse_locations

__all__ = ["result_locations", "result_text"]

#: At most this many places of a ``locations`` result become the call's locations.
MAX_LOCATIONS = 50

_FENCE = re.compile(r"`{3,}")


def _fenced(text: str, language: str) -> str:
    longest = max((len(run) for run in _FENCE.findall(text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{text.strip(chr(10))}\n{fence}"


def result_text(content: str, display: str) -> str:
    """``content`` shown by ``display`` in an ACP text block."""
    if display == "diff":
        return _fenced(content, "diff")
    if display == "json":
        try:
            content = json.dumps(json.loads(content), indent=2, ensure_ascii=False)
        except ValueError:
            pass  # cut short: shown as it is, still in a JSON block
        return _fenced(content, "json")
    return content


def result_locations(content: str, display: str) -> list[tuple[str, int]]:
    """The places a ``locations`` result names, (path, 1-based line), for
    an ACP tool call's ``locations`` (the client follows them)."""
    parsed = parse_locations(content) if display == "locations" else None
    if parsed is None:
        return []
    places = [(path, line) for path, lines in parsed[1] for line, _, _ in lines]
    return places[:MAX_LOCATIONS]
