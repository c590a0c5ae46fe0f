"""The checkpoint scenario both the editor tests (tests/lsp/test_checkpoints.py)
and the command-line tests (tests/e2e/test_undo_cli.py) run: a project of
three files and one scripted run that edits, creates and deletes."""

from __future__ import annotations

from typing import Any

#: The project before the run.
BEFORE = {"mod.py": "a = 1\nb = 2\n", "gone.py": "old\n", "keep.py": "x = 1\n"}

#: How a restore's note to the model begins.
NOTE = "[Rein] The person restored files"


def script_call(name: str, **arguments: Any) -> dict[str, Any]:
    """One tool call in a script turn (the JSON shape the script provider reads)."""
    return {"name": name, "arguments": arguments}


#: One run: mod.py edited and new.py created (turn 1); gone.py edited, then
#: deleted by a command (turns 1 and 2).
THREE_FILES = [
    {
        "tool_calls": [
            script_call("edit_file", path="mod.py", old_string="a = 1", new_string="a = 10"),
            script_call("write_file", path="new.py", content="n = 1\n"),
            script_call("edit_file", path="gone.py", old_string="old", new_string="older"),
        ]
    },
    {"tool_calls": [script_call("run_command", command="rm gone.py")]},
    {"text": "done"},
]

#: One run over three turns: mod.py a = 2 (turn 1), a = 3 (turn 2), then
#: new.py created (turn 3).
THREE_TURNS = [
    {
        "tool_calls": [
            script_call("edit_file", path="mod.py", old_string="a = 1", new_string="a = 2")
        ]
    },
    {
        "tool_calls": [
            script_call("edit_file", path="mod.py", old_string="a = 2", new_string="a = 3")
        ]
    },
    {"tool_calls": [script_call("write_file", path="new.py", content="n = 2\n")]},
    {"text": "done"},
]
