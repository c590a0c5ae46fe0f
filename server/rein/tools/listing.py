"""``list_dir`` and ``glob``: the file tree on disk, without what the
workspace filter skips (:mod:`rein.tools.ignore`: ``.gitignore``, virtual
environments, build output, caches). One entry, one line: a name with a
newline or another control character is shown escaped
(:mod:`rein.tools._names`). A secret file (``tools.secretFiles``) is named,
``list_dir`` marks it ``secret``, and nothing of its content is shown."""

from __future__ import annotations

import os

import anyio
from pydantic import BaseModel, Field

from rein.harness.errors import SandboxError, ToolError
from rein.harness.tools import Tool, ToolContext, ToolResult
from rein.tools._context import sandbox_of
from rein.tools._files import FileTree, format_size, plural
from rein.tools._globs import glob_regex
from rein.tools._names import ESCAPED_NOTE, shown_name
from rein.tools.sandbox import Sandbox

__all__ = ["GlobArgs", "GlobTool", "ListDirArgs", "ListDirTool"]

MAX_ENTRIES = 500
_GLOB_CHARS = frozenset("*?[{")


class ListDirArgs(BaseModel):
    path: str = Field(
        ".", description="Directory relative to the workspace root (default: the root)."
    )


class ListDirTool(Tool[ListDirArgs]):
    name = "list_dir"
    description = (
        "List the entries of one directory (not recursive): subdirectories end with '/', "
        "files show their size. Files ignored by .gitignore are left out. Use it to get "
        "oriented; to find files by name across the tree use glob."
    )
    args_model = ListDirArgs
    tool_class = "read"
    prompt_section: str = (
        "`list_dir` lists one directory; entries ignored by .gitignore are not shown."
    )

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries

    async def execute(self, args: ListDirArgs, ctx: ToolContext) -> ToolResult:
        _, sandbox = sandbox_of(ctx)
        rel = sandbox.resolve(args.path)
        return await anyio.to_thread.run_sync(self._list, sandbox, rel)

    def _list(self, sandbox: Sandbox, rel: str) -> ToolResult:
        path = sandbox.abspath(rel)
        if not os.path.isdir(path):
            if os.path.exists(path):
                raise ToolError(f"{rel} is a file, not a directory. Read it with read_file.")
            raise ToolError(f"Directory not found: {rel}")
        tree = FileTree(sandbox.root)
        entries, skipped = tree.list_dir(rel)
        shown = entries[: self.max_entries]
        title = "." if rel == "." else shown_name(rel) + "/"
        lines = [f"{title} ({plural(len(entries), 'entry', 'entries')})"]
        escaped = title != ("." if rel == "." else rel + "/")
        for entry in shown:
            name = shown_name(entry.name)
            escaped = escaped or name != entry.name
            if entry.is_symlink:
                lines.append(f"  {name}{'/' if entry.is_dir else ''} (symlink)")
            elif entry.is_dir:
                lines.append(f"  {name}/")
            elif sandbox.secret_by(entry.path) is not None:
                # Named, never shown: read_file and grep refuse it.
                lines.append(f"  {name} ({format_size(entry.size)}, secret)")
            else:
                lines.append(f"  {name} ({format_size(entry.size)})")
        if not entries:
            lines.append("  (empty)")
        if len(entries) > len(shown):
            lines.append(
                f"[Output cut: {len(entries) - len(shown)} more entries not shown. "
                "Use glob with a pattern to narrow down.]"
            )
        if skipped:
            lines.append(
                f"[{plural(skipped, 'entry', 'entries')} ignored by .gitignore (or .git) "
                "not shown.]"
            )
        if escaped:
            lines.append(ESCAPED_NOTE)
        details = {"path": rel, "entries": len(entries), "ignored": skipped}
        return ToolResult("\n".join(lines), details=details)


class GlobArgs(BaseModel):
    pattern: str = Field(
        description="Glob relative to `path`: `*` and `?` stay within one directory, `**` "
        "spans directories, `{a,b}` gives alternatives. Examples: `**/*.py`, "
        "`src/**/test_*.ts`, `*.{json,yaml}`."
    )
    path: str = Field(".", description="Directory to search from (default: the root).")


def _split_static_prefix(pattern: str) -> tuple[str, str]:
    """``src/app/**/*.py`` -> (``src/app``, ``**/*.py``): where to start walking."""
    parts = pattern.split("/")
    static: list[str] = []
    while len(parts) > 1 and not (_GLOB_CHARS & set(parts[0])) and "\\" not in parts[0]:
        static.append(parts.pop(0))
    return "/".join(static), "/".join(parts)


class GlobTool(Tool[GlobArgs]):
    name = "glob"
    description = (
        "Find files whose path matches a glob pattern, e.g. `**/*.py` or `src/**/*.test.ts`. "
        "`*.py` matches only in the starting directory; use `**/` to search at every depth. "
        "Returns workspace-relative paths in path order; files ignored by .gitignore are "
        "left out. Use it to find files by name; to search file contents use grep."
    )
    args_model = GlobArgs
    tool_class = "read"
    prompt_section: str = (
        "`glob` finds files by name pattern (`**/*.py` for every depth); it skips what "
        ".gitignore ignores."
    )

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries

    async def execute(self, args: GlobArgs, ctx: ToolContext) -> ToolResult:
        _, sandbox = sandbox_of(ctx)
        base = sandbox.resolve(args.path)
        pattern = args.pattern.strip()
        if not pattern:
            raise ToolError("The pattern is empty. Give a glob such as `**/*.py`.")
        if pattern.startswith("/") or pattern.startswith("~"):
            raise SandboxError(
                f"Pattern {pattern!r} is absolute. Patterns are relative to `path` "
                "(the workspace root by default)."
            )
        if ".." in pattern.split("/"):
            raise SandboxError(f"Pattern {pattern!r} contains '..'; patterns stay inside `path`.")
        return await anyio.to_thread.run_sync(self._glob, sandbox, base, pattern)

    def _glob(self, sandbox: Sandbox, base: str, pattern: str) -> ToolResult:
        if not os.path.isdir(sandbox.abspath(base)):
            raise ToolError(f"Directory not found: {base}")
        static, rest = _split_static_prefix(pattern)
        start = static if base == "." else (f"{base}/{static}" if static else base)
        if start != base:
            start = sandbox.resolve(start)
            if not os.path.isdir(sandbox.abspath(start)):
                return ToolResult(f"No files match {pattern!r} (no directory {start}).")
        regex = glob_regex(rest)
        max_depth = None if "**" in rest else rest.count("/") + 1
        prefix_len = 0 if start == "." else len(start) + 1
        tree = FileTree(sandbox.root)
        matches: list[str] = []
        for entry in tree.files(start, max_depth=max_depth):
            if regex.match(entry.path[prefix_len:]):
                matches.append(entry.path)
                if len(matches) > self.max_entries:
                    break
        details = {"pattern": pattern, "path": base, "count": min(len(matches), self.max_entries)}
        if not matches:
            where = "" if base == "." else f" under {base}"
            return ToolResult(f"No files match {pattern!r}{where}.", details=details)
        shown = [shown_name(path) for path in matches[: self.max_entries]]
        text = "\n".join(shown)
        if len(matches) > len(shown):
            details["truncated"] = True
            text += (
                f"\n[Output cut at {self.max_entries} files; more match. "
                "Use a narrower pattern or path.]"
            )
        if shown != matches[: self.max_entries]:
            text += f"\n{ESCAPED_NOTE}"
        return ToolResult(text, details=details)
