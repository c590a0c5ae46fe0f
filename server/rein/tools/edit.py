"""``edit_file`` and ``write_file``: changes applied through the Workspace
port, each one a new mutation generation (the workspace layer counts it in
the run's record).

``edit_file`` writes with the text it read (``expected_text``): when the
file changed in between (a parallel edit of the same file, another session
or process, the person) the workspace refuses the write, and the edit is
made again on the file's new text while ``old_string`` still matches it
(uniquely), else refused with a message; nothing is overwritten.

``write_file`` of a file the model read in this run is refused when someone
else (the person typing, a command, another session) changed the file since
that read: its content was made from the old text, and writing it would
silently drop their change. The check holds to the write (its
``expected_text``), so the person typing meanwhile is not overwritten either.

Line ends: ``old_string`` matches whatever line end the file has at that
place (``\n`` in it matches ``\r\n`` too), and ``new_string`` is written
with the line end of the text it replaces, so a CRLF or mixed file keeps
every byte outside the change.
"""

from __future__ import annotations

import difflib
import random
import re
import weakref
from dataclasses import dataclass

import anyio
from pydantic import BaseModel, Field

from rein.harness.errors import FileChangedError, ToolError
from rein.harness.ports import Mutation, Workspace
from rein.harness.tools import Tool, ToolContext, ToolResult
from rein.tools._context import sandbox_of
from rein.tools._files import plural
from rein.tools.approval import check_approval
from rein.tools.disk_read import MAX_TEXT_BYTES, too_large_message
from rein.tools.impact import impact_note
from rein.tools.sandbox import Sandbox
from rein.tools.secret_files import SETTING, SecretFileError

__all__ = [
    "EditFileArgs",
    "EditFileTool",
    "WriteFileArgs",
    "WriteFileTool",
    "bounded_diff",
    "path_lock",
]

MAX_DIFF_LINES = 80
MAX_DIFF_CHARS = 6000
#: How many times an edit is made again on a file that changed under it
#: (another process writing it in a burst), with a growing random pause.
EDIT_ATTEMPTS = 20


def bounded_diff(path: str, before: str, after: str) -> str:
    """A unified diff of ``before`` -> ``after``, cut to a readable size."""
    lines = list(
        difflib.unified_diff(
            before.splitlines(),
            after.splitlines(),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
            n=2,
            lineterm="",
        )
    )
    out: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        if index >= MAX_DIFF_LINES or used + len(line) > MAX_DIFF_CHARS:
            out.append(f"[diff cut: {len(lines) - index} more lines]")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _occurrences(text: str, needle: str) -> list[tuple[int, int]]:
    """Where ``needle`` occurs in ``text``: exactly, else with each of its
    line ends matching any line end (``\n`` or ``\r\n``)."""
    found: list[tuple[int, int]] = []
    start = text.find(needle)
    while start != -1:
        found.append((start, start + len(needle)))
        start = text.find(needle, start + len(needle))
    if found or "\n" not in needle:
        return found
    lines = needle.replace("\r\n", "\n").split("\n")
    pattern = re.compile(r"\r?\n".join(re.escape(line) for line in lines))
    return [m.span() for m in pattern.finditer(text)]


def _line_end_at(text: str, index: int) -> str:
    """The line end of the line holding ``index`` (the file's first one
    when that line has none)."""
    newline = text.find("\n", index)
    if newline == -1:
        newline = text.find("\n")
    return "\r\n" if newline > 0 and text[newline - 1] == "\r" else "\n"


def _replacement(text: str, span: tuple[int, int], new: str) -> str:
    """``new`` with the line end of the text it replaces."""
    matched = text[span[0] : span[1]]
    if "\r\n" in matched:
        eol = "\r\n"
    elif "\n" in matched:
        eol = "\n"
    else:
        eol = _line_end_at(text, span[0])
    return new.replace("\r\n", "\n").replace("\n", eol)


_PATH_LOCKS: weakref.WeakValueDictionary[tuple[str, str], anyio.Lock] = (
    weakref.WeakValueDictionary()
)


def path_lock(root: str, rel: str) -> anyio.Lock:
    """The lock that serialises the changes to one file in this process
    (every session and tool call of it share it)."""
    key = (root, rel)
    lock = _PATH_LOCKS.get(key)
    if lock is None:
        lock = _PATH_LOCKS[key] = anyio.Lock()
    return lock


@dataclass(frozen=True, slots=True)
class _Edit:
    updated: str
    spans: list[tuple[int, int]]


def _plan(rel: str, text: str, args: EditFileArgs) -> _Edit:
    """The file's new text; a ToolError when old_string is missing or not
    unique."""
    found = _occurrences(text, args.old_string)
    if not found:
        raise ToolError(_not_found_message(rel, text, args.old_string))
    if len(found) > 1 and not args.replace_all:
        lines = ", ".join(str(_line_of(text, i)) for i, _ in found[:20])
        more = ", ..." if len(found) > 20 else ""
        raise ToolError(
            f"old_string occurs {len(found)} times in {rel} (at lines {lines}{more}). "
            "Include more surrounding lines to make it unique, or set replace_all=true "
            "to change every occurrence."
        )
    spans = found if args.replace_all else found[:1]
    parts: list[str] = []
    last = 0
    for span in spans:
        parts += [text[last : span[0]], _replacement(text, span, args.new_string)]
        last = span[1]
    parts.append(text[last:])
    return _Edit("".join(parts), spans)


def _not_found_message(rel: str, text: str, old: str) -> str:
    message = (
        f"old_string was not found in {rel}. Read the file again with read_file and copy "
        "the text exactly, including indentation and whitespace (without the line-number "
        "prefix)."
    )
    first = next((line.strip() for line in old.splitlines() if line.strip()), "")
    if first:
        near = [n for n, line in enumerate(text.splitlines(), 1) if line.strip() == first]
        if near:
            lines = ", ".join(str(n) for n in near[:10])
            message += (
                f" Its first non-blank line appears (ignoring leading and trailing "
                f"whitespace) at line {lines}; check the indentation and the lines after it."
            )
    return message


def _check_size(rel: str, text: str) -> None:
    """Files over read_file's limit are not edited (one in an editor buffer
    included)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_TEXT_BYTES:
        raise ToolError(too_large_message(rel, size, MAX_TEXT_BYTES))


def _prepare(ctx: ToolContext, path: str) -> tuple[Workspace, Sandbox, str]:
    workspace, sandbox = sandbox_of(ctx)
    rel = sandbox.resolve(path)
    if rel == ".":
        raise ToolError("The workspace root is a directory; give the path of a file.")
    sandbox.check_writable(rel)
    return workspace, sandbox, rel


class EditFileArgs(BaseModel):
    path: str = Field(description="File to change, relative to the workspace root.")
    old_string: str = Field(
        description="The exact text to replace, copied from the file with its indentation. "
        "Include enough surrounding lines to make it unique in the file."
    )
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(False, description="Replace every occurrence instead of exactly one.")


class EditFileTool(Tool[EditFileArgs]):
    name = "edit_file"
    description = (
        "Change an existing file by replacing an exact piece of text (old_string) with new "
        "text (new_string). old_string must occur exactly once unless replace_all is true. "
        "Use it for every change to an existing file; read the file first so old_string "
        "matches exactly. Returns a short diff of the change."
    )
    args_model = EditFileArgs
    tool_class = "write"
    prompt_section: str = (
        "`edit_file` replaces an exact, unique piece of a file's text; copy it from what you "
        "read, with its indentation. Prefer several small edits to rewriting a file."
    )

    async def execute(self, args: EditFileArgs, ctx: ToolContext) -> ToolResult:
        workspace, sandbox, rel = _prepare(ctx, args.path)
        secret = sandbox.secret_by(rel)
        if secret is not None:
            # Its diff, and the hints when old_string is not found, would show its text.
            raise SecretFileError(
                f"{rel} is a secret file ({SETTING}: {secret!r}): edit_file does not change "
                "it, since its diff would show you its content. Ask the person to make the "
                "change, or replace the whole file with write_file (the person is asked)."
            )
        old, new = args.old_string, args.new_string
        if old == new:
            raise ToolError("old_string and new_string are identical: there is nothing to change.")
        if not old:
            raise ToolError(
                "old_string is empty. To create a file or replace all of it use write_file; "
                "to insert text, include the neighbouring line in old_string and new_string."
            )
        content = await workspace.read_text(rel)
        _check_size(rel, content.text)
        text = content.text
        edit = _plan(rel, text, args)
        diff = bounded_diff(rel, text, edit.updated)
        denial = await check_approval(
            ctx,
            "write",
            title=f"Edit {rel}",
            detail=diff,
            action=f"edit {rel}",
            subject=("write", rel),
        )
        if denial is not None:
            return denial
        # One change to a file at a time in this process; other processes are
        # caught by the write's check.
        async with path_lock(workspace.root, rel):
            for attempt in range(1, EDIT_ATTEMPTS + 1):
                try:
                    mutation = await workspace.write_text(
                        rel, edit.updated, expected_version=content.version, expected_text=text
                    )
                    break
                except FileChangedError as exc:
                    if attempt == EDIT_ATTEMPTS:
                        raise ToolError(
                            f"{rel} kept changing while it was edited ({EDIT_ATTEMPTS} tries); "
                            "nothing was written. Read it again and redo the change."
                        ) from exc
                # Changed since it was read: make the same edit on its new text
                # (after a pause, so that two processes do not keep colliding).
                await anyio.sleep(random.uniform(0, 0.005 * attempt))
                content = await workspace.read_text(rel)
                _check_size(rel, content.text)
                text = content.text
                try:
                    edit = _plan(rel, text, args)
                except ToolError as exc:
                    raise ToolError(
                        f"{rel} changed since it was read (another edit, session or process "
                        f"changed it), and the edit no longer fits: {exc} Nothing was written."
                    ) from None
                diff = bounded_diff(rel, text, edit.updated)
        found = [start for start, _ in edit.spans]
        count = len(found) if args.replace_all else 1
        first_line = _line_of(text, found[0])
        summary = (
            f"Edited {rel}: replaced {count} occurrence{'s' if count > 1 else ''} "
            f"(from line {first_line}; generation {mutation.generation})."
        )
        impact = await impact_note(ctx, rel, text, edit.updated)
        return ToolResult(
            f"{summary}\n{diff}" + (f"\n{impact}" if impact else ""),
            details={
                "path": rel,
                "generation": mutation.generation,
                "replacements": count,
                "diff": diff,
            },
        )


async def _text_for_impact(
    ctx: ToolContext, workspace: Workspace, rel: str, existed: bool
) -> str | None:
    """The text a Python file held before it is overwritten, when the
    session can tell the impact of a change (it has a navigator)."""
    if ctx.env.navigator is None or not existed or not rel.endswith((".py", ".pyi")):
        return None
    try:
        return (await workspace.read_text(rel)).text
    except ToolError:
        return None


class WriteFileArgs(BaseModel):
    path: str = Field(description="File to create or overwrite, relative to the workspace root.")
    content: str = Field(description="The complete new content of the file.")


class WriteFileTool(Tool[WriteFileArgs]):
    name = "write_file"
    description = (
        "Create a file, or replace the whole content of an existing one. Missing parent "
        "directories are created. Use it for new files; to change part of an existing "
        "file use edit_file instead."
    )
    args_model = WriteFileArgs
    tool_class = "write"
    prompt_section: str = "`write_file` creates a file or replaces all of it; use it for new files."

    async def execute(self, args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
        workspace, _, rel = _prepare(ctx, args.path)
        existed = await workspace.exists(rel)
        lines = args.content.count("\n") + (0 if args.content.endswith("\n") else 1)
        lines = lines if args.content else 0
        verb = "Overwrite" if existed else "Create"
        denial = await check_approval(
            ctx,
            "write",
            title=f"{verb} {rel}",
            detail=f"{verb} {rel} ({plural(lines, 'line')}):\n{args.content[:1000]}",
            action=f"{verb.lower()} {rel}",
            subject=("write", rel),
        )
        if denial is not None:
            return denial
        before = await _text_for_impact(ctx, workspace, rel, existed)
        expected = await _unchanged_since_read(ctx, workspace, rel) if existed else None
        mutation: Mutation = await workspace.write_text(rel, args.content, expected_text=expected)
        done = "Overwrote" if existed else "Created"
        impact = "" if before is None else await impact_note(ctx, rel, before, args.content)
        return ToolResult(
            f"{done} {rel} ({plural(lines, 'line')}; generation {mutation.generation})."
            + (f"\n{impact}" if impact else ""),
            details={"path": rel, "generation": mutation.generation, "created": not existed},
        )


async def _unchanged_since_read(ctx: ToolContext, workspace: Workspace, rel: str) -> str | None:
    """The text ``rel`` holds now, when the model read it in this run (the
    write must find it so); None when it did not read it. Raises
    FileChangedError when someone other than the model changed it since."""
    stamp = ctx.record.read_stamps.get(rel)
    if stamp is None:
        return None
    # The run's own changes move its stamp (RunRecord.add): a later change
    # is someone else's, the person's or another session's agent.
    last = ctx.env.changes.last_change(rel) if ctx.env.changes is not None else None
    if last is not None and last[0] > stamp.generation:
        raise FileChangedError(
            f"{rel} changed since you read it (the person edited it, or a command or "
            "another session did): nothing was written. Read it again and make your change on "
            "its current text (edit_file keeps the rest as it is)."
        )
    return (await workspace.read_text(rel)).text
