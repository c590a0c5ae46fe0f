"""Where the person's setup files are found, and what is wrong with one.

Every kind (skills, custom agents, commands) is read from the workspace's
folders and the user's (``~/.claude/...``, with ``home``), and an item that
cannot be used is an :class:`Invalid` with the reason: never dropped
silently. A name found twice is used from its first place (the workspace
before the user's folders) and the second is reported as shadowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["Invalid", "Scope", "display_path", "optional_text", "read_within", "tool_names"]

#: Where an item comes from: the workspace, the user's home, or a folder
#: the configuration names.
Scope = Literal["project", "user", "config"]


@dataclass(frozen=True)
class Invalid:
    """A setup file that cannot be used: what kind, where, and why."""

    kind: str
    path: str
    reason: str

    def line(self) -> str:
        return f"{self.kind} {self.path} is not used: {self.reason}"


def display_path(path: Path, root: Path, home: Path | None) -> str:
    """``path`` relative to the workspace, else with ``~`` for the home."""
    for base, prefix in ((root, ""), (home, "~/")):
        if base is None:
            continue
        try:
            return prefix + path.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)


def read_within(root: Path, folder: Path, scope: Scope) -> tuple[Path, str]:
    """The folder a setup file must resolve inside, and how a refusal
    names it: the workspace for the workspace's files, the file's own folder
    (``~/.claude/commands``, a ``setup.skillPaths`` folder) for the others."""
    if scope == "project":
        return root, "the workspace"
    return folder, f"its folder ({folder})"


def optional_text(meta: Mapping[str, Any], key: str, limit: int | None = None) -> str | None:
    """The string field ``key`` (None when absent); another type, or one
    longer than ``limit``, is a ValueError naming the field."""
    value = meta.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{key}: must be a string, not {type(value).__name__}")
    if limit is not None and len(value) > limit:
        raise ValueError(f"{key}: {len(value)} characters, over {limit}")
    return value


def tool_names(meta: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    """A list of tool names: a YAML list of strings, or one string split
    at commas and spaces (``Read, Grep`` or ``Read Grep``); None when the
    field is absent."""
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(_split_tools(value))
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(item.strip() for item in value if item.strip())
    raise ValueError(f"{key}: must be a list of tool names or one string of them")


def _split_tools(text: str) -> list[str]:
    """``Read, Bash(git add:*) Grep`` -> the three: commas and spaces
    separate names, except inside a rule's parentheses."""
    names: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                names.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        names.append("".join(current))
    return names
