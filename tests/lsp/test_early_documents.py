"""Documents the editor sends before its configuration arrives, over the
real ``rein serve``: VS Code opens (and may save) the files it restores
right after ``initialized``, and tells their diagnostics
(``rein/diagnosticsChanged``) as its language servers publish, before its
answer to ``workspace/configuration``. The person's settings still rule what
follows: before, the folder built on that first ``didOpen`` kept the
default analyzer timings (``gates.analyzer.*``) for the server's life, and
a save then was judged with ``autoRepair`` off."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.editor import Editor
from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e

BROKEN = 'def greet(name: str) -> str:\n    return f"hello {nmae}"\n'


async def test_the_analyzer_timings_are_the_settings_when_a_document_opened_first(
    workspace: Path, tmp_path: Path
) -> None:
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
                            "new_string": "hi {name}",
                        },
                    }
                ]
            },
            {"text": "done"},
        ],
    )
    settings: dict[str, Any] = {"gates": {"analyzer": {"requestTimeoutMs": 300}}}
    async with running_server(workspace, tmp_path, settings=settings) as editor:
        editor.silent.add("rein/diagnostics")
        # Before the server has the configuration: the editor opens the file
        # and its language server publishes, which the extension tells.
        editor.open("app.py")
        editor.diagnostics_changed(["app.py"])
        result = await asyncio.wait_for(
            editor.client.protocol.send_request_async("rein/prompt", {"text": "say hi"}), 30
        )
    reasons = [item["reason"] for item in result.get("unverified", [])]
    assert reasons, result
    assert all("0.3 s" in reason for reason in reasons), reasons


async def test_a_save_before_the_configuration_is_judged_with_the_settings(
    workspace: Path, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {
                            "path": "app.py",
                            "old_string": "{nmae}",
                            "new_string": "{name}",
                        },
                    }
                ]
            },
            {"text": "fixed the typo"},
        ],
    )
    settings = {"autoRepair": "onSave"}
    async with running_server(workspace, tmp_path, analyzer=True, settings=settings) as editor:
        _save_broken(editor)  # before the server has the configuration
        finished = await editor.wait_event(
            lambda e: e["event"]["type"] == "auto_repair" and e["event"]["phase"] == "finished",
            30,
        )
        assert finished["event"]["status"] == "completed"
        assert "{name}" in editor.docs["app.py"][1]


def _save_broken(editor: Editor) -> None:
    editor.open("app.py")
    editor.type("app.py", BROKEN)
    editor.save("app.py")
