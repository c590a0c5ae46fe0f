"""JSON with comments, as VS Code reads ``.vscode/mcp.json``: ``//`` and
``/* */`` comments and trailing commas are allowed. Comments become spaces
(newlines kept), so an error's line and column are those of the file."""

from __future__ import annotations

import json
from typing import Any

from rein.harness.errors import ReinError

__all__ = ["JsoncError", "loads_jsonc"]


class JsoncError(ReinError, ValueError):
    """Text that is not JSON (with comments): the message names the line."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def _blank(text: str) -> str:
    """``text`` with every character but newlines replaced by a space."""
    return "".join(c if c == "\n" else " " for c in text)


def _strip(text: str) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(_blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                line = text.count("\n", 0, i) + 1
                raise JsoncError(f"line {line}: a /* comment is never closed", line, 1)
            out.append(_blank(text[i : j + 2]))
            i = j + 2
        elif c in "]}":
            # A trailing comma before a closing bracket: drop it.
            k = len(out) - 1
            while k >= 0 and out[k].isspace():
                k -= 1
            if k >= 0 and out[k].endswith(",") and _ends_a_value(out, k):
                out[k] = out[k][:-1] + " "
            out.append(c)
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ends_a_value(out: list[str], k: int) -> bool:
    """Whether the comma at the end of ``out[k]`` follows a value (not
    ``:``, ``,``, ``[`` or ``{``, which stay errors)."""
    chunk = out[k][:-1].rstrip()
    while not chunk and k > 0:
        k -= 1
        chunk = out[k].rstrip()
    return bool(chunk) and chunk[-1] not in ":,[{"


def loads_jsonc(text: str) -> Any:
    """Parse JSON with comments; :class:`JsoncError` names the line."""
    try:
        return json.loads(_strip(text))
    except json.JSONDecodeError as exc:
        raise JsoncError(
            f"line {exc.lineno} column {exc.colno}: {exc.msg}", exc.lineno, exc.colno
        ) from None
