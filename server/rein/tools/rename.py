"""``rename_symbol``: the language server's rename, applied as an edit.

The navigator answers with text edits per file (nothing applied); they are
applied through the session's Workspace like ``edit_file``'s: one approval
for the whole rename (its diff), each file written with the text it was
planned on. Every file's lock (the ones ``edit_file`` takes) is taken, in
path order, and held while the whole rename is applied as ONE change of
every file (:meth:`~rein.harness.ports.MultiFileWorkspace.apply_changes`:
one mutation generation, one checkpoint change, one ``applyEdit`` in the
editor): a file changed since the rename was planned stops it before
anything is written, and a write that fails anyway puts back the files
already written. Edits the navigator says were computed on another version
or text of a file (:class:`~rein.harness.navigation_ports.FileEdits`) are
refused. The checkpoints, review and the gates see a rename as they see an
edit.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from rein.harness.errors import FileChangedError, ToolError
from rein.harness.navigation_ports import (
    CodeLocation,
    CodeRange,
    FileEdits,
    NavigationUnavailable,
    Position,
    TextReplacement,
)
from rein.harness.ports import FileContent, FileUpdate, MultiFileWorkspace
from rein.harness.tools import Tool, ToolContext, ToolResult
from rein.tools._context import sandbox_of
from rein.tools._files import plural
from rein.tools.approval import check_approval
from rein.tools.edit import bounded_diff, path_lock
from rein.tools.nav_names import check_new_name, declares_member, member_may_be_named
from rein.tools.nav_syntax import parse_note
from rein.tools.nav_text import (
    Found,
    format_locations,
    line_starts,
    lsp_lines,
    symbol_name,
    utf16_column,
)
from rein.tools.navigation import require_navigator, resolve_symbol
from rein.tools.secret_files import SecretFileError

__all__ = ["RenameSymbolArgs", "RenameSymbolTool", "apply_replacements"]


def _offset(starts: list[int], text: str, position: Position) -> int:
    """The string index of an LSP position (UTF-16 character) in ``text``;
    a character past the end of its line is the line's end (LSP clamps it)."""
    if position.line >= len(starts):
        return len(text)
    start = starts[position.line]
    end = starts[position.line + 1] if position.line + 1 < len(starts) else len(text)
    while end > start and text[end - 1] in "\r\n":
        end -= 1  # the line's break is not part of it
    units = 0
    index = start
    while index < end and units < position.character:
        units += 2 if ord(text[index]) > 0xFFFF else 1
        index += 1
    return index


def apply_replacements(text: str, edits: Sequence[TextReplacement]) -> tuple[str, list[Position]]:
    """``text`` with ``edits`` applied (LSP ranges of the original text), and
    where each edit starts in the new text (UTF-16 positions), in order."""
    starts = line_starts(text)
    spans = sorted(
        (_offset(starts, text, e.range.start), _offset(starts, text, e.range.end), e.new_text)
        for e in edits
    )
    for (first, end, _), (start, last, _) in itertools.pairwise(spans):
        if start < end or (first, end) == (start, last):  # two inserts at one place too
            raise ToolError("the language server's rename has overlapping edits; nothing changed.")
    parts: list[str] = []
    where: list[Position] = []
    last = 0
    for start, end, new in spans:
        parts.append(text[last:start])
        before = "".join(parts)
        before_starts = line_starts(before)
        line_start = before_starts[-1]
        where.append(
            Position(
                len(before_starts) - 1,
                utf16_column(before[line_start:], len(before) - line_start),
            )
        )
        parts.append(new)
        last = end
    parts.append(text[last:])
    return "".join(parts), where


#: A Python module and its stub: each is the other's (``a.py``, ``a.pyi``).
_STUB_PAIRS = ((".py", ".pyi"), (".pyi", ".py"))
#: How many of a stub's lines naming the old name are said.
STUB_LINES_SHOWN = 5


async def _stale_stubs(ctx: ToolContext, planned: Mapping[str, object], old: str) -> list[str]:
    """What the rename left in a stub: for each renamed Python module whose
    stub (``a.pyi`` beside ``a.py``; or the module beside a renamed stub) the
    rename did not change and still names ``old`` as a word, a line saying
    where. basedpyright renames neither across a module and its stub (each
    declares the name) nor in a package's ``__init__.pyi`` beside its
    ``__init__.py``: attrs' ``astuple`` renamed in ``__init__.py`` stayed in
    ``__init__.pyi``, importers kept resolving it there, and the analyzer
    gate saw nothing wrong."""
    workspace, sandbox = sandbox_of(ctx)
    word = re.compile(rf"(?<![\w$]){re.escape(old)}(?![\w$])")
    notes: list[str] = []
    for path in sorted(planned):
        for suffix, other in _STUB_PAIRS:
            if not path.endswith(suffix):
                continue
            twin = path[: -len(suffix)] + other
            if twin in planned or sandbox.denied_by(twin) is not None:
                continue
            try:
                text = (await workspace.read_text(twin)).text
            except Exception:  # no such file, not text: nothing left there
                continue
            lines = [i + 1 for i, line in enumerate(lsp_lines(text)) if word.search(line)]
            if not lines:
                continue
            shown = ", ".join(map(str, lines[:STUB_LINES_SHOWN]))
            more = (
                f" and {len(lines) - STUB_LINES_SHOWN} more"
                if len(lines) > STUB_LINES_SHOWN
                else ""
            )
            kind = "the stub of" if other == ".pyi" else "the module of the stub"
            notes.append(
                f"not renamed: {twin} ({kind} {path}) still names `{old}` "
                f"({'line' if len(lines) == 1 else 'lines'} {shown}{more}); the language server's rename does not cross a module and "
                "its stub. Rename it there with edit_file if it is the same symbol."
            )
    return notes


def _check_basis(path: str, edits: Sequence[TextReplacement], content: FileContent) -> None:
    """A ToolError when ``edits`` were computed on another version or text
    of ``path`` than ``content`` (what :class:`FileEdits` says, if it is)."""
    if not isinstance(edits, FileEdits):
        return
    if (edits.version is not None and edits.version != content.version) or (
        edits.text is not None and edits.text != content.text
    ):
        raise ToolError(
            f"{path} changed after the language server computed the rename (it answered for "
            "another version of the file); nothing changed. Rename again."
        )


class RenameSymbolArgs(BaseModel):
    path: str = Field(description="File the symbol is written in, relative to the workspace root.")
    line: int = Field(description="1-based line number (as read_file shows it).")
    symbol: str = Field(description="The symbol's name as it is written on that line.")
    new_name: str = Field(description="The new name.")
    occurrence: int | None = Field(
        None, description="Which occurrence on the line (1 = first), when the name is there twice."
    )


class RenameSymbolTool(Tool[RenameSymbolArgs]):
    name = "rename_symbol"
    description = (
        "Rename a symbol (function, class, method, variable) everywhere it is used, with the "
        "language server's rename: every file that refers to it is changed in one step. "
        "Returns the edited lines."
    )
    args_model = RenameSymbolArgs
    tool_class = "write"
    display = "locations"
    prompt_section: str = (
        "`rename_symbol` renames a symbol everywhere it is used, in one step; prefer it to "
        "editing each use by hand."
    )

    async def execute(self, args: RenameSymbolArgs, ctx: ToolContext) -> ToolResult:
        navigator = require_navigator(ctx)
        new_name = args.new_name.strip()
        member_name = member_may_be_named(args.path, new_name)
        if not member_name:
            check_new_name(args.path, new_name)
        rel, position = await resolve_symbol(
            ctx, args.path, args.line, args.symbol, args.occurrence
        )
        if member_name and not await declares_member(navigator, rel, position):
            check_new_name(args.path, new_name)  # a binding's: refused
        try:
            edits = await navigator.rename(rel, position, new_name)
        except NavigationUnavailable as exc:
            # gopls's "renaming this func ... conflicts with ..." left the
            # model to guess whether part of the rename was made.
            said = str(exc)
            if "nothing changed" not in said.lower():
                said = f"{said.rstrip()} Nothing changed."
            raise ToolError(said + await parse_note(ctx, rel)) from None
        edits = {path: e for path, e in edits.items() if e}
        if not edits:
            raise ToolError(
                f"The language server ({navigator.source}) has no rename for "
                f"`{args.symbol.strip()}` on line {args.line} of {rel}; nothing changed."
                + await parse_note(ctx, rel)
            )
        workspace, sandbox = sandbox_of(ctx)
        planned: dict[str, tuple[FileContent, str, list[Position]]] = {}
        # Two paths of the server's that are one file here (a symlink, a
        # spelling) are merged: their edits apply together, once each.
        by_target: dict[str, list[Sequence[TextReplacement]]] = {}
        for path, replacements in sorted(edits.items()):
            if path.startswith("/"):
                raise ToolError(
                    f"The rename would change {path}, outside the workspace; nothing changed."
                )
            by_target.setdefault(sandbox.resolve(path), []).append(replacements)
        for target, groups in sorted(by_target.items()):
            sandbox.check_writable(target)
            if sandbox.secret_by(target) is not None:
                # Its diff would show the model the file's text (as edit_file's would).
                raise SecretFileError(
                    f"The rename would change {target}, a secret file (tools.secretFiles); "
                    "nothing changed. Ask the person to rename it there."
                )
            content = await workspace.read_text(target)
            for group in groups:
                _check_basis(target, group, content)
            merged = (
                groups[0] if len(groups) == 1 else list(dict.fromkeys(itertools.chain(*groups)))
            )
            updated, lines = apply_replacements(content.text, merged)
            planned[target] = (content, updated, lines)
        diff = "\n".join(bounded_diff(p, c.text, u) for p, (c, u, _) in planned.items())
        count = sum(len(lines) for _, _, lines in planned.values())
        old = args.symbol.strip()
        summary = f"Renamed `{old}` to `{new_name}`: {plural(count, 'edit')} in " + plural(
            len(planned), "file"
        )
        paths = tuple(planned)
        denial = await check_approval(
            ctx,
            "write",
            title=f"Rename {old} to {new_name} ({plural(len(paths), 'file')})",
            detail=diff,
            action=f"rename {old} to {new_name} in {', '.join(paths)}",
            about=paths[0],
            writes=paths,
        )
        if denial is not None:
            return denial
        stubs = await _stale_stubs(ctx, planned, symbol_name(old))
        label = f"Rein: rename {old} to {new_name}"
        return await self._write(ctx, planned, summary, diff, label, stubs)

    async def _write(
        self,
        ctx: ToolContext,
        planned: Mapping[str, tuple[FileContent, str, list[Position]]],
        summary: str,
        diff: str,
        label: str,
        notes: Sequence[str] = (),
    ) -> ToolResult:
        workspace, _ = sandbox_of(ctx)
        if not isinstance(workspace, MultiFileWorkspace):
            raise ToolError(
                "This session's workspace cannot apply a change of several files as one; "
                "nothing changed. Rename with edit_file, one file at a time."
            )
        found: list[Found] = []
        async with contextlib.AsyncExitStack() as locks:
            # Every file's lock, in path order (no two renames deadlock),
            # before the check: no edit of this process comes in between.
            for path in sorted(planned):
                await locks.enter_async_context(path_lock(workspace.root, path))
            updates = [
                FileUpdate(path, updated, content.text, content.version)
                for path, (content, updated, _) in planned.items()
            ]
            try:
                mutation = await workspace.apply_changes(updates, label=label)
            except FileChangedError as exc:
                raise ToolError(f"The rename was not applied: {exc} Rename again.") from None
            except ToolError as exc:
                raise ToolError(
                    f"The rename was not applied: {exc} Read the files again; rename again "
                    "or finish it with edit_file."
                ) from None
        for path, (_, updated, lines) in planned.items():
            new_lines = lsp_lines(updated)
            for start in lines:
                text = new_lines[start.line] if start.line < len(new_lines) else ""
                found.append(Found(CodeLocation(path, CodeRange(start, start)), text))
        span = "; ".join((f"one change: generation {mutation.generation}", *notes))
        text = format_locations(summary + ":", found, trailer=span)
        return ToolResult(
            text,
            details={
                "paths": list(mutation.paths),
                "generation": mutation.generation,
                "diff": diff,
            },
        )
