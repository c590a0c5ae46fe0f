"""A tool call's ACP kind and title (rein.acp.tool_labels), as a client
shows it in the live updates and the replay."""

from __future__ import annotations

from typing import Any

import pytest

from rein.acp.tool_labels import tool_kind, tool_title


@pytest.mark.parametrize(
    ("name", "arguments", "title", "kind"),
    [
        pytest.param("read_file", {"path": "a.py"}, "Read a.py", "read", id="read"),
        pytest.param("list_dir", {}, "List .", "read", id="list"),
        pytest.param("glob", {"pattern": "**/*.py"}, "Find **/*.py", "read", id="glob"),
        pytest.param("grep", {"pattern": "TODO"}, "Search 'TODO'", "search", id="grep"),
        pytest.param("edit_file", {"path": "a.py"}, "Edit a.py", "edit", id="edit"),
        pytest.param("write_file", {"path": "b.py"}, "Write b.py", "edit", id="write"),
        pytest.param("delete_file", {"path": "b.py"}, "Delete b.py", "delete", id="delete"),
        pytest.param("move_file", {"path": "a", "new_path": "b"}, "Move a to b", "move", id="move"),
        pytest.param(
            "run_command", {"command": "pytest -q"}, "Run `pytest -q`", "execute", id="run"
        ),
        pytest.param("complete_step", {}, "Complete step", "think", id="step"),
        pytest.param("task", {"description": "look"}, "Task: look", "other", id="task"),
        pytest.param("ask_user", {"question": "which?"}, "Ask: which?", "other", id="ask"),
        pytest.param("mcp__docs__fetch_page", {}, "docs: fetch_page", "other", id="mcp"),
        pytest.param("web_fetch", {}, "Web fetch", "fetch", id="fetch"),
    ],
)
def test_titles_and_kinds(name: str, arguments: dict[str, Any], title: str, kind: str) -> None:
    assert tool_title(name, arguments) == title
    assert tool_kind(name) == kind
