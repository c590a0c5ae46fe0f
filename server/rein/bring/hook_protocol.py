"""Claude Code's hook protocol: what a hook reads and what its answer means.

Followed from Claude Code's hooks reference
(https://docs.anthropic.com/en/docs/claude-code/hooks): a hook reads one
JSON object on standard input (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name`` and the event's own fields: ``tool_name`` and
``tool_input`` for PreToolUse, ``tool_response`` too for PostToolUse,
``prompt`` for UserPromptSubmit, ``stop_hook_active`` for Stop and
SubagentStop, ``source`` for SessionStart, ``reason`` for SessionEnd,
``trigger`` for PreCompact, ``message`` for Notification). Its exit code: 0
succeeds (stdout is added to the context for UserPromptSubmit and
SessionStart), 2 blocks with stderr as the reason, anything else is a
non-blocking error. With exit 0, a JSON object on stdout decides instead:
``continue``/``stopReason``, ``decision`` (``block`` with ``reason``;
``approve`` is the older PreToolUse spelling of allow) and
``hookSpecificOutput`` (``permissionDecision`` allow/deny/ask with
``permissionDecisionReason``; ``additionalContext``; ``updatedInput``, which
Rein does not apply: a changed input blocks the call). Output that is not a
JSON object is plain text, even when it starts with ``{``.

Tools are named as that protocol names them (:data:`TOOL_NAMES`) and their
input fields renamed to its own (``path`` -> ``file_path``, absolute), so a
hook written for Claude Code reads what it expects.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "TOOL_NAMES",
    "HookAnswer",
    "claude_tool",
    "matches",
    "read_answer",
    "rewritten",
]

#: Rein's tool -> the protocol's name. A tool not listed keeps its name
#: (``mcp__server__tool`` already is the protocol's, a toolkit's own tool).
TOOL_NAMES: dict[str, str] = {
    "run_command": "Bash",
    "edit_file": "Edit",
    "write_file": "Write",
    "read_file": "Read",
    "grep": "Grep",
    "glob": "Glob",
    "list_dir": "LS",
    "task": "Task",
    "delete_file": "DeleteFile",
    "move_file": "MoveFile",
    "get_diagnostics": "GetDiagnostics",
    "ask_user": "AskUserQuestion",
}

#: The events whose stdout (exit 0, not JSON) is added to the context.
CONTEXT_EVENTS = frozenset({"UserPromptSubmit", "SessionStart"})


def _absolute(root: Path, path: Any) -> Any:
    """Absolute and normalised (``src/../x`` is ``x``), relative or not, so
    a hook's prefix check (``src/``) sees where the path really points."""
    if not isinstance(path, str):
        return path
    return os.path.normpath(os.path.join(root, path))


def _read(root: Path, a: dict[str, Any]) -> dict[str, Any]:
    out = {"file_path": _absolute(root, a.get("path"))}
    out.update({k: a[k] for k in ("offset", "limit") if a.get(k) is not None})
    return out


def _edit(root: Path, a: dict[str, Any]) -> dict[str, Any]:
    return {
        "file_path": _absolute(root, a.get("path")),
        "old_string": a.get("old_string"),
        "new_string": a.get("new_string"),
        "replace_all": bool(a.get("replace_all", False)),
    }


def _write(root: Path, a: dict[str, Any]) -> dict[str, Any]:
    return {"file_path": _absolute(root, a.get("path")), "content": a.get("content")}


def _bash(root: Path, a: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"command": a.get("command")}
    if a.get("timeout") is not None:
        out["timeout"] = int(float(a["timeout"]) * 1000)  # the protocol's milliseconds
    return out


def _grep(root: Path, a: dict[str, Any]) -> dict[str, Any]:
    out = {"pattern": a.get("pattern"), "path": _absolute(root, a.get("path") or ".")}
    if a.get("glob"):
        out["glob"] = a["glob"]
    if a.get("case_insensitive"):
        out["-i"] = True
    return out


def _glob(root: Path, a: dict[str, Any]) -> dict[str, Any]:
    return {"pattern": a.get("pattern"), "path": _absolute(root, a.get("path") or ".")}


def _list(root: Path, a: dict[str, Any]) -> dict[str, Any]:
    return {"path": _absolute(root, a.get("path") or ".")}


def _move(root: Path, a: dict[str, Any]) -> dict[str, Any]:
    return {
        "file_path": _absolute(root, a.get("path")),
        "new_file_path": _absolute(root, a.get("new_path")),
    }


def _delete(root: Path, a: dict[str, Any]) -> dict[str, Any]:
    return {"file_path": _absolute(root, a.get("path"))}


_INPUTS: dict[str, Callable[[Path, dict[str, Any]], dict[str, Any]]] = {
    "read_file": _read,
    "edit_file": _edit,
    "write_file": _write,
    "run_command": _bash,
    "grep": _grep,
    "glob": _glob,
    "list_dir": _list,
    "delete_file": _delete,
    "move_file": _move,
}


def claude_tool(name: str, args: dict[str, Any], root: Path) -> tuple[str, dict[str, Any]]:
    """A Rein tool call as the protocol names it: ``(tool_name, tool_input)``."""
    convert = _INPUTS.get(name)
    return TOOL_NAMES.get(name, name), convert(root, args) if convert else dict(args)


_NAMES = re.compile(r"[A-Za-z0-9_|]*")


def matches(matcher: str, tool: str) -> bool:
    """Whether a matcher fits a tool name (or a SessionStart source, a
    PreCompact trigger), as Claude Code reads it: empty and ``*`` fit all; a
    matcher of only letters, digits, ``_`` and ``|`` is a list of exact
    names (``Edit|Write``); anything else is a regular expression searched
    anywhere in the name, not anchored (``^mcp__``, ``mcp__.*__write``,
    ``Notebook.*``). A matcher that is not a valid expression fits only its
    exact text."""
    if matcher in ("", "*"):
        return True
    if matcher == tool:
        return True
    if _NAMES.fullmatch(matcher):
        return tool in matcher.split("|")
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False


Permission = Literal["allow", "deny", "ask"]


@dataclass(frozen=True, slots=True)
class HookAnswer:
    """What one hook's run means."""

    #: Block the action (exit 2, ``decision: block``, ``permissionDecision: deny``).
    block: str | None = None
    #: Text for the model's context (stdout of UserPromptSubmit/SessionStart,
    #: ``additionalContext``).
    context: str | None = None
    #: PreToolUse's ``permissionDecision`` (``deny`` is also in ``block``).
    permission: Permission | None = None
    permission_reason: str = ""
    #: ``continue: false``: the run stops, with ``stopReason``.
    stop: str | None = None
    #: A non-blocking error: a code other than 0 and 2, a time-out, bad JSON.
    error: str | None = None
    #: PreToolUse's ``updatedInput``: the input the hook would run the call
    #: with. Rein does not apply it (see :func:`rewritten`).
    updated_input: dict[str, Any] | None = None


def _json_answer(event: str, data: dict[str, Any]) -> HookAnswer:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    reason = str(data.get("reason") or "")
    block: str | None = None
    permission: Permission | None = None
    permission_reason = str(specific.get("permissionDecisionReason") or "")
    decision = specific.get("permissionDecision")
    if event == "PreToolUse" and decision in ("allow", "deny", "ask"):
        permission = decision
    elif event == "PreToolUse" and data.get("decision") in ("approve", "block"):
        # The older spelling: approve/block with reason.
        permission = "allow" if data["decision"] == "approve" else "deny"
        permission_reason = reason
    if permission == "deny":
        block = permission_reason or "denied by a PreToolUse hook"
    elif data.get("decision") == "block" and event != "PreToolUse":
        block = reason or f"blocked by a {event} hook"
    context = specific.get("additionalContext")
    updated = specific.get("updatedInput") if event == "PreToolUse" else None
    stop = None
    if data.get("continue") is False:
        stop = str(data.get("stopReason") or f"a {event} hook stopped the run")
    return HookAnswer(
        block=block,
        context=str(context) if isinstance(context, str) and context else None,
        permission=permission,
        permission_reason=permission_reason,
        stop=stop,
        updated_input=updated if isinstance(updated, dict) else None,
    )


def rewritten(updated: dict[str, Any] | None, tool_input: dict[str, Any]) -> list[str]:
    """The fields of ``tool_input`` a PreToolUse hook's ``updatedInput``
    changes (none: it repeats the input, or says nothing). Claude Code runs
    the call with the new input; Rein cannot rewrite a call, so a hook that
    changes one blocks it (``hooks_adapter``) rather than let the original
    run as if the hook had agreed."""
    if not updated:
        return []
    return sorted(k for k, v in updated.items() if tool_input.get(k) != v)


#: What is kept of a hook's plain-text stdout (context, an error's detail).
MAX_TEXT_CHARS = 20_000
#: What Rein reads of a hook's stdout: an answer longer than this is unread.
MAX_STDOUT_BYTES = 1024 * 1024


def read_answer(
    event: str, exit_code: int, stdout: str, stderr: str, stdout_cut: bool = False
) -> HookAnswer:
    """The meaning of a finished hook (its code, its output). ``stdout_cut``:
    its stdout was too long to be read whole: an answer Rein did not read is
    never taken for an agreement, so a PreToolUse hook's blocks the call."""
    if exit_code == 2:
        return HookAnswer(block=stderr.strip() or f"blocked by a {event} hook (exit 2)")
    if exit_code != 0:
        detail = (stderr.strip() or stdout.strip())[:MAX_TEXT_CHARS]
        return HookAnswer(error=f"exit {exit_code}" + (f": {detail}" if detail else ""))
    if stdout_cut:
        unread = f"its output was over {MAX_STDOUT_BYTES:,} bytes and was not read"
        if event == "PreToolUse":
            return HookAnswer(block=f"{unread}, so the call was not run")
        return HookAnswer(error=unread)
    text = stdout.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None  # not JSON after all: plain text, as Claude Code reads it
        if isinstance(data, dict):
            return _json_answer(event, data)
    if text and event in CONTEXT_EVENTS:
        return HookAnswer(context=text[:MAX_TEXT_CHARS])
    return HookAnswer()
