"""A change a run's command makes on disk (``sed -i``, a formatter) is part
of the run in the editor too: the server's disk watcher records it, the run
counts it, and the gates validate it."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.editor import Editor
from tests.lsp.conftest import write_script


async def test_a_command_that_edits_a_file_is_validated(editor: Editor, tmp_path: Path) -> None:
    editor.confirm_answer = True
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "run_command",
                        "arguments": {"command": "sed -i 's/hello {name}/hi {name}/' app.py"},
                    }
                ]
            },
            {"text": "done"},
        ],
    )
    result = await editor.client.protocol.send_request_async(
        "rein/prompt", {"text": "make greet shorter"}
    )
    assert result["status"] == "completed", result
    assert "hi {name}" in (editor.root / "app.py").read_text()
    # The command's change is the run's: one generation, validated by the gates.
    assert len(result["generations"]) == 1, result
    session_events = [e["event"] for e in editor.events if e["sessionId"] == result["sessionId"]]
    gates = [e["gate"] for e in session_events if e["type"] == "gate_start"]
    assert "analyzer" in gates
    # The editor saw the command's change (as its file watcher would): the
    # analyzer gate judged fresh diagnostics, not stale ones after maxWaitMs.
    [analyzer] = [
        e for e in session_events if e["type"] == "gate_result" and e["gate"] == "analyzer"
    ]
    assert analyzer["passed"] and not analyzer.get("stale"), analyzer
    started = [i for i, e in enumerate(session_events) if e["type"] == "gate_start"]
    command_end = [
        i
        for i, e in enumerate(session_events)
        if e["type"] == "tool_call_end" and e["name"] == "run_command"
    ]
    assert command_end and started and command_end[0] < started[0]
