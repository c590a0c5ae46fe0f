"""rein/prompt through the real server over stdio, with the editor played by
the test client and a real analyzer (ruff)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.editor import Editor
from tests.lsp.conftest import write_script

#: The real server over stdio with a real analyzer (ruff) behind the editor.
pytestmark = pytest.mark.e2e


async def test_a_prompt_edits_gets_a_real_diagnostic_repairs_and_completes(
    editor: Editor, tmp_path: Path
) -> None:
    editor.open("app.py")
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {
                            "path": "app.py",
                            "old_string": "hello {name}",
                            "new_string": "hello {nmae}",
                        },
                    }
                ]
            },
            {"text": "done"},
            {
                "expect": {"last_message_contains": "F821"},
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {
                            "path": "app.py",
                            "old_string": "{nmae}",
                            "new_string": "{name}",
                        },
                    }
                ],
            },
            {"text": "fixed"},
        ],
    )
    result = await editor.client.protocol.send_request_async(
        "rein/prompt", {"text": "make greet friendlier"}
    )
    assert result["status"] == "completed", result
    assert result["repairAttempts"] == 1
    assert result["text"] == "fixed"
    assert len(result["generations"]) == 2
    # The edit landed in the editor's buffer, through workspace/applyEdit.
    assert editor.docs["app.py"][1].count("hello {name}") == 1
    assert len(editor.applied) == 2
    # Each applied edit was saved, so commands and tests see it on disk.
    assert editor.saved == ["app.py", "app.py"]
    # The repair prompt the model received carried ruff's real diagnostic.
    session = await editor.client.protocol.send_request_async(
        "rein/session", {"sessionId": result["sessionId"]}
    )
    repairs = [
        m for m in session["messages"] if m["role"] == "user" and m.get("origin") == "repair"
    ]
    assert len(repairs) == 1
    assert "app.py:5:" in repairs[0]["content"] and "F821" in repairs[0]["content"]
    assert "Undefined name `nmae`" in repairs[0]["content"]
    types = editor.event_types(result["sessionId"])
    assert "gate_result" in types and "repair_attempt" in types
    seqs = [e["seq"] for e in editor.events if e["sessionId"] == result["sessionId"]]
    assert seqs == list(range(1, len(seqs) + 1))
