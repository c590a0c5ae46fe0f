"""Toolkits by configuration over a real ``rein serve``: a configured
toolkit's tools and rules reach the model, and a bad import path is an
error naming ``tools.toolkits`` while the server goes on."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from tests.fakes.editor import Editor
from tests.lsp.conftest import _settings, running_server, write_script
from tests.session.notes_toolkit import NOTES_PATH


def configure(editor: Editor, tmp_path: Path, toolkits: list[str]) -> None:
    settings = {**_settings(tmp_path), "tools": {"toolkits": toolkits}}
    editor.client.set_configuration(settings, section="rein")
    # Pushed with the notification, so it applies before the next request.
    editor.client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"rein": settings})
    )


async def prompt(editor: Editor, text: str) -> dict[str, Any]:
    return await asyncio.wait_for(
        editor.client.protocol.send_request_async("rein/prompt", {"text": text}), 60
    )


async def test_a_configured_toolkit_reaches_the_model(workspace: Path, tmp_path: Path) -> None:
    write_script(
        tmp_path,
        [
            {
                "expect": {
                    "tools_include": ["read_note", "write_note"],
                    "system_contains": "<notes_rules>",
                },
                "tool_calls": [
                    {"name": "write_note", "arguments": {"key": "style", "text": "tabs"}}
                ],
            },
            {"expect": {"last_message_contains": "Stored 'style'."}, "text": "Noted."},
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        configure(editor, tmp_path, [NOTES_PATH])
        result = await prompt(editor, "remember: tabs")
    assert result["status"] == "completed", result.get("error")
    assert result["text"] == "Noted."


async def test_a_bad_toolkit_path_is_an_error_naming_the_setting(
    workspace: Path, tmp_path: Path
) -> None:
    write_script(tmp_path, [{"text": "never asked"}])
    async with running_server(workspace, tmp_path) as editor:
        editor.client.report_server_error = lambda error, source: None  # the expected error
        configure(editor, tmp_path, ["no_such_module_xyz:Kit"])
        with pytest.raises(JsonRpcException) as info:
            await prompt(editor, "hello")
        assert "tools.toolkits: 'no_such_module_xyz:Kit': cannot import" in str(info.value)
        # The server goes on; with the setting fixed, the next prompt runs.
        configure(editor, tmp_path, [])
        result = await prompt(editor, "hello")
        assert result["status"] == "completed", result.get("error")
