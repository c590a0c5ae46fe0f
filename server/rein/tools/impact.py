"""An edit's impact, said without being asked: when ``edit_file`` or
``write_file`` changes the signature of a Python function or class (its
parameters, its return annotation, its bases, its name), the result says how
many references it has and where (the first few), from the session's
navigator, so the model sees the callers to update before the gates do.

Bounded: the note is given up after :data:`IMPACT_BOUND_S` (a slow or busy
server omits it; the edit is never delayed longer), the two parses run in a
worker thread inside that bound, a file over :data:`MAX_IMPACT_CHARS` gets
no note, and a note that fails (a parse too deep, a server error) is logged
and left out: the edit, already written, never fails because of its note.
"""

from __future__ import annotations

import ast
import logging
from dataclasses import dataclass

import anyio

from rein.harness.navigation_ports import NavigationUnavailable, Navigator, Position
from rein.harness.parse_thread import in_parse_thread
from rein.harness.tools import ToolContext
from rein.tools.nav_text import lsp_lines, utf16_column

__all__ = [
    "IMPACT_BOUND_S",
    "MAX_IMPACT_CHARS",
    "Signature",
    "changed_signatures",
    "impact_note",
]

log = logging.getLogger(__name__)

#: The longest an edit waits for its impact note.
IMPACT_BOUND_S = 1.5
#: A file longer than this (characters, before or after) gets no note.
MAX_IMPACT_CHARS = 300_000
#: How many places the note names.
SHOWN = 5
#: How many changed definitions one edit reports on.
MAX_DEFINITIONS = 3

_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(frozen=True, slots=True)
class Signature:
    """A definition's name (dotted through its enclosing classes and
    functions), what its signature is made of, and where its name is
    (0-based line, character index in that line)."""

    qualname: str
    shape: str
    line: int
    column: int


def _shape(node: _Def) -> str:
    if isinstance(node, ast.ClassDef):
        return "class(" + ", ".join(ast.dump(b) for b in [*node.bases, *node.keywords]) + ")"
    returns = ast.dump(node.returns) if node.returns is not None else ""
    return f"def({ast.dump(node.args)})->{returns}"


def _signatures(text: str) -> dict[str, Signature] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines = lsp_lines(text)
    found: dict[str, Signature] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _Def):
                name = f"{prefix}{child.name}"
                line = child.lineno - 1
                source = lines[line] if line < len(lines) else ""
                keyword = "class" if isinstance(child, ast.ClassDef) else "def"
                index = source.find(child.name, source.find(keyword) + len(keyword))
                found[name] = Signature(name, _shape(child), line, max(index, 0))
                visit(child, f"{name}.")
            elif not isinstance(child, ast.expr):
                visit(child, prefix)

    visit(tree, "")
    return found


def changed_signatures(before: str, after: str) -> tuple[list[Signature], list[str]]:
    """The definitions of ``after`` whose signature differs from
    ``before``'s, and the names of ``before`` no longer defined when
    ``after`` defines as many (renamed, by this guess). Nothing when either
    text does not parse."""
    old, new = _signatures(before), _signatures(after)
    if old is None or new is None:
        return [], []
    changed = [sig for name, sig in new.items() if name in old and old[name].shape != sig.shape]
    gone = [name for name in old if name not in new]
    gone = [name for name in gone if name.rpartition(".")[0] not in gone]
    renamed = gone if gone and len(new) >= len(old) else []
    return changed, renamed


def _offered(ctx: ToolContext, tool: str) -> bool:
    """Whether the note may suggest ``tool`` (the agent is offered it)."""
    return ctx.offered is None or tool in ctx.offered


async def _note(
    navigator: Navigator, rel: str, text: str, sig: Signature, *, lists: bool
) -> str | None:
    line_text = lsp_lines(text)[sig.line]
    position = Position(sig.line, utf16_column(line_text, sig.column))
    try:
        found = await navigator.references(rel, position, include_declaration=False)
    except NavigationUnavailable:
        return None
    places = [f"{loc.path}:{loc.range.start.line + 1}" for loc in found]
    if not places:
        return f"`{sig.qualname}`'s signature changed; it has no references."
    more = f", ... ({len(places) - SHOWN} more)" if len(places) > SHOWN else ""
    count = f"{len(places)} reference{'' if len(places) == 1 else 's'}"
    return f"`{sig.qualname}`'s signature changed; {count}: {', '.join(places[:SHOWN])}{more}" + (
        " (find_references lists them)." if lists else "."
    )


async def impact_note(ctx: ToolContext, rel: str, before: str, after: str) -> str:
    """The lines to add to an edit's result ("" when there is nothing to
    say, no navigator, not Python, a file too large, the server too slow,
    or the note failed)."""
    navigator = ctx.env.navigator
    if navigator is None or not rel.endswith((".py", ".pyi")) or before == after:
        return ""
    if max(len(before), len(after)) > MAX_IMPACT_CHARS:
        return ""
    notes: list[str] = []
    try:
        with anyio.move_on_after(IMPACT_BOUND_S):
            await _collect(ctx, navigator, rel, before, after, notes)
    except Exception:
        log.warning("the impact note of an edit of %s failed", rel, exc_info=True)
        return ""
    return "\n".join(notes)


async def _collect(
    ctx: ToolContext, navigator: Navigator, rel: str, before: str, after: str, notes: list[str]
) -> None:
    changed, renamed = await in_parse_thread(changed_signatures, before, after)
    renames = _offered(ctx, "rename_symbol")
    notes.extend(
        f"`{name}` is no longer defined in {rel}: its callers still use the old name"
        + (" (rename_symbol renames a symbol with its references)." if renames else ".")
        for name in renamed[:MAX_DEFINITIONS]
    )
    lists = _offered(ctx, "find_references")
    for sig in changed[:MAX_DEFINITIONS]:
        note = await _note(navigator, rel, after, sig, lists=lists)
        if note is not None:
            notes.append(note)
