"""``rein serve`` reads and writes files faithfully and never freezes on
one (issue 30, items 1, 3 and 7): the real server over stdio, the editor
played by the test client, files not open in it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from tests.faithful_bytes import cases_by_id
from tests.fakes.editor import Editor
from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"name": "edit_file", "arguments": {"path": path, "old_string": old, "new_string": new}}


async def _prompt(editor: Editor, text: str = "go", **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await asyncio.wait_for(
        editor.client.protocol.send_request_async("rein/prompt", {"text": text, **params}), 60
    )
    return result


def _tool_ends(editor: Editor) -> list[dict[str, Any]]:
    return [e["event"] for e in editor.events if e["event"]["type"] == "tool_call_end"]


async def test_an_edit_of_a_closed_file_is_the_smallest_line_edit(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f.py").write_text("".join(f"v{i} = {i}\n" for i in range(6)))
    write_script(tmp_path, [{"tool_calls": [_edit("f.py", "v3 = 3", "v3 = 30")]}, {"text": "ok"}])
    async with running_server(root, tmp_path) as editor:
        result = await _prompt(editor)
        assert result["status"] == "completed", result
    (params,) = editor.applied
    (change,) = params.edit.document_changes or []
    assert isinstance(change, lsp.TextDocumentEdit)
    # Not open in the editor: version null (the disk's text, checked again
    # right before the edit was sent), and only the changed line replaced.
    assert change.text_document.version is None
    (edit,) = change.edits
    assert (edit.range.start, edit.range.end) == (lsp.Position(3, 0), lsp.Position(4, 0))
    assert edit.new_text == "v3 = 30\n"
    assert (root / "f.py").read_text() == "".join(
        f"v{i} = {30 if i == 3 else i}\n" for i in range(6)
    )


async def test_parallel_edits_and_two_sessions_on_a_closed_file_lose_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f.py").write_text("".join(f"v{i} = {i}\n" for i in range(4)))
    # Four parallel edits of one file in one turn, each adding a line; every
    # session plays the same script.
    turn = {
        "tool_calls": [_edit("f.py", f"v{i} = {i}\n", f"v{i} = {i}\nv{i} += 1\n") for i in range(4)]
    }
    write_script(tmp_path, [turn, {"text": "ok"}])
    async with running_server(root, tmp_path) as editor:
        first = await _prompt(editor)
        # Then two more sessions at once.
        second, third = await asyncio.gather(_prompt(editor), _prompt(editor))
        assert {first["status"], second["status"], third["status"]} == {"completed"}
        ends = _tool_ends(editor)
        assert [e["content"] for e in ends if e["is_error"]] == []
        assert len(ends) == 12
    # All twelve edits are in the file.
    assert (root / "f.py").read_text() == "".join(
        f"v{i} = {i}\n" + f"v{i} += 1\n" * 3 for i in range(4)
    )


async def test_edits_of_a_closed_file_keep_every_byte_they_do_not_change(tmp_path: Path) -> None:
    """Every case of the table in one session (a file each, a turn each):
    one server rather than one per case."""
    root = tmp_path / "ws"
    root.mkdir()
    cases = {f"{case}.py": values for case, values in cases_by_id().items()}
    for name, (before, _old, _new, _after) in cases.items():
        (root / name).write_bytes(before)
    turns: list[dict[str, Any]] = [
        {"tool_calls": [_edit(name, old, new)]} for name, (_b, old, new, _a) in cases.items()
    ]
    write_script(tmp_path, [*turns, {"text": "ok"}])
    async with running_server(root, tmp_path) as editor:
        result = await _prompt(editor)
        assert result["status"] == "completed", result
        ends = _tool_ends(editor)
        assert [e["is_error"] for e in ends] == [False] * len(cases), ends
    assert {name: (root / name).read_bytes() for name in cases} == {
        name: after for name, (_b, _o, _n, after) in cases.items()
    }


@pytest.mark.parametrize("tool", ["edit_file", "read_file"])
async def test_a_fifo_costs_a_tool_error_and_the_server_keeps_answering(
    tmp_path: Path, tool: str
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    os.mkfifo(root / "pipe")
    (root / "pipe.py").symlink_to("pipe")  # through a link inside the workspace too
    arguments = {"path": "pipe.py"} | (
        {"old_string": "a", "new_string": "b"} if tool == "edit_file" else {}
    )
    write_script(
        tmp_path, [{"tool_calls": [{"name": tool, "arguments": arguments}]}, {"text": "ok"}]
    )
    async with running_server(root, tmp_path) as editor:
        prompt = asyncio.ensure_future(_prompt(editor))
        # The server answers another request meanwhile (it used to freeze).
        sessions = await asyncio.wait_for(
            editor.client.protocol.send_request_async("rein/sessions", {}), 10
        )
        assert "sessions" in sessions
        result = await prompt
        assert result["status"] == "completed", result
        (end,) = _tool_ends(editor)
        assert end["is_error"] and "not a regular file" in end["content"], end
