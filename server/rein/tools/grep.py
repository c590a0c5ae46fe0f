"""``grep``: a regex search over the workspace, ``.gitignore``-aware.

Two backends give the same output: ripgrep when ``rg`` is on PATH (or beside
the Python interpreter, as the ``ripgrep`` package installs it in a venv), else a
Python walk over :class:`~rein.tools._files.FileTree`. Both search hidden
files, skip what the workspace filter skips (:mod:`rein.tools.ignore`:
``.git``, virtual environments, build output), binary files (a NUL byte) and files over 10 MB, read
only the workspace's own ``.gitignore`` files, and report matches in path
order (by components), so the first ``max_matches`` are the same. The
``glob`` filter, the deny globs (at any depth, ignoring case) and the
hard-link rule (a file with more than one name is not searched: reading it
needs approval) are applied in Python for both (an rg ``-g`` glob would
override ``.gitignore`` and is case-sensitive). The Python backend reads
each file through :meth:`Sandbox.read_disk <rein.tools.sandbox.Sandbox.read_disk>`. A regex ripgrep cannot parse but
Python can (look-around, backreferences) is searched by the Python backend.

ripgrep's output is read as JSON (``--json``), one message a line: a path
is whole whatever it holds (a newline would split the plain output, so the
rules were applied to a name that is not the file's, and a hard link named
``x\nb.txt`` was searched as ``b.txt``), and a name that is not UTF-8
comes as bytes (base64) and is decoded as the Python backend's walk decodes
it. Names are shown escaped where needed (:mod:`rein.tools._names`).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import anyio
from anyio.abc import Process
from pydantic import BaseModel, Field

from rein.harness.errors import SandboxError, ToolError
from rein.harness.tools import Tool, ToolContext, ToolResult
from rein.process.environment import child_environment
from rein.tools._context import sandbox_of
from rein.tools._files import FileTree, plural
from rein.tools._globs import glob_regex
from rein.tools._names import ESCAPED_NOTE, shown_name
from rein.tools.ignore import SKIPPED_DIR_NAMES, WorkspaceFilter
from rein.tools.sandbox import Sandbox, hard_link_reason
from rein.tools.settings import GrepBackend

__all__ = ["GrepArgs", "GrepBackend", "GrepTool", "Match", "find_ripgrep"]

MAX_MATCHES = 200
MAX_LINE_CHARS = 300
MAX_FILE_BYTES = 10 * 1024 * 1024

_RG_FLAGS = (
    "--no-config",
    "--json",
    "--no-messages",
    "--hidden",
    "--crlf",
    "--no-require-git",
    "--no-ignore-parent",
    "--no-ignore-dot",
    "--no-ignore-global",
    "--no-ignore-exclude",
    "--sort=path",
    "--max-filesize=10M",
    "--glob=!.git",
    # The filter's folder names; a virtual environment under another name
    # (its pyvenv.cfg) is dropped by _Filter afterwards.
    *(f"--glob=!{name}/" for name in sorted(SKIPPED_DIR_NAMES)),
)


class GrepArgs(BaseModel):
    pattern: str = Field(
        description="Regular expression searched line by line, e.g. `def \\w+_handler` or "
        "`TODO|FIXME`. Escape ( [ { . * + ? with a backslash to match them literally, "
        "or set literal=true."
    )
    path: str = Field(".", description="File or directory to search (default: the root).")
    glob: str | None = Field(
        None,
        description="Only search files matching this glob: `*.py` matches the name at any "
        "depth, `src/**/*.ts` the path from the workspace root.",
    )
    case_insensitive: bool = Field(False, description="Ignore upper/lower case.")
    literal: bool = Field(False, description="Treat the pattern as plain text, not a regex.")


@dataclass(frozen=True, slots=True)
class Match:
    path: str
    line: int
    text: str


class _RgRegexError(Exception):
    """ripgrep refused the pattern: caught in this module (Python's regex
    is used instead, or a ToolError says why). Control flow that never
    leaves the module, so outside the ReinError tree."""


def find_ripgrep() -> str | None:
    """``rg`` on PATH, else beside this interpreter (a venv's bin/ that is not on PATH)."""
    found = shutil.which("rg")
    if found is None:
        found = shutil.which("rg", path=os.path.dirname(sys.executable))
    return found


class _Filter:
    """Which matched files count: not protected, not secret, not a hard
    link, not skipped by the workspace filter, and matching the glob."""

    def __init__(self, sandbox: Sandbox, glob: str | None, base: str = ".") -> None:
        self.sandbox = sandbox
        self.workspace = WorkspaceFilter(sandbox.root)
        #: The folder searched: skipped folders count only below it.
        self.base = base
        self.glob = glob_regex(glob.strip("/"), anchored="/" in glob.strip("/")) if glob else None
        self._seen: dict[str, bool] = {}

    def __call__(self, path: str) -> bool:
        verdict = self._seen.get(path)
        if verdict is None:
            verdict = (
                self.glob is None or bool(self.glob.match(path))
            ) and not self.workspace.skipped(path, below=self.base)
            if verdict:
                real = self.sandbox.real_relative(path)  # once for both checks
                verdict = (
                    self.sandbox.denied_by(path, real) is None
                    and self.sandbox.secret_by(path, real) is None
                    and self.sandbox.links(path) <= 1
                )
            self._seen[path] = verdict
        return verdict


def search_python(
    sandbox: Sandbox, rel: str, regex: re.Pattern[str], keep: _Filter, limit: int
) -> list[Match]:
    """Up to ``limit`` matches, walking in path order."""
    matches: list[Match] = []
    candidates: Iterator[str]
    if os.path.isfile(sandbox.abspath(rel)):
        candidates = iter([rel])
    else:
        tree = FileTree(sandbox.root)
        candidates = (e.path for e in tree.files(rel) if not e.is_symlink)
    for path in candidates:
        if not keep(path):
            continue
        try:
            disk = sandbox.read_disk(path, MAX_FILE_BYTES)
        except (SandboxError, ToolError):
            continue
        if disk is None or disk.size > MAX_FILE_BYTES or len(disk.data) > MAX_FILE_BYTES:
            continue
        if disk.links > 1 or sandbox.denied_by(disk.real) is not None:
            continue  # became one since the filter looked
        data = disk.data
        if b"\x00" in data:
            continue
        lines = data.decode("utf-8", "replace").split("\n")
        if lines[-1] == "":
            lines.pop()  # the end of the last line, not a line of its own
        for number, line in enumerate(lines, 1):
            line = line.removesuffix("\r")
            if regex.search(line):
                matches.append(Match(path, number, line))
                if len(matches) >= limit:
                    return matches
    return matches


async def search_rg(
    rg: str, sandbox: Sandbox, rel: str, pattern: str, flags: list[str], keep: _Filter, limit: int
) -> list[Match]:
    """Up to ``limit`` matches from ripgrep; stops it once there are enough."""
    with tempfile.TemporaryDirectory(prefix="rein-rg-") as scratch:
        command = await anyio.to_thread.run_sync(
            _rg_command, rg, sandbox, rel, pattern, flags, scratch
        )
        return await _run_rg(command, sandbox.root, keep, limit)


def _rg_command(
    rg: str, sandbox: Sandbox, rel: str, pattern: str, flags: list[str], scratch: str
) -> list[str]:
    command = [rg, *_RG_FLAGS, *flags]
    if rel != "." and os.path.isdir(sandbox.abspath(rel)):
        # rg takes the workspace's .gitignore files above ``rel`` for "parent"
        # ignore files, which --no-ignore-parent switches off (it would also
        # read those above the workspace): hand them over, rewritten to match
        # from the root, as an ignore file of lower precedence.
        parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
        rules = FileTree(sandbox.root).rules_for(parent)
        if rules:
            ignore_file = os.path.join(scratch, "ancestors.gitignore")
            with open(ignore_file, "w", encoding="utf-8") as handle:
                handle.write("".join(rule.rooted() + "\n" for rule in rules))
            command.append(f"--ignore-file={ignore_file}")
    command += ["-e", pattern, "--"]
    if rel != ".":
        command.append(rel)
    return command


async def _run_rg(command: list[str], cwd: str, keep: _Filter, limit: int) -> list[Match]:
    matches: list[Match] = []
    stderr = bytearray()
    process = await anyio.open_process(
        command, cwd=cwd, stdin=subprocess.DEVNULL, env=child_environment()
    )
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_drain, process, stderr)
            assert process.stdout is not None
            pending = b""
            async for chunk in process.stdout:
                pending += chunk
                if b"\n" not in chunk:
                    continue
                # JSON escapes a newline inside a name or a line: one message a line.
                *lines, pending = pending.split(b"\n")
                for raw in lines:
                    match = _parse_rg_message(raw)
                    if match is not None and keep(match.path):
                        matches.append(match)
                        if len(matches) >= limit:
                            break
                if len(matches) >= limit:
                    process.kill()
                    break
        code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()
    if code == 2 and len(matches) < limit:
        message = stderr.decode("utf-8", "replace").strip()
        if "regex" in message or "error:" in message:
            raise _RgRegexError(message)
    return matches


async def _drain(process: Process, sink: bytearray) -> None:
    assert process.stderr is not None
    async for chunk in process.stderr:
        if len(sink) < 16_000:
            sink.extend(chunk)


def _parse_rg_message(raw: bytes) -> Match | None:
    """A match from one line of ``rg --json``; None for its other messages."""
    if b'"type":"match"' not in raw:
        return None  # begin, end, summary: not parsed (a quote in a name is escaped)
    try:
        data = json.loads(raw)["data"]
        path = _rg_data(data["path"], name=True)
        text = _rg_data(data["lines"], name=False)
        number = data["line_number"]
    except (ValueError, KeyError, TypeError):
        return None
    if path is None or text is None or not isinstance(number, int):
        return None
    text = text.removesuffix("\n").removesuffix("\r")
    return Match(path.removeprefix("./"), number, text)


def _rg_data(value: object, *, name: bool) -> str | None:
    """rg's ``{"text": ...}``, or ``{"bytes": base64}`` when not UTF-8: a
    name decoded as the file system's (what ``os.scandir`` gives), a line
    with replacement characters (as the Python backend decodes a file)."""
    if not isinstance(value, dict):
        return None
    text = value.get("text")
    if isinstance(text, str):
        return text
    encoded = value.get("bytes")
    if not isinstance(encoded, str):
        return None
    data = base64.b64decode(encoded)
    return os.fsdecode(data) if name else data.decode("utf-8", "replace")


class GrepTool(Tool[GrepArgs]):
    name = "grep"
    description = (
        "Search file contents with a regular expression; prints `path:line: text` for each "
        "matching line, in path order, up to 200 matches. Files ignored by .gitignore, "
        "binary files, protected and secret files and hard links are skipped. Use it to find definitions, usages "
        "and strings; narrow with path or glob when there are many matches."
    )
    args_model = GrepArgs
    tool_class = "read"
    prompt_section: str = (
        "`grep` searches contents by regex and answers `path:line: text`; prefer it over "
        "reading many files to find something."
    )

    def __init__(
        self,
        backend: GrepBackend = "auto",
        *,
        max_matches: int = MAX_MATCHES,
        max_line_chars: int = MAX_LINE_CHARS,
    ) -> None:
        self.backend = backend
        self.max_matches = max_matches
        self.max_line_chars = max_line_chars

    def ripgrep(self) -> str | None:
        if self.backend == "python":
            return None
        found = find_ripgrep()
        if found is None and self.backend == "rg":
            raise ToolError("grep is configured to use ripgrep (rg), and rg is not on PATH.")
        return found

    async def execute(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        _, sandbox = sandbox_of(ctx)
        rel = sandbox.resolve(args.path)
        full = sandbox.abspath(rel)
        if not await anyio.Path(full).exists():
            raise ToolError(f"Path not found: {rel}")
        sandbox.check_not_secret(rel)
        protected = sandbox.denied_by(rel)
        if protected is not None:
            raise ToolError(
                f"{shown_name(rel)} matches the protected pattern {protected!r} and is not "
                "searched. Read it with read_file, which asks the person for approval."
            )
        links = sandbox.links(rel)
        if links > 1:
            raise ToolError(
                f"{shown_name(rel)} is not searched: {hard_link_reason(links)}. Read it with "
                "read_file, which asks the person for approval."
            )
        pattern = re.escape(args.pattern) if args.literal else args.pattern
        try:
            regex: re.Pattern[str] | None = re.compile(
                pattern, re.IGNORECASE if args.case_insensitive else 0
            )
            py_error = ""
        except re.error as exc:
            regex, py_error = None, str(exc)
        keep = _Filter(sandbox, args.glob, rel)
        stopped = False
        found: tuple[list[Match], str] | None = None
        with anyio.CancelScope() as scope:

            async def yield_to_steering() -> None:
                # A long search over a big tree gives way to the person's message.
                nonlocal stopped
                await ctx.steering_arrived.wait()
                stopped = True
                scope.cancel()

            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(yield_to_steering)
                    found = await self._search(args, sandbox, rel, pattern, regex, py_error, keep)
                    tg.cancel_scope.cancel()
            except BaseExceptionGroup as group:
                # The search's own error (an invalid pattern), as it was.
                raise group.exceptions[0] from None
        if stopped or found is None:
            return ToolResult(
                f"The search for {args.pattern!r} was stopped: the person sent a message "
                "while it ran. Read the message; search again if it is still needed.",
                details={"stopped_for_steering": True},
            )
        matches, backend = found
        return self._format(args, rel, matches, backend)

    async def _search(
        self,
        args: GrepArgs,
        sandbox: Sandbox,
        rel: str,
        pattern: str,
        regex: re.Pattern[str] | None,
        py_error: str,
        keep: _Filter,
    ) -> tuple[list[Match], str]:
        limit = self.max_matches + 1
        rg = self.ripgrep()
        matches: list[Match] | None = None
        backend = "python"
        if rg is not None:
            flags = ["--ignore-case"] if args.case_insensitive else []
            try:
                matches = await search_rg(rg, sandbox, rel, pattern, flags, keep, limit)
                backend = "rg"
            except _RgRegexError as exc:
                if regex is None:
                    raise ToolError(_invalid(args.pattern, py_error or str(exc))) from None
        if matches is None:
            if regex is None:
                raise ToolError(_invalid(args.pattern, py_error))
            matches = await anyio.to_thread.run_sync(
                search_python, sandbox, rel, regex, keep, limit, abandon_on_cancel=True
            )
        return matches, backend

    def _format(self, args: GrepArgs, rel: str, matches: list[Match], backend: str) -> ToolResult:
        shown = matches[: self.max_matches]
        cut = len(matches) > len(shown)
        files = len({m.path for m in shown})
        details = {"matches": len(shown), "files": files, "truncated": cut, "backend": backend}
        if not shown:
            where = "" if rel == "." else f" in {shown_name(rel)}"
            also = f" (files matching {args.glob!r})" if args.glob else ""
            return ToolResult(f"No matches for {args.pattern!r}{where}{also}.", details=details)
        names = {m.path: shown_name(m.path) for m in shown}
        lines = [f"{names[m.path]}:{m.line}: {self._cut(m.text)}" for m in shown]
        if cut:
            lines.append(
                f"[Output cut at {self.max_matches} matches; there are more. Narrow the "
                "pattern, the path or the glob.]"
            )
        else:
            lines.append(f"[{plural(len(shown), 'match', 'matches')} in {plural(files, 'file')}]")
        if any(shown != path for path, shown in names.items()):
            lines.append(ESCAPED_NOTE)
        return ToolResult("\n".join(lines), details=details)

    def _cut(self, text: str) -> str:
        text = text.rstrip()
        if len(text) <= self.max_line_chars:
            return text
        return f"{text[: self.max_line_chars]}... [{len(text) - self.max_line_chars} more chars]"


def _invalid(pattern: str, reason: str) -> str:
    reason = " ".join(reason.split())
    return (
        f"Invalid regular expression {pattern!r}: {reason}. Escape special characters "
        "( [ { . * + ? with a backslash, or set literal=true to search for plain text."
    )
