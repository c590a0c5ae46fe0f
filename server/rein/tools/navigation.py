"""The navigation tools: ``find_definition``, ``find_references``,
``hover`` and ``symbols``, answered by the session's
:class:`~rein.harness.navigation_ports.Navigator` (the editor's providers,
or Rein's analyzer servers). Offered only when the session has one
(:func:`rein.tools.registry.navigation_tools`); ``rename_symbol`` is in
:mod:`rein.tools.rename`.

References follow import aliases: a language server (basedpyright) lists
``from a import f as g`` as a reference of ``f`` and stops there, so the
references of ``g`` are asked for at that place too and listed, marked
``(as g)``. A follow-up that fails or runs out of time (all of them
together get :data:`ALIASES_BOUND_S`) is said in the result's last line;
the references already found are kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import anyio
from pydantic import BaseModel, Field

from rein.harness.errors import SandboxError, ToolError
from rein.harness.navigation_ports import (
    CodeLocation,
    CodeRange,
    CodeSymbol,
    NavigationUnavailable,
    Navigator,
    PartialLocations,
    Position,
)
from rein.harness.tools import DisplayKind, Tool, ToolContext, ToolResult
from rein.tools._context import sandbox_of
from rein.tools._files import plural
from rein.tools.approval import check_approval
from rein.tools.nav_syntax import parse_note
from rein.tools.nav_text import (
    Found,
    character_index,
    format_locations,
    lsp_lines,
    symbol_position,
)
from rein.tools.sandbox import Sandbox, hard_link_reason

__all__ = [
    "NAVIGATION_READ_TOOLS",
    "FindDefinitionTool",
    "FindReferencesTool",
    "HoverTool",
    "LineTexts",
    "SymbolsTool",
    "check_readable",
    "follow_aliases",
    "require_navigator",
    "resolve_symbol",
]

#: The navigation tools that change nothing (offered with the read tools).
NAVIGATION_READ_TOOLS = ("find_definition", "find_references", "hover", "symbols")
#: A definition's lines shown by find_definition (its first line included).
MAX_BODY_LINES = 40
#: How many of the definitions found are shown with their lines.
MAX_BODIES = 3
#: How long the outline that finds a definition's end may take.
BODY_BOUND_S = 10.0
#: What a place outside the workspace shows instead of its line (Rein reads
#: no file there; hover still gives the symbol's signature).
OUTSIDE_NOTE = "(outside the workspace: not read; hover gives its signature)"
#: How many import aliases one search follows.
MAX_ALIASES = 10
#: How long following the import aliases of one search may take, in all.
ALIASES_BOUND_S = 20.0
_ALIAS = re.compile(r"\s+as\s+([A-Za-z_]\w*)")
_IMPORT_LINE = re.compile(r"^\s*(from\s+\S+\s+)?import\b|^\s*[\w\s,]*\)?\s*$")


def require_navigator(ctx: ToolContext) -> Navigator:
    navigator = ctx.env.navigator
    if navigator is None:
        raise ToolError(f"{ctx.name} needs a language server, and this session has none.")
    return navigator


def _protected(sandbox: Sandbox, rel: str) -> str:
    """Why reading ``rel`` asks the person first (as ``read_file`` does):
    a protected pattern (approval.denyGlobs), a hard link; else ""."""
    glob = sandbox.denied_by(rel)
    if glob is not None:
        return f"it matches the protected pattern {glob!r}"
    links = sandbox.links(rel)
    return hard_link_reason(links) if links > 1 else ""


async def check_readable(ctx: ToolContext, rel: str) -> None:
    """A ToolError (the person's refusal) unless the person approves
    reading ``rel`` when it is protected; nothing to ask otherwise."""
    _, sandbox = sandbox_of(ctx)
    sandbox.check_not_secret(rel)  # never shown, not even with approval
    why = _protected(sandbox, rel)
    if not why:
        return
    denial = await check_approval(
        ctx,
        "read",
        title=f"Read {rel}",
        detail=f"The agent wants to read {rel} ({ctx.name}), but {why}.",
        action=f"read {rel}",
        force_ask=True,
        why_ask=why,
        about=rel,
    )
    if denial is not None:
        raise ToolError(denial.content)


class LineTexts:
    """The lines of files as the workspace shows them (the editor's
    buffers, the client's over ACP, the disk), read once per call. A
    protected or secret file's lines are never shown (its places are
    listed without their text)."""

    def __init__(self, ctx: ToolContext) -> None:
        self._workspace, self._sandbox = sandbox_of(ctx)
        self._lines: dict[str, list[str] | None] = {}
        self._outside: set[str] = set()

    async def lines(self, path: str) -> list[str] | None:
        if path not in self._lines:
            try:
                rel = self._sandbox.resolve(path)
            except SandboxError:
                # A library outside the workspace (Go's standard library, a
                # virtual environment elsewhere): never read.
                self._outside.add(path)
                self._lines[path] = None
                return None
            try:
                if self._sandbox.secret_by(rel) or _protected(self._sandbox, rel):
                    self._lines[path] = None
                    return None
                content = await self._workspace.read_text(rel)
                self._lines[path] = lsp_lines(content.text)
            except Exception:
                # A file gone since, one that is not text.
                self._lines[path] = None
        return self._lines[path]

    async def line(self, path: str, line: int) -> str | None:
        lines = await self.lines(path)
        return lines[line] if lines is not None and 0 <= line < len(lines) else None

    async def found(self, location: CodeLocation, note: str = "") -> Found:
        """The place with its line's text; a place outside the workspace
        says why it has none (rather than an empty line)."""
        text = await self.line(location.path, location.range.start.line)
        if text is None and location.path in self._outside:
            note = " ".join(filter(None, (OUTSIDE_NOTE, note)))
        return Found(location, text, note)


async def resolve_symbol(
    ctx: ToolContext, path: str, line: int, symbol: str, occurrence: int | None
) -> tuple[str, Position]:
    """The workspace path and the position of ``symbol`` on ``line`` (a
    protected file is read only when the person approves)."""
    workspace, sandbox = sandbox_of(ctx)
    rel = sandbox.resolve(path)
    await check_readable(ctx, rel)
    content = await workspace.read_text(rel)
    return rel, symbol_position(rel, content.text, line, symbol, occurrence)


def _extent(symbols: Sequence[CodeSymbol], at: Position) -> CodeRange | None:
    """The whole range of the outline's symbol whose name is at ``at``."""
    for symbol, _ in _flatten(symbols):
        name = symbol.location.range
        if symbol.extent is not None and name.start <= at <= name.end:
            return symbol.extent
    return None


async def _with_body(navigator: Navigator, texts: LineTexts, location: CodeLocation) -> Found:
    """A definition with its lines: to the end of the symbol the file's
    outline has there (its ``extent``), at most :data:`MAX_BODY_LINES`, the
    rest counted. Just its line when the outline has no such symbol, the
    file cannot be read (a protected file, a library's outside the
    workspace) or the outline fails or takes longer than
    :data:`BODY_BOUND_S`."""
    found = await texts.found(location)
    lines = await texts.lines(location.path)
    if lines is None:
        return found
    with anyio.move_on_after(BODY_BOUND_S):
        try:
            extent = _extent(await navigator.document_symbols(location.path), location.range.start)
        except NavigationUnavailable:
            extent = None
        if extent is None:
            return found
        first = location.range.start.line + 1
        # An end at column 0 is the line before's end (a range ending with a newline).
        last = min(extent.end.line - (extent.end.character == 0), len(lines) - 1)
        body = lines[first : last + 1]
        room = MAX_BODY_LINES - 1
        return Found(
            found.location, found.line_text, body=tuple(body[:room]), more=max(0, len(body) - room)
        )
    return found


def _source(navigator: Navigator) -> str:
    return navigator.source


def _alias_at(line_text: str, location: CodeLocation) -> tuple[str, int] | None:
    """The alias an import gives the name at ``location`` (``f`` in
    ``import f as g``): (``g``, its UTF-16 column), else None."""
    end = character_index(line_text, location.range.end.character)
    found = _ALIAS.match(line_text, end)
    if found is None or not _IMPORT_LINE.search(line_text):
        return None
    index = found.start(1)
    return found[1], len(line_text[:index].encode("utf-16-le", "surrogatepass")) // 2


async def follow_aliases(
    navigator: Navigator, texts: LineTexts, locations: Sequence[CodeLocation]
) -> tuple[list[Found], list[str]]:
    """``locations`` and the references of every import alias among them
    (marked ``(as g)``), each place once; and the navigator's notes (an
    answer that may be incomplete)."""
    seen: set[tuple[str, Position]] = set()
    found: list[Found] = []
    notes: list[str] = []
    pending: list[tuple[CodeLocation, str]] = [(loc, "") for loc in locations]
    followed = 0
    deadline = anyio.current_time() + ALIASES_BOUND_S
    while pending:
        location, note = pending.pop(0)
        key = (location.path, location.range.start)
        if key in seen:
            continue
        seen.add(key)
        item = await texts.found(location, note)
        found.append(item)
        if item.line_text is None or followed >= MAX_ALIASES:
            continue
        alias = _alias_at(item.line_text, location)
        if alias is None:
            continue
        followed += 1
        name, column = alias
        more: Sequence[CodeLocation] = ()
        with anyio.move_on_after(max(0.0, deadline - anyio.current_time())) as bound:
            try:
                more = await navigator.references(
                    location.path, Position(location.range.start.line, column)
                )
            except NavigationUnavailable as exc:
                notes.append(f"the uses of the alias `{name}` are not listed: {exc}")
                continue
        if bound.cancelled_caught:
            notes.append(
                f"import aliases not all followed: {ALIASES_BOUND_S:g} s spent "
                f"(the uses of `{name}` and later aliases are not listed)"
            )
            followed = MAX_ALIASES
            continue
        if isinstance(more, PartialLocations):
            notes.append(more.note)
        pending.extend((loc, f"(as {name})") for loc in more)
    return found, notes


class _At(BaseModel):
    path: str = Field(description="File the symbol is written in, relative to the workspace root.")
    line: int = Field(description="1-based line number (as read_file shows it).")
    symbol: str = Field(description="The symbol's name as it is written on that line.")
    occurrence: int | None = Field(
        None, description="Which occurrence on the line (1 = first), when the name is there twice."
    )


class FindReferencesArgs(_At):
    pass


class FindDefinitionArgs(_At):
    pass


class HoverArgs(_At):
    pass


class _NavigationTool(Tool[Any]):
    tool_class = "read"
    display: DisplayKind = "locations"

    async def _ask(self, ctx: ToolContext, call: Any, rel: str | None = None) -> Any:
        """``call``'s answer; a server's refusal as a ToolError, with why
        when ``rel`` does not parse (gopls: "no identifier found")."""
        try:
            return await call
        except NavigationUnavailable as exc:
            note = await parse_note(ctx, rel) if rel is not None else ""
            raise ToolError(str(exc) + note) from None


class FindReferencesTool(_NavigationTool):
    name = "find_references"
    description = (
        "Every reference to a symbol (a function, class, method, variable), found by the "
        "language server: grouped by file, with each line's text. Unlike grep it finds uses "
        "under another name (`import f as g`) and skips matches that are other things."
    )
    args_model = FindReferencesArgs
    prompt_section: str = (
        "`find_references` lists every use of a symbol (including through an import alias); "
        "prefer it to grep before you change a function, class or method."
    )

    async def execute(self, args: FindReferencesArgs, ctx: ToolContext) -> ToolResult:
        navigator = require_navigator(ctx)
        rel, position = await resolve_symbol(
            ctx, args.path, args.line, args.symbol, args.occurrence
        )
        answer = await self._ask(ctx, navigator.references(rel, position), rel)
        texts = LineTexts(ctx)
        found, notes = await self._ask(ctx, follow_aliases(navigator, texts, answer))
        if isinstance(answer, PartialLocations):
            notes.insert(0, answer.note)
        files = len({f.location.path for f in found})
        name = args.symbol.strip()
        header = (
            f"{plural(len(found), 'reference')} to `{name}` in {plural(files, 'file')} "
            f"({_source(navigator)}):"
        )
        trailer = "; ".join(dict.fromkeys(notes)) or None
        text = format_locations(header, found, trailer=trailer)
        return ToolResult(text, details={"count": len(found), "files": files})


class FindDefinitionTool(_NavigationTool):
    name = "find_definition"
    description = (
        "Where a symbol is defined, found by the language server, with the definition's "
        f"lines (its body, up to {MAX_BODY_LINES} lines)."
    )
    args_model = FindDefinitionArgs
    prompt_section: str = "`find_definition` shows where a symbol is defined, with its lines."

    async def execute(self, args: FindDefinitionArgs, ctx: ToolContext) -> ToolResult:
        navigator = require_navigator(ctx)
        rel, position = await resolve_symbol(
            ctx, args.path, args.line, args.symbol, args.occurrence
        )
        answer = await self._ask(ctx, navigator.definition(rel, position), rel)
        texts = LineTexts(ctx)
        found = [
            await _with_body(navigator, texts, loc) if i < MAX_BODIES else await texts.found(loc)
            for i, loc in enumerate(answer)
        ]
        name = args.symbol.strip()
        if not found:
            note = await parse_note(ctx, rel)
            return ToolResult(f"No definition of `{name}` found ({_source(navigator)}).{note}")
        noun = "definition" if len(found) == 1 else "definitions"
        header = f"{len(found)} {noun} of `{name}` ({_source(navigator)}):"
        return ToolResult(format_locations(header, found), details={"count": len(found)})


class HoverTool(_NavigationTool):
    name = "hover"
    description = "A symbol's type, signature and documentation, from the language server."
    args_model = HoverArgs
    display: DisplayKind = "markdown"
    prompt_section: str = "`hover` gives a symbol's type, signature and documentation."

    async def execute(self, args: HoverArgs, ctx: ToolContext) -> ToolResult:
        navigator = require_navigator(ctx)
        rel, position = await resolve_symbol(
            ctx, args.path, args.line, args.symbol, args.occurrence
        )
        answer = await self._ask(ctx, navigator.hover(rel, position), rel)
        name = args.symbol.strip()
        if not answer or not answer.strip():
            note = await parse_note(ctx, rel)
            return ToolResult(f"The language server has nothing to say about `{name}`.{note}")
        return ToolResult(answer.strip()[:6000])


class SymbolsArgs(BaseModel):
    path: str | None = Field(
        None, description="A file whose outline to list, relative to the workspace root."
    )
    query: str | None = Field(
        None, description="Or: a name (or part of one) to search the workspace's symbols for."
    )


def _flatten(symbols: Sequence[CodeSymbol], depth: int = 0) -> list[tuple[CodeSymbol, int]]:
    out: list[tuple[CodeSymbol, int]] = []
    for symbol in symbols:
        out.append((symbol, depth))
        out.extend(_flatten(symbol.children, depth + 1))
    return out


class SymbolsTool(_NavigationTool):
    name = "symbols"
    description = (
        "A file's outline (its classes, functions, methods... with their lines), or with "
        "query the workspace's symbols whose name matches it. Give path or query."
    )
    args_model = SymbolsArgs
    prompt_section: str = (
        "`symbols` outlines a file, or finds where a name is defined in the workspace."
    )

    async def execute(self, args: SymbolsArgs, ctx: ToolContext) -> ToolResult:
        navigator = require_navigator(ctx)
        if (args.path is None) == (args.query is None):
            raise ToolError("Give either path (a file's outline) or query (a workspace search).")
        if args.path is not None:
            workspace, sandbox = sandbox_of(ctx)
            rel = sandbox.resolve(args.path)
            await check_readable(ctx, rel)
            # A file that is not there is an error, not an empty outline.
            await workspace.read_text(rel)
            symbols = _flatten(await self._ask(ctx, navigator.document_symbols(rel), rel))
            where = rel
        else:
            query = (args.query or "").strip()
            if not query:
                raise ToolError("query is empty: give a name or part of one.")
            symbols = [(s, 0) for s in await self._ask(ctx, navigator.workspace_symbols(query))]
            where = f"the workspace matching `{query}`"
        if not symbols:
            return ToolResult(f"No symbols in {where} ({_source(navigator)}).")
        texts = LineTexts(ctx)
        found = [
            Found(
                s.location,
                await texts.line(s.location.path, s.location.range.start.line),
                shown="· " * depth
                + f"{s.kind} {s.name}"
                + (f" in {s.container}" if s.container and not depth else "")
                + (f": {s.detail}" if s.detail else ""),
            )
            for s, depth in symbols
        ]
        header = f"{plural(len(found), 'symbol')} in {where} ({_source(navigator)}):"
        text = format_locations(header, found)
        return ToolResult(text, details={"count": len(found)})
