"""How a client shows a tool's result: the display kinds a tool declares
(``@tool(display=...)``, ``Toolkit.display``, ``Tool.display``) and the
text a structured result becomes.

The model always reads text; the kind only changes how the panel and
``rein run`` show it. A ``table`` result is a markdown pipe table (a tool
may return its rows: a list of dicts, or a list of lists whose first row is
the header) and a ``json`` result is JSON text (a tool may return the
value); :func:`parse_table` reads such a table back for a renderer.

A ``locations`` result (the navigation tools: ``find_references``,
``rename_symbol``...) is text in this shape, which the panel parses
(:func:`parse_locations` is the reference reading)::

    3 references to `f` in 2 files (basedpyright):
    pkg/a.py
      1:5: def f(x):
    pkg/b.py
      3:1: from pkg.a import f as g
      7:12: return g(2) (as g)
    (4 more left out)

a header line, then groups: a line holding a path (no leading space),
followed by lines ``"  L:C: text"`` (two spaces, 1-based line and column,
the column counted in UTF-16 code units as LSP and VS Code count it,
a colon and a space, the line's text), each place maybe followed by more
of its lines (``find_definition``'s body: lines of four spaces and
``L| text``, or ``… N more lines``), which are not places; a last line in
parentheses may say what was left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

__all__ = [
    "DISPLAY_KINDS",
    "DisplayKind",
    "check_display",
    "display_text",
    "parse_locations",
    "parse_table",
    "table_text",
]

#: ``text`` (the default): as it is; ``markdown``: rendered; ``diff``: a
#: unified diff with its added and removed lines marked; ``table``: a
#: markdown pipe table shown as a table; ``json``: JSON, pretty-printed;
#: ``locations``: places in files (:func:`parse_locations`), shown as links.
DisplayKind = Literal["text", "markdown", "diff", "table", "json", "locations"]
DISPLAY_KINDS: tuple[str, ...] = get_args(DisplayKind)


def check_display(where: str, display: object) -> DisplayKind:
    """``display`` if it is a display kind, else a :class:`TypeError` naming ``where``."""
    if display not in DISPLAY_KINDS:
        raise TypeError(f"{where}: display {display!r} is not one of {', '.join(DISPLAY_KINDS)}")
    kind: DisplayKind = display  # type: ignore[assignment]
    return kind


_LOCATION_LINE = re.compile(r"^  (\d+):(\d+): ?(.*)$")


def parse_locations(
    text: str,
) -> tuple[str, list[tuple[str, list[tuple[int, int, str]]]], str | None] | None:
    """(header, [(path, [(line, column, text)])], trailer) of a
    ``locations`` result (1-based lines and columns); None when ``text`` is
    not one."""
    lines = text.rstrip("\n").splitlines()
    if not lines:
        return None
    header, rest = lines[0], lines[1:]
    trailer: str | None = None
    if rest and rest[-1].startswith("(") and rest[-1].endswith(")"):
        trailer, rest = rest[-1], rest[:-1]
    groups: list[tuple[str, list[tuple[int, int, str]]]] = []
    for line in rest:
        found = _LOCATION_LINE.match(line)
        if found is not None and groups:
            groups[-1][1].append((int(found[1]), int(found[2]), found[3]))
        elif line.startswith("    ") and groups and groups[-1][1]:
            continue  # a place's following lines (a definition's body)
        elif line and not line[0].isspace():
            groups.append((line, []))
        else:
            return None
    return header, groups, trailer


def _cell(value: object) -> str:
    text = "" if value is None else value if isinstance(value, str) else json.dumps(value)
    return " ".join(text.split()).replace("|", "\\|")


def table_text(rows: Sequence[Mapping[str, Any]] | Sequence[Sequence[Any]]) -> str:
    """A markdown pipe table of ``rows``: dicts (the columns are their keys
    in first-seen order, a missing cell empty) or lists whose first row is
    the header. Cells are on one line, their ``|`` escaped."""
    if not rows:
        return ""
    if all(isinstance(row, Mapping) for row in rows):
        header: list[str] = []
        for row in rows:
            for key in row:
                if str(key) not in header:
                    header.append(str(key))
        body = [[row.get(k) for k in header] for row in rows]  # type: ignore[union-attr]
    elif all(isinstance(row, Sequence) and not isinstance(row, str) for row in rows):
        header = [str(cell) for cell in rows[0]]
        body = [list(row) for row in rows[1:]]
    else:
        raise TypeError("a table is a list of dicts or a list of lists (the first the header)")
    lines = [
        "| " + " | ".join(_cell(c) for c in header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for row in body:
        cells = [*row, *[""] * (len(header) - len(row))][: len(header)]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def _split_row(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    cells: list[str] = []
    current = ""
    i = 0
    while i < len(inner):
        if inner[i] == "\\" and i + 1 < len(inner) and inner[i + 1] == "|":
            current += "|"
            i += 2
            continue
        if inner[i] == "|":
            cells.append(current.strip())
            current = ""
        else:
            current += inner[i]
        i += 1
    cells.append(current.strip())
    return cells


def parse_table(text: str) -> tuple[list[str], list[list[str]]] | None:
    """(header, rows) of a markdown pipe table, the whole of ``text``
    (blank lines around it aside); None when ``text`` is not one."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2 or not all("|" in line for line in lines):
        return None
    header = _split_row(lines[0])
    rule = _split_row(lines[1])
    if len(rule) != len(header) or not all(c and set(c) <= set("-: ") for c in rule):
        return None
    rows = []
    for line in lines[2:]:
        cells = _split_row(line)
        rows.append([*cells, *[""] * (len(header) - len(cells))][: len(header)])
    return header, rows


def display_text(where: str, display: DisplayKind, value: object) -> str:
    """The text the model reads of a tool's structured result: a ``table``
    tool's rows as a markdown table, a ``json`` tool's value as indented
    JSON. Anything else is a :class:`TypeError` naming ``where``."""
    if display == "table" and isinstance(value, list | tuple):
        try:
            return table_text(value)
        except TypeError as exc:
            raise TypeError(f"{where}: {exc}") from None
    if display == "json":
        try:
            return json.dumps(value, indent=2, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{where}: the result is not JSON: {exc}") from None
    raise TypeError(
        f"{where} returned {type(value).__name__}; a tool returns a str or a ToolResult "
        "(a table tool also its rows, a json tool also any JSON value)"
    )
