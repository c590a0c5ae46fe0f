"""The YAML frontmatter of a markdown file (``---`` lines around a YAML
mapping at the top), as SKILL.md, agent and command files carry it.

:func:`parse` is strict: a block that does not close, YAML that does not
parse, or YAML that is not a mapping is a :class:`FrontmatterError` naming
what is wrong (the caller reports the file as invalid with that reason).
A file without a block has empty metadata and is all body.

One field is read as Claude Code reads it, not as YAML would:
``argument-hint``'s value is its text as written (:func:`_hint_as_text`),
since the documented hints are ``[message]`` (a YAML list) and
``[pr-number] [priority] [assignee]`` (not YAML at all).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rein.harness.errors import ReinError, SandboxError, ToolError
from rein.tools.sandbox import Sandbox
from rein.tools.settings import DEFAULT_DENY_GLOBS

__all__ = ["MAX_FILE_BYTES", "Document", "FrontmatterError", "parse", "read"]

#: A setup file larger than this is not read (it is reported as invalid).
MAX_FILE_BYTES = 512 * 1024

#: A frontmatter block larger than this is not parsed.
MAX_FRONTMATTER_BYTES = 64 * 1024


_HINT_KEY = "argument-hint:"
_COMMENT = re.compile(r"[ \t]#")


def _hint_as_text(block: str) -> str:
    """``block`` with a top-level ``argument-hint``'s plain value (not
    quoted, not a block scalar) quoted, up to a `` #`` comment, so YAML
    reads it as the text it is (``[message]``, ``<file> [--fix]``)."""
    lines = block.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if not line.startswith(_HINT_KEY):
            continue
        body = line[len(_HINT_KEY) :]
        end = len(body.rstrip("\r\n"))
        value, newline = body[:end], body[end:]
        if value[:1] not in (" ", "\t"):
            continue  # "argument-hint:x" is not the key
        comment = _COMMENT.search(value)
        value = (value[: comment.start()] if comment else value).strip()
        if value and value[0] not in "'\"|>":
            lines[index] = f"{_HINT_KEY} '{value.replace(chr(39), chr(39) * 2)}'{newline}"
    return "".join(lines)


class FrontmatterError(ReinError, ValueError):
    """Why a file's frontmatter cannot be read."""


@dataclass(frozen=True)
class Document:
    """A markdown file's frontmatter (``meta``) and the text after it."""

    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""


def parse(text: str) -> Document:
    """``text`` split into its frontmatter mapping and its body."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        return Document({}, text)
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n").rstrip() == "---":
            block = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            break
    else:
        raise FrontmatterError("the frontmatter starts with '---' but has no closing '---' line")
    if len(block.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise FrontmatterError(f"the frontmatter is over {MAX_FRONTMATTER_BYTES} bytes")
    try:
        meta = yaml.safe_load(_hint_as_text(block)) if block.strip() else {}
    except RecursionError:
        raise FrontmatterError("the frontmatter is nested too deeply") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = exc.problem or str(exc).splitlines()[0]
        raise FrontmatterError(f"the frontmatter is not valid YAML{where}: {problem}") from None
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"the frontmatter is not valid YAML: {exc}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise FrontmatterError(
            f"the frontmatter is a YAML {type(meta).__name__}, not a mapping of fields"
        )
    return Document({str(k): v for k, v in meta.items()}, body.lstrip("\r\n"))


def read(
    path: Path,
    within: Path,
    *,
    deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS,
    outside: str = "the workspace",
) -> Document:
    """The file at ``path`` parsed (:func:`parse`), read as the file tools
    read: only when it resolves inside the folder ``within`` (the workspace
    for its own files, the user's folder for theirs), is not covered by a
    ``deny_globs`` pattern and is not a hard link. Refused, unreadable, too
    large or not UTF-8 is a :class:`FrontmatterError` (``outside`` names
    ``within`` in the reason)."""
    sandbox = Sandbox(str(within), deny_globs)
    try:
        rel = sandbox.resolve(str(path))
        glob = sandbox.denied_by(rel)
        if glob is not None:
            raise FrontmatterError(f"it leads to a protected file ({glob}); it was not read")
        disk = sandbox.read_disk(rel, MAX_FILE_BYTES)
    except SandboxError:
        raise FrontmatterError(f"it is a symlink out of {outside}; it was not read") from None
    except ToolError as exc:
        raise FrontmatterError(f"the file cannot be read: {exc}") from None
    if disk is None:
        raise FrontmatterError("the file cannot be read: it is gone")
    if disk.links > 1:
        raise FrontmatterError(
            f"it is a hard link ({disk.links} names) and another name may be outside "
            f"{outside}; it was not read"
        )
    if disk.size > MAX_FILE_BYTES:
        raise FrontmatterError(f"the file is {disk.size} bytes, over {MAX_FILE_BYTES}")
    try:
        text = disk.data.decode("utf-8")
    except UnicodeDecodeError:
        raise FrontmatterError("the file is not UTF-8 text") from None
    return parse(text)
