"""The YAML frontmatter of a markdown file (``---`` lines around a YAML
mapping at the top), as SKILL.md, agent and command files carry it.

:func:`parse` is strict: a block that does not close, YAML that does not
parse, or YAML that is not a mapping is a :class:`FrontmatterError` naming
what is wrong (the caller reports the file as invalid with that reason).
A file without a block has empty metadata and is all body.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rein.harness.errors import ReinError

__all__ = ["MAX_FILE_BYTES", "Document", "FrontmatterError", "parse", "read"]

#: A setup file larger than this is not read (it is reported as invalid).
MAX_FILE_BYTES = 512 * 1024


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
    try:
        meta = yaml.safe_load(block) if block.strip() else {}
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


def read(path: Path) -> Document:
    """The file at ``path`` parsed (:func:`parse`); unreadable, too large
    or not UTF-8 is a :class:`FrontmatterError` too."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise FrontmatterError(f"the file is {size} bytes, over {MAX_FILE_BYTES}")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise FrontmatterError("the file is not UTF-8 text") from None
    except OSError as exc:
        raise FrontmatterError(f"the file cannot be read: {exc.strerror or exc}") from None
    return parse(text)
