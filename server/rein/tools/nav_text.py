"""The navigation tools' text: a symbol named on a line becomes a
:class:`~rein.harness.navigation_ports.Position`, and the locations a
language server answers become the bounded ``locations`` text the model
reads and the panel shows as links (:mod:`rein.harness.calls.display`).

The model names a line (1-based, as ``read_file`` shows it) and the
symbol's text on it; Rein finds the column (a whole-word match) and counts
it in UTF-16 code units, as the Language Server Protocol does. Columns
shown back are 1-based and counted in UTF-16 code units too (an editor's
position: a character outside the Basic Multilingual Plane, an emoji,
counts two).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rein.harness.errors import ToolError
from rein.harness.navigation_ports import CodeLocation, Position

__all__ = [
    "MAX_LOCATIONS",
    "MAX_OUTPUT_LINES",
    "Found",
    "character_index",
    "format_locations",
    "line_starts",
    "lsp_lines",
    "symbol_name",
    "symbol_position",
    "utf16_column",
]

#: At most this many locations are listed; the rest are counted.
MAX_LOCATIONS = 100
#: At most this many lines of output (header, paths and locations).
MAX_OUTPUT_LINES = 2000
#: A location's line text is cut to this many characters.
MAX_LINE_CHARS = 200


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def lsp_lines(text: str) -> list[str]:
    """The lines of ``text`` as the Language Server Protocol (and
    ``read_file``) counts them: broken only at ``\\n``, ``\\r\\n`` and
    ``\\r`` (``str.splitlines`` also breaks at form feeds, ``\\x85``,
    ``\\u2028``, ...), without the breaks; no empty last line after a final
    break."""
    lines = _LINE_BREAK.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def line_starts(text: str) -> list[int]:
    """The string index where each line of ``text`` starts (LSP breaks;
    after a final break, one more start: ``len(text)``)."""
    return [0, *(m.end() for m in _LINE_BREAK.finditer(text))]


def utf16_column(text: str, index: int) -> int:
    """The UTF-16 offset of character ``index`` of the line ``text``."""
    return len(text[:index].encode("utf-16-le", "surrogatepass")) // 2


def character_index(text: str, character: int) -> int:
    """The character index of UTF-16 offset ``character`` in the line
    ``text`` (past the end: the line's length)."""
    units = 0
    for index, char in enumerate(text):
        if units >= character:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(text)


def symbol_name(symbol: str) -> str:
    """The name a symbol's text stands for: ``obj.method`` -> ``method``,
    ``f()`` -> ``f``."""
    name = symbol.strip().rstrip("()").strip()
    return name.rsplit(".", 1)[-1] if "." in name and not name.endswith(".") else name


def _qualified_starts(symbol: str, name: str, line_text: str) -> list[int]:
    """Where ``name`` is on the line as the end of the dotted ``symbol``
    written there whole (``tu.Reverse``: the ``Reverse`` after ``tu.``, not
    the one in a string or a field of the same name); [] when ``symbol``
    is not dotted or not on the line so."""
    dotted = symbol.strip().rstrip("()").strip()
    if dotted == name or not dotted.endswith(name):
        return []
    pattern = rf"(?<![\w.]){re.escape(dotted)}(?!\w)"
    return [m.end() - len(name) for m in re.finditer(pattern, line_text)]


def symbol_position(
    rel: str, text: str, line: int, symbol: str, occurrence: int | None = None
) -> Position:
    """Where ``symbol`` is on the 1-based ``line`` of ``text``: a whole-word
    match; with ``occurrence`` (1-based) the n-th of several. A ToolError
    the model can act on when the line does not exist, the symbol is not on
    it, or it is there more than once."""
    name = symbol_name(symbol)
    if not name:
        raise ToolError("symbol is empty: give the name as it is written on the line.")
    lines = lsp_lines(text)
    if line < 1 or line > len(lines):
        raise ToolError(
            f"{rel} has {len(lines)} line{'' if len(lines) == 1 else 's'}; there is no line {line}."
        )
    line_text = lines[line - 1]
    starts = _qualified_starts(symbol, name, line_text) or [
        m.start() for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", line_text)
    ]
    if not starts:
        raise ToolError(
            f"`{name}` is not on line {line} of {rel} (as a whole word); the line is:\n"
            f"{line}: {line_text}\nGive the line where the name is written (read_file shows "
            "the line numbers)."
        )
    if occurrence is not None:
        if not 1 <= occurrence <= len(starts):
            raise ToolError(
                f"`{name}` occurs {len(starts)} time{'' if len(starts) == 1 else 's'} on line "
                f"{line} of {rel}; occurrence {occurrence} does not exist."
            )
        start = starts[occurrence - 1]
    elif len(starts) > 1:
        columns = ", ".join(str(utf16_column(line_text, s) + 1) for s in starts)
        raise ToolError(
            f"`{name}` occurs {len(starts)} times on line {line} of {rel} (at columns "
            f"{columns}):\n{line}: {line_text}\nSay which with occurrence (1 for the first)."
        )
    else:
        start = starts[0]
    return Position(line - 1, utf16_column(line_text, start))


@dataclass(frozen=True, slots=True)
class Found:
    """One location to list: where, the text of its line (None: unknown),
    a note after it (``(as g)``), what to show instead of the line's
    text (an outline's ``function f``), and the lines that follow it (a
    definition's body: ``body`` from the next line on, ``more`` how many
    after those were left out)."""

    location: CodeLocation
    line_text: str | None = None
    note: str = ""
    shown: str | None = None
    body: tuple[str, ...] = ()
    more: int = 0


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"


def _entry(found: Found) -> list[str]:
    """The place's line, then its body's lines (``"    L| text"``, their
    indentation kept: not places, :func:`~rein.harness.calls.display.
    parse_locations` passes over them)."""
    start = found.location.range.start
    text = found.line_text
    column = start.character + 1  # 1-based UTF-16, as the editor counts
    shown = _cut((found.shown if found.shown is not None else text or "").strip())
    said = " ".join(filter(None, (shown, found.note)))
    lines = [f"  {start.line + 1}:{column}: {said}".rstrip()]
    first = start.line + 2
    lines += [f"    {first + i}| {_cut(line)}".rstrip() for i, line in enumerate(found.body)]
    if found.more:
        lines.append(f"    … {found.more} more {'line' if found.more == 1 else 'lines'}")
    return lines


def _outside(path: str) -> bool:
    """Whether a place's path is outside the workspace (absolute, or a URI)."""
    return path.startswith("/") or ":" in path.split("/", 1)[0]


def format_locations(
    header: str,
    found: Sequence[Found],
    *,
    max_locations: int = MAX_LOCATIONS,
    max_lines: int = MAX_OUTPUT_LINES,
    trailer: str | None = None,
) -> str:
    """The ``locations`` text: ``header``, then the locations grouped by
    file (in path order, the workspace's before those outside it, each
    file's in line order), at most
    ``max_locations`` of them and ``max_lines`` lines, then a last line in
    parentheses: how many were left out, and ``trailer``."""
    # The workspace's places first: an absolute path (Go's standard library,
    # a virtual environment elsewhere) sorted before them, and gopls's
    # fuzzy workspace-symbol matches in the standard library left the
    # project's own out past the bound.
    ordered = sorted(
        found,
        key=lambda f: (
            _outside(f.location.path),
            f.location.path,
            f.location.range.start,
            f.location.range.end,
        ),
    )
    lines = [header]
    shown = 0
    current: str | None = None
    for item in ordered:
        if shown >= max_locations:
            break
        entry = _entry(item)
        needed = len(entry) + (0 if item.location.path == current else 1)
        if len(lines) + needed > max_lines - 1:
            break
        if item.location.path != current:
            current = item.location.path
            lines.append(current)
        lines.extend(entry)
        shown += 1
    notes: list[str] = []
    if len(ordered) > shown:
        notes.append(f"{len(ordered) - shown} more left out")
    if trailer:
        notes.append(trailer)
    if notes:
        lines.append(f"({'; '.join(notes)})")
    return "\n".join(lines)
