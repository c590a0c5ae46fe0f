"""``read_file``: a file as the editor shows it, with line numbers."""

from __future__ import annotations

import anyio
from pydantic import BaseModel, Field

from rein.harness.errors import ToolError
from rein.harness.tools import Tool, ToolContext, ToolResult
from rein.tools._context import record_read, sandbox_of
from rein.tools._files import format_size
from rein.tools.approval import check_approval
from rein.tools.disk_read import BOM, MAX_TEXT_BYTES
from rein.tools.sandbox import SNIFF_BYTES, DiskFile, hard_link_reason
from rein.tools.secret_walk import secret_name_of
from rein.tools.settings import settings_of

__all__ = ["ReadFileArgs", "ReadFileTool"]

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
#: The workspace reader's limit: edit_file refuses what read_file cannot show.
MAX_FILE_BYTES = MAX_TEXT_BYTES
MIN_PAGE_CHARS = 1_000


class ReadFileArgs(BaseModel):
    path: str = Field(description="File path relative to the workspace root.")
    offset: int | None = Field(
        None, ge=1, description="1-based line number to start at. Omit to start at line 1."
    )
    limit: int | None = Field(
        None,
        ge=1,
        le=DEFAULT_LIMIT,
        description=f"How many lines to read at most (default {DEFAULT_LIMIT}).",
    )


def _disk_refusal(rel: str, disk: DiskFile, max_bytes: int) -> str | None:
    """Why the file read from disk is not shown: binary or too large."""
    if b"\x00" in disk.data[:SNIFF_BYTES]:
        return _binary_message(rel, disk.size)
    if disk.size > max_bytes or len(disk.data) > max_bytes:
        return (
            f"{rel} is {format_size(disk.size)}, too large to read (the limit is "
            f"{format_size(max_bytes)}). Search it with grep, or look at parts of it with "
            "a command such as `head`, `tail` or `sed -n '100,200p'`."
        )
    return None


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _binary_message(rel: str, size: int) -> str:
    return (
        f"{rel} is a binary file ({format_size(size)}); it cannot be shown as text. "
        "Inspect it with a command (for example `file` or `xxd | head`) if you need to."
    )


class ReadFileTool(Tool[ReadFileArgs]):
    name = "read_file"
    description = (
        "Read a text file as the editor shows it (unsaved changes included), with 1-based "
        "line numbers. Use it before editing a file and to look at code found with grep or "
        "glob. Reads up to 2000 lines; for longer files pass offset and limit to read the "
        "next part. The line-number prefix is not part of the file."
    )
    args_model = ReadFileArgs
    tool_class = "read"
    prompt_section: str = (
        "`read_file` shows a file with line numbers (`   12\\tcode`); the number and the "
        "tab are not part of the file. Read a file before you change it, and read only the "
        "part you need of a long file (offset and limit)."
    )

    def __init__(
        self,
        *,
        max_line_chars: int = MAX_LINE_CHARS,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self.max_line_chars = max_line_chars
        self.max_file_bytes = max_file_bytes

    async def execute(self, args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
        workspace, sandbox = sandbox_of(ctx)
        rel = sandbox.resolve(args.path)
        if rel == ".":
            raise ToolError("The workspace root is a directory. Use list_dir to see its entries.")
        sandbox.check_not_secret(rel)  # never shown, not even with approval
        # Opened once, by the resolved path; the checks below are of what was opened.
        disk = await anyio.to_thread.run_sync(sandbox.read_disk, rel, self.max_file_bytes)
        protected = sandbox.denied_by(rel) or (sandbox.denied_by(disk.real) if disk else None)
        if protected is not None and disk is None and not await workspace.exists(rel):
            raise ToolError(f"File not found: {rel}")  # nothing to ask the person about
        why = f"it matches the protected pattern {protected!r}" if protected else ""
        if disk is not None and disk.links > 1:
            # Another name may be a secret file (a read of it is refused): say so.
            named = await anyio.to_thread.run_sync(secret_name_of, sandbox, rel)
            why = why or named or hard_link_reason(disk.links)
        denial = await check_approval(
            ctx,
            "read",
            title=f"Read {rel}",
            detail=f"The agent wants to read {rel}" + (f", but {why}." if why else "."),
            action=f"read {rel}",
            force_ask=bool(why),
            why_ask=why,
            about=rel,
        )
        if denial is not None:
            return denial
        refusal = _disk_refusal(rel, disk, self.max_file_bytes) if disk else None
        if refusal is not None:
            raise ToolError(refusal)
        content = await workspace.read_text(rel)
        text = content.text
        if (
            disk is not None
            and content.version is None
            and _lines(text) != _lines(disk.data.decode("utf-8", "replace").removeprefix(BOM))
        ):
            # A disk read (no editor buffer) must be the file checked above.
            raise ToolError(f"{rel} changed while it was read; read it again.")
        if "\x00" in text:
            raise ToolError(_binary_message(rel, len(text.encode("utf-8", "replace"))))
        if len(text) > self.max_file_bytes:
            raise ToolError(
                f"{rel} has {len(text):,} characters, too many to read. Search it with grep."
            )
        record_read(ctx, content)
        # A page is at least 1,000 characters, whatever the result limit.
        budget = max(MIN_PAGE_CHARS, settings_of(ctx).max_tool_result_chars)
        body, start, end, total = self._number(text, args.offset or 1, args.limit, budget - 300)
        details = {
            "path": rel,
            "start_line": start,
            "end_line": end,
            "total_lines": total,
            "generation": content.generation,
            "version": content.version,
        }
        if total == 0:
            return ToolResult(f"{rel} is empty (0 lines).", details=details)
        if end < total:
            body += f"\n[Showing lines {start}-{end} of {total}. Continue with offset={end + 1}.]"
        return ToolResult(body, details=details)

    def _number(
        self, text: str, start: int, limit: int | None, budget: int
    ) -> tuple[str, int, int, int]:
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        total = len(lines)
        if total == 0:
            return "", 0, 0, 0
        if start > total:
            raise ToolError(
                f"offset {start} is past the end of the file: it has {total} lines. "
                f"Use an offset between 1 and {total}."
            )
        stop = min(total, start - 1 + (limit or DEFAULT_LIMIT))
        out: list[str] = []
        used = 0
        end = start - 1
        for number in range(start, stop + 1):
            line = lines[number - 1].rstrip("\r")
            if len(line) > self.max_line_chars:
                cut = len(line) - self.max_line_chars
                line = f"{line[: self.max_line_chars]}... [{cut} more characters on this line]"
            rendered = f"{number:>6}\t{line}"
            if out and used + len(rendered) + 1 > budget:
                break
            out.append(rendered)
            used += len(rendered) + 1
            end = number
        return "\n".join(out), start, end, total
