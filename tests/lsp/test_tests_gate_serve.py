"""The tests gate in the editor: a real `rein serve` (replay model) whose
edit of a document the person has open with unsaved typing breaks a test.
Rein's edits go through workspace/applyEdit into the editor's buffer, which
the editor leaves unsaved (it held the person's typing); the gate runs the
tests on the buffer's text in a shadow copy, blocks on exactly the test
the edit broke, the repair passes, and the disk is never written. The
person's unsaved typing in another file a selected test imports is left
alone (the tests read its saved text) and named in the gate's detail."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.fakes.editor import Editor, _offset
from tests.lsp.conftest import _settings, editing, serve_fixture, write_script

#: The real server over stdio, real pytest runs.
pytestmark = pytest.mark.e2e

CALC = "def add(a, b):\n    return a + b\n\n\ndef double(x):\n    return 2 * x\n"
#: The person's typing in calc.py, not saved.
TYPED = "\n\ndef triple(x):\n    return 3 * x\n"
HELPER = "EXPECTED_SUM = 5\n"
TESTS = """from calc import add, double
from helper import EXPECTED_SUM


def test_add():
    assert add(2, 3) == EXPECTED_SUM


def test_double():
    assert double(4) == 8
"""


class DirtyEditor(Editor):
    """An editor that keeps the person's unsaved typing in its buffers: an
    edit of a dirty buffer changes the buffer only, and ``rein/saveDocuments``
    leaves it unsaved (as VS Code's client does)."""

    def __init__(self, client: LanguageClient, root: Path) -> None:
        super().__init__(client, root)
        self.dirty: set[str] = set()

    def type(self, rel: str, text: str) -> None:
        super().type(rel, text)
        self.dirty.add(rel)

    def apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        changes = params.edit.document_changes or []
        if not all(
            isinstance(c, lsp.TextDocumentEdit) and self.rel(c.text_document.uri) in self.dirty
            for c in changes
        ):
            return super().apply_edit(params)
        self.applied.append(params)
        for change in changes:
            assert isinstance(change, lsp.TextDocumentEdit)
            rel = self.rel(change.text_document.uri)
            version, text = self.docs[rel]
            assert change.text_document.version == version
            for edit in change.edits:
                start, end = _offset(text, edit.range.start), _offset(text, edit.range.end)
                text = text[:start] + edit.new_text + text[end:]
            super().type(rel, text)  # the buffer changes, the disk does not
        return lsp.ApplyWorkspaceEditResult(applied=True)

    def save_documents(self, uris: list[str]) -> dict[str, Any]:
        dirty = [u for u in uris if self.rel(u) in self.dirty]
        saved = super().save_documents([u for u in uris if u not in dirty])
        return {**saved, "unsaved": dirty}


@pytest.fixture(autouse=True)
def _bare_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tiny project's pytest (run by the server) without this suite's
    plugins: seconds each otherwise."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@serve_fixture()
async def client(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[LanguageClient]:
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "helper.py").write_text(HELPER)
    (root / "tests" / "test_calc.py").write_text(TESTS)
    (root / "tests" / "test_other.py").write_text("def test_other():\n    assert True\n")
    settings = _settings(tmp_path)
    settings["gates"] = {"analyzer": {"enabled": False}}
    async with editing(DirtyEditor(lsp_client, root), settings):
        yield lsp_client


@pytest.fixture
def editor(client: LanguageClient) -> DirtyEditor:
    return client.editor  # type: ignore[attr-defined,no-any-return]


def edit(old: str, new: str, **turn: Any) -> dict[str, Any]:
    arguments = {"path": "calc.py", "old_string": old, "new_string": new}
    return {**turn, "tool_calls": [{"name": "edit_file", "arguments": arguments}]}


async def test_the_tests_judge_the_unsaved_buffer_block_on_the_broken_test_and_the_repair_passes(
    editor: DirtyEditor, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [
            edit("return a + b", "return a - b"),
            {"text": "done"},
            edit(
                "return a - b",
                "return b + a",  # not the text before the run: its tests run
                expect={"last_message_contains": "tests/test_calc.py::test_add failed"},
            ),
            {"text": "fixed"},
        ],
    )
    editor.open("calc.py")
    editor.type("calc.py", CALC + TYPED)
    editor.open("helper.py")
    editor.type("helper.py", "EXPECTED_SUM = 6\n")  # wrong, and not saved

    result = await asyncio.wait_for(
        editor.client.protocol.send_request_async("rein/prompt", {"text": "subtract"}), 120
    )

    assert result["status"] == "completed", result.get("error")
    results = [
        e["event"]
        for e in editor.events
        if e["event"]["type"] == "gate_result" and e["event"]["gate"] == "tests"
    ]
    assert [r["status"] for r in results] == ["blocked", "passed"]
    # Exactly the test the edit broke, judged on the buffer (the disk's
    # calc.py never had the bug) with helper.py's saved text (its unsaved 6
    # would have failed test_add before the run too).
    assert [b["message"] for b in results[0]["blockers"]] == [
        "tests/test_calc.py::test_add failed: assert -1 == 5"
    ]
    assert "1 of 2 test files selected" in results[0]["detail"], results[0]["detail"]
    for r in results:
        assert r["detail"].endswith(
            "not saved in the editor, so the tests read their saved text: helper.py"
        ), r["detail"]
    assert "failing before the run" not in results[1]["detail"]
    # The buffers hold the person's typing and the repaired edit; the disk
    # is as the person last saved it.
    assert editor.docs["calc.py"][1] == CALC.replace("a + b", "b + a") + TYPED
    assert editor.docs["helper.py"][1] == "EXPECTED_SUM = 6\n"
    assert (editor.root / "calc.py").read_text() == CALC
    assert (editor.root / "helper.py").read_text() == HELPER
    assert editor.saved == []
