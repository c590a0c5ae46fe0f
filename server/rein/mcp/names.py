"""The names the model sees for MCP tools: ``mcp__<server>__<tool>``.

Providers take tool names matching ``^[a-zA-Z0-9_-]{1,64}$``: any other
character becomes ``_``, and a name too long is cut and given a short hash
of the full name, so two long names stay apart. Collisions (after
sanitising, or with a built-in tool) are resolved deterministically: the
pairs are taken sorted by server then tool name, and a later one gets
``_2``, ``_3``, ... (still within 64 characters).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

__all__ = ["MAX_NAME", "NAME_PATTERN", "mcp_tool_names", "sanitise"]

MAX_NAME = 64
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")
_HASH = 8


def sanitise(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` with invalid characters replaced, at most 64 long."""
    full = f"mcp__{server}__{tool}"
    name = _INVALID.sub("_", full)
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(full.encode()).hexdigest()[:_HASH]
    return f"{name[: MAX_NAME - _HASH - 1]}_{digest}"


def _with_suffix(base: str, n: int) -> str:
    suffix = f"_{n}"
    return f"{base[: MAX_NAME - len(suffix)]}{suffix}"


def mcp_tool_names(
    pairs: Iterable[tuple[str, str]], reserved: Iterable[str] = ()
) -> dict[tuple[str, str], str]:
    """A unique valid name for each (server, tool) pair, none of them in ``reserved``."""
    used = set(reserved)
    names: dict[tuple[str, str], str] = {}
    for pair in sorted(set(pairs)):
        base = sanitise(*pair)
        name, n = base, 1
        while name in used:
            n += 1
            name = _with_suffix(base, n)
        used.add(name)
        names[pair] = name
    return names
