"""What a client shows for a Rein tool call: its ACP kind (read, edit,
search, execute, ...) and its title, a person's reading of the call
("Read src/x.py", "Run `pytest -q`"). The live updates and the replay of a
stored session name calls alike."""

from __future__ import annotations

from typing import Any

from acp.schema import ToolKind

__all__ = ["tool_kind", "tool_title"]

_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "list_dir": "read",
    "list_files": "read",
    "glob": "read",
    "get_diagnostics": "read",
    "edit_file": "edit",
    "write_file": "edit",
    "delete_file": "delete",
    "move_file": "move",
    "grep": "search",
    "find_definition": "search",
    "find_references": "search",
    "symbols": "search",
    "hover": "read",
    "rename_symbol": "edit",
    "run_command": "execute",
    "complete_step": "think",
    "submit_plan": "think",
    "think": "think",
}


def tool_kind(name: str) -> ToolKind:
    """The ACP kind of a Rein tool (``task``, ``ask_user`` and MCP tools: other)."""
    if name in _KINDS:
        return _KINDS[name]
    if "fetch" in name and not name.startswith("mcp__"):
        return "fetch"
    return "other"


#: The tools a title names by a verb and the path they act on.
_PATH_VERBS = {
    "read_file": "Read",
    "edit_file": "Edit",
    "write_file": "Write",
    "delete_file": "Delete",
}


def tool_title(name: str, arguments: dict[str, Any]) -> str:
    """What a person reads for a call: "Read src/x.py", "Run `pytest -q`"."""
    path = str(arguments.get("path") or "")
    if name in _PATH_VERBS:
        return f"{_PATH_VERBS[name]} {path}"
    if name in ("list_dir", "list_files"):
        return f"List {path or '.'}"
    if name == "glob":
        return f"Find {arguments.get('pattern', '')}"
    if name == "grep":
        where = f" in {path}" if path and path != "." else ""
        return f"Search {arguments.get('pattern', '')!r}{where}"
    if name == "move_file":
        return f"Move {path} to {arguments.get('new_path', '')}"
    if name == "run_command":
        return f"Run `{arguments.get('command', '')}`"
    if name == "get_diagnostics":
        return "Diagnostics"
    if name == "task":
        return f"Task: {arguments.get('description') or arguments.get('prompt') or ''}".strip()
    if name == "ask_user":
        return f"Ask: {arguments.get('question', '')}"
    if name.startswith("mcp__"):
        server, _, tool = name.removeprefix("mcp__").partition("__")
        return f"{server}: {tool}" if tool else server
    return name.replace("_", " ").capitalize()
