"""Workspace-defined MCP servers through the real `rein serve`: nothing runs
before the person trusts it (rein/confirm naming the command line), trust
is remembered in the storage folder, a changed command asks again, and
``${input:...}`` values are asked with rein/askUser (hidden, with a key the
extension remembers them by) once per load."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.editor import Editor
from tests.lsp.conftest import running_server, write_script
from tests.mcp.conftest import TOOLBOX

pytestmark = pytest.mark.e2e

#: Writes the marker file given as argv[1], then serves the toolbox.
_MARKING = (
    "import pathlib, runpy, sys; pathlib.Path(sys.argv[1]).write_text('ran'); "
    f"sys.argv = [{str(TOOLBOX)!r}]; runpy.run_path({str(TOOLBOX)!r}, run_name='__main__')"
)


def _mcp_json(root: Path, marker: Path, extra: str = "") -> None:
    args = ["-c", _MARKING, str(marker)] + ([extra] if extra else [])
    server = {"command": sys.executable, "args": args}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"box": server}}))


def _echo_script(tmp_path: Path, offered: bool) -> None:
    if offered:
        turns: list[dict[str, Any]] = [
            {
                "expect": {"tools_include": ["mcp__box__echo"]},
                "tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": "hi"}}],
            },
            {"expect": {"last_message_contains": "echo: hi"}, "text": "done"},
        ]
    else:
        turns = [{"expect": {"tools_exclude": ["mcp__box__echo"]}, "text": "done"}]
    write_script(tmp_path, turns)


async def _prompt(editor: Editor) -> dict[str, Any]:
    result: dict[str, Any] = await editor.client.protocol.send_request_async(
        "rein/prompt", {"text": "use the tools"}
    )
    return result


def _trust_questions(editor: Editor) -> list[dict[str, Any]]:
    return [c for c in editor.confirms if c.get("tool") == "mcp"]


async def test_a_workspace_server_runs_only_after_trust_and_a_change_asks_again(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    marker = tmp_path / "marker"
    _mcp_json(root, marker)
    # No analyzer here: the gate would wait its bound for diagnostics nobody sends.
    settings = {"approval": {"mcp": "allow"}, "gates": {"analyzer": {"enabled": False}}}

    _echo_script(tmp_path, offered=False)
    async with running_server(root, tmp_path, settings=settings) as editor:
        editor.confirm_answer = False
        result = await _prompt(editor)
        assert result["status"] == "completed", result
        [question] = _trust_questions(editor)
        assert question["title"] == "Trust the MCP server 'box' from .mcp.json?"
        assert f"{sys.executable} -c" in question["detail"]
        listing = await editor.client.protocol.send_request_async("rein/mcpServers", {})
        assert listing["servers"] == []
        [skipped] = listing["skipped"]
        assert skipped["name"] == "box"
        assert skipped["reason"].startswith("not trusted: .mcp.json defines it to run ")
    assert not marker.exists()

    _echo_script(tmp_path, offered=True)
    async with running_server(root, tmp_path, settings=settings) as editor:
        editor.confirm_answer = True
        result = await _prompt(editor)
        assert result["status"] == "completed", result
        assert len(_trust_questions(editor)) == 1
    assert marker.read_text() == "ran"

    # Remembered in the storage folder: a new server process does not ask.
    marker.unlink()
    async with running_server(root, tmp_path, settings=settings) as editor:
        editor.confirm_answer = False
        result = await _prompt(editor)
        assert result["status"] == "completed", result
        assert _trust_questions(editor) == []
    assert marker.exists()

    # The command changed: asked again, and refused it does not run.
    marker.unlink()
    _mcp_json(root, marker, extra="--changed")
    _echo_script(tmp_path, offered=False)
    async with running_server(root, tmp_path, settings=settings) as editor:
        editor.confirm_answer = False
        result = await _prompt(editor)
        assert result["status"] == "completed", result
        [question] = _trust_questions(editor)
        assert "--changed" in question["detail"]
    assert not marker.exists()


async def test_an_input_is_asked_once_hidden_with_its_remember_key(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".vscode").mkdir(parents=True)
    marker = tmp_path / "marker"
    box = {"command": sys.executable, "args": ["-c", _MARKING, "${input:where}"]}
    (root / ".vscode" / "mcp.json").write_text(
        json.dumps(
            {
                "inputs": [
                    {
                        "type": "promptString",
                        "id": "where",
                        "description": "Marker",
                        "password": True,
                    }
                ],
                "servers": {"box": box, "box2": {**box, "disabled": False}},
            }
        )
    )
    write_script(
        tmp_path,
        [{"expect": {"tools_include": ["mcp__box__echo", "mcp__box2__echo"]}, "text": "done"}],
    )
    async with running_server(
        root,
        tmp_path,
        settings={"approval": {"mcp": "allow"}, "gates": {"analyzer": {"enabled": False}}},
    ) as editor:
        editor.ask_answer = str(marker)
        result = await _prompt(editor)
        assert result["status"] == "completed", result
        assert editor.asks == [
            {
                "title": "MCP server input: where",
                "question": "Marker",
                "password": True,
                "remember": "mcp-input:where",
            }
        ]
        # The trust question shows the input as written, never its value.
        assert all("${input:where}" in c["detail"] for c in _trust_questions(editor))
        assert all(str(marker) not in json.dumps(e) for e in editor.events)
    assert marker.read_text() == "ran"
