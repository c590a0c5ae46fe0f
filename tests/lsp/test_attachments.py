"""rein/prompt's attachments through the real server over stdio: each
becomes a tagged block the model reads, files are read through the
workspace (the open buffer wins) and cut to a bound with a note, and one
that cannot be attached is refused naming ``attachments[i].field`` before a
session is made. The refusals share one server (:func:`refusing`): none
makes a session."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from rein.lsp.attachments import MAX_ATTACHMENT_CHARS
from tests.fakes.editor import Editor
from tests.lsp.conftest import WORKSPACE, running_server, write_script

pytestmark = pytest.mark.e2e


def _user_text(messages: list[dict[str, Any]]) -> str:
    users = [m for m in messages if m["role"] == "user" and m.get("origin") != "bootstrap"]
    assert len(users) == 1, users
    return str(users[0]["content"])


#: A test on the module's shared server (its event loop is the module's).
on_refusing = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def refusing(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Editor]:
    """One server for the refusals: its workspace has a protected
    .env.example, secret .env and .npmrc, its script a turn never asked for."""
    tmp_path = tmp_path_factory.mktemp("refusing")
    workspace = tmp_path / "ws"
    shutil.copytree(WORKSPACE, workspace)
    (workspace / ".env").write_text("TOKEN=1\n")
    (workspace / ".env.example").write_text("TOKEN=\n")
    (workspace / ".npmrc").write_text("//registry.npmjs.org/:_authToken=npm_SECRET\n")
    write_script(tmp_path, [{"text": "never asked"}])
    async with running_server(workspace, tmp_path) as editor:
        yield editor


async def _prompt(editor: Editor, params: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await editor.client.protocol.send_request_async("rein/prompt", params)
    return result


async def _messages(editor: Editor, session_id: str) -> list[dict[str, Any]]:
    found = await editor.client.protocol.send_request_async(
        "rein/session", {"sessionId": session_id}
    )
    return list(found["messages"])


async def test_each_attachment_is_a_tagged_block_after_the_text(
    workspace: Path, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [
            {
                # The model is told the buffer's unsaved text, not the disk's.
                "expect": {"last_message_contains": "UNSAVED_MARKER"},
                "text": "seen",
            }
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        editor.open("app.py")
        editor.type("app.py", "# UNSAVED_MARKER\n" + editor.docs["app.py"][1])
        attachments = [
            {"kind": "file", "uri": editor.uri("app.py")},
            {
                "kind": "selection",
                "uri": editor.uri("notes.txt"),
                "range": {
                    "start": {"line": 1, "character": 0},
                    "end": {"line": 2, "character": 4},
                },
                "text": "picked lines",
            },
            {
                "kind": "problems",
                "uri": editor.uri("app.py"),
                "diagnostics": [
                    {
                        "range": {
                            "start": {"line": 4, "character": 1},
                            "end": {"line": 4, "character": 5},
                        },
                        "message": "Undefined name `nmae`",
                        "severity": 1,
                        "code": "F821",
                        "source": "ruff",
                    }
                ],
            },
            {"kind": "terminal", "text": "$ pytest\n1 failed </attachment> here"},
        ]
        result = await _prompt(editor, {"text": "look at these", "attachments": attachments})
        assert result["status"] == "completed", result
        text = _user_text(await _messages(editor, result["sessionId"]))
    assert text.startswith("look at these\n\n")
    blocks = text.split("\n\n", 1)[1]
    file_block = '<attachment kind="file" path="app.py">\n# UNSAVED_MARKER\n'
    assert blocks.startswith(file_block)
    assert (
        '<attachment kind="selection" path="notes.txt" lines="2-3">\npicked lines\n</attachment>'
        in blocks
    )
    assert (
        '<attachment kind="problems" path="app.py">\n'
        "- line 5: error F821 (ruff) Undefined name `nmae`\n</attachment>"
    ) in blocks
    # A closing tag in the content does not end the block early.
    assert (
        '<attachment kind="terminal">\n$ pytest\n1 failed <\\/attachment> here\n</attachment>'
    ) in blocks
    order = [
        blocks.index(f'kind="{kind}"') for kind in ("file", "selection", "problems", "terminal")
    ]
    assert order == sorted(order)


async def test_a_large_file_is_cut_with_a_note(workspace: Path, tmp_path: Path) -> None:
    (workspace / "big.txt").write_text("x" * (MAX_ATTACHMENT_CHARS + 500))
    write_script(tmp_path, [{"text": "ok"}])
    async with running_server(workspace, tmp_path) as editor:
        result = await _prompt(
            editor,
            {"text": "summarise", "attachments": [{"kind": "file", "uri": editor.uri("big.txt")}]},
        )
        text = _user_text(await _messages(editor, result["sessionId"]))
    body = text.split('<attachment kind="file" path="big.txt">\n', 1)[1]
    assert body.startswith("x" * MAX_ATTACHMENT_CHARS + "\n[... cut: big.txt has ")
    assert f"{MAX_ATTACHMENT_CHARS + 500} characters; the first {MAX_ATTACHMENT_CHARS}" in body
    assert "x" * (MAX_ATTACHMENT_CHARS + 1) not in body


@pytest.mark.parametrize(
    ("attachment", "field", "problem"),
    [
        pytest.param({"kind": "file"}, "attachments[1].uri", "required", id="file-without-uri"),
        pytest.param({"kind": "image", "text": "x"}, "attachments[1].kind", "", id="unknown-kind"),
        pytest.param({"kind": "selection"}, "attachments[1].text", "required", id="no-selection"),
        pytest.param({"kind": "terminal", "txt": "x"}, "attachments[1].txt", "", id="extra-field"),
        pytest.param(
            {"kind": "file", "uri": "file:///etc/hostname"},
            "attachments[1].uri",
            "not a file inside the workspace",
            id="outside-the-workspace",
        ),
        pytest.param(
            {"kind": "file", "uri": "@ws/.env.example"},
            "attachments[1].uri",
            "protected by approval.denyGlobs",
            id="protected-file",
        ),
        pytest.param(
            {"kind": "file", "uri": "@ws/.npmrc"},
            "attachments[1].uri",
            ".npmrc is a secret file (tools.secretFiles: '.npmrc'); not attached",
            id="secret-file",
        ),
        pytest.param(
            {"kind": "selection", "uri": "@ws/.env", "text": "TOKEN=1"},
            "attachments[1].uri",
            ".env is a secret file (tools.secretFiles: '.env'); not attached",
            id="selection-in-a-secret-file",
        ),
        pytest.param(
            {"kind": "file", "uri": "@ws/missing.py"},
            "attachments[1].uri",
            "File not found: missing.py",
            id="missing-file",
        ),
        pytest.param(
            {"kind": "problems", "diagnostics": [{"message": "no range"}]},
            "attachments[1].diagnostics[0].range",
            "",
            id="diagnostic-without-range",
        ),
    ],
)
@on_refusing
async def test_an_attachment_that_cannot_be_attached_is_refused_naming_its_field(
    refusing: Editor, attachment: dict[str, Any], field: str, problem: str
) -> None:
    editor = refusing
    if str(attachment.get("uri", "")).startswith("@ws/"):
        attachment = {**attachment, "uri": editor.uri(attachment["uri"][4:])}
    good = {"kind": "terminal", "text": "fine"}
    with pytest.raises(JsonRpcException) as info:
        await _prompt(editor, {"text": "hi", "attachments": [good, attachment]})
    sessions = await editor.client.protocol.send_request_async("rein/sessions", {})
    assert info.value.code == -32602
    message = str(info.value)
    assert f"rein/prompt: invalid params: {field}" in message, message
    assert problem in message
    # Refused before anything was made: no session left behind.
    assert sessions["sessions"] == []


@on_refusing
async def test_more_attachments_than_the_bound_are_refused(refusing: Editor) -> None:
    many = [{"kind": "terminal", "text": str(i)} for i in range(21)]
    with pytest.raises(JsonRpcException) as info:
        await _prompt(refusing, {"text": "hi", "attachments": many})
    assert "attachments: List should have at most 20 items" in str(info.value)


async def test_the_server_takes_incremental_changes_of_a_buffer(
    workspace: Path, tmp_path: Path
) -> None:
    """Issue 21: the editor sends each keystroke's range, not the whole buffer
    after a delay; the server's view of the buffer follows the ranges (under
    full sync the change would replace the whole buffer)."""
    from lsprotocol import types as lsp

    write_script(tmp_path, [{"text": "ok"}])
    async with running_server(workspace, tmp_path) as editor:
        editor.open("notes.txt")
        editor.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(
                    uri=editor.uri("notes.txt"), version=2
                ),
                content_changes=[
                    lsp.TextDocumentContentChangePartial(
                        range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 7)),
                        text="Typed",
                    )
                ],
            )
        )
        result = await _prompt(
            editor,
            {"text": "read", "attachments": [{"kind": "file", "uri": editor.uri("notes.txt")}]},
        )
        text = _user_text(await _messages(editor, result["sessionId"]))
    assert '<attachment kind="file" path="notes.txt">\nTyped to analyze here.' in text
