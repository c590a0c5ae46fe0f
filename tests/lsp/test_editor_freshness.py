"""Diagnostics of an older text are not fresh for Rein's newer edit.

VS Code's bridge batches ``rein/diagnosticsChanged`` (50 ms), so the notice
of an analysis of the previous text can reach the server after Rein's next
edit was applied. Counted as fresh for that edit, the verdict was taken one
quiet period later on the old text's diagnostics (a blocker the fix had
already removed; the code-server review test's run asked for a repair turn
its script did not have). The notice carries the document's version from
when its diagnostics changed; the server compares it with the version the
editor synced after the edit.

The editor here is the real server's client (``rein serve`` over stdio):
its analyzer (real ruff, undefined names) answers ``rein/diagnostics``
without ``pending`` (as VS Code does for an edited document) and publishes a
text's analysis ``delay_s`` after it changed.

The late notice can also reach the server while the edit is on its way,
before the editor's answer and its ``didChange`` (CI's code-server run: the
server still had the old version synced, took the old text's notice as the
edit's own early analysis and gave the verdict on the old diagnostics). A
notice made for the version Rein's edit was computed against is never fresh
for that edit.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.fakes.editor import Editor
from tests.lsp.conftest import _settings, editing, serve_fixture, write_script
from tests.lsp.progressive import semantic_layer

pytestmark = pytest.mark.e2e

CLEAN = '''"""A module without errors."""


def greet(name: str) -> str:
    return f"hello {name}"
'''
BREAK = {
    "old_string": '    return f"hello {name}"',
    "new_string": '    greeting = f"hello {nmae}"\n    return greeting',
}
FIX = {"old_string": "{nmae}", "new_string": "{name}"}
#: VS Code's bridge sends the changes of one 50 ms period in one notice.
BATCH_S = 0.05


class BatchingEditor(Editor):
    """An editor whose analyzer publishes a text's analysis ``delay_s``
    after the change, and whose notice of the analysis of the text before
    an edit goes out after its answer to that edit (the batch it was in)."""

    def __init__(
        self,
        client: LanguageClient,
        root: Path,
        *,
        delay_s: float = 0.5,
        before_answer: bool = False,
    ) -> None:
        super().__init__(client, root)
        self.delay_s = delay_s
        #: The old text's notice goes out before the answer (and didChange).
        self.before_answer = before_answer
        self.published: dict[str, list[dict[str, Any]]] = {}
        #: (rel, version the notice names)
        self.notices: list[tuple[str, int | None]] = []
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def text(self, rel: str) -> str:
        return self.docs[rel][1] if rel in self.docs else (self.root / rel).read_text()

    def notify(self, rel: str, version: int | None) -> None:
        self.notices.append((rel, version))
        params: dict[str, Any] = {"uris": [self.uri(rel)]}
        if version is not None:
            params["versions"] = {self.uri(rel): version}
        self.client.protocol.notify("rein/diagnosticsChanged", params)

    def publish(self, rel: str) -> None:
        self._timers.pop(rel, None)
        self.published[rel] = semantic_layer(rel, self.text(rel))
        self.notify(rel, self.docs[rel][0] if rel in self.docs else None)

    def analyze_later(self, rel: str) -> None:
        """The analysis of ``rel``'s text now publishes ``delay_s`` later."""
        self._timers[rel] = asyncio.get_running_loop().call_later(self.delay_s, self.publish, rel)

    def apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        before = {rel: (version, text) for rel, (version, text) in self.docs.items()}
        edited = {
            self.rel(c.text_document.uri)
            for c in params.edit.document_changes or []
            if isinstance(c, lsp.TextDocumentEdit)
        }
        if self.before_answer:
            for rel in sorted(edited & set(self._timers)):
                # The analysis of the text before this edit finished while the
                # edit was on its way: its notice leaves before the answer.
                self._timers.pop(rel).cancel()
                self.published[rel] = semantic_layer(rel, before[rel][1])
                self.notify(rel, before[rel][0])
        result = super().apply_edit(params)
        loop = asyncio.get_running_loop()
        for rel, (version, text) in before.items():
            if self.docs.get(rel, (version, text))[0] == version:
                continue
            pending = self._timers.pop(rel, None)
            if pending is not None:
                # The analysis of the text before this edit had just finished:
                # its diagnostics are published, its notice goes out with
                # the bridge's batch, 50 ms later.
                pending.cancel()
                self.published[rel] = semantic_layer(rel, text)
                loop.call_later(BATCH_S, self.notify, rel, version)
            self.analyze_later(rel)
        return result

    def _analyze(self, *rels: str) -> None:
        self.generation += 1

    async def diagnostics(self, params: dict[str, Any]) -> dict[str, Any]:
        wanted = params.get("uris") or [self.uri(r) for r in sorted(self.published)]
        return {
            "items": [
                {"uri": uri, "diagnostics": self.published.get(self.rel(uri), [])} for uri in wanted
            ]
        }


@serve_fixture(params=["after the answer", "before the answer"])
async def client(
    lsp_client: LanguageClient, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[LanguageClient]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "clean.py").write_text(CLEAN)
    before = request.param == "before the answer"
    # Before the answer: each analysis is still running when the next edit
    # is sent (2 s is far beyond a scripted turn), so its notice races it.
    ed = BatchingEditor(lsp_client, root, delay_s=2.0 if before else 0.5, before_answer=before)
    settings = _settings(tmp_path)
    assert settings["gates"]["analyzer"]["quietPeriodMs"] < ed.delay_s * 1000
    async with editing(ed, settings):
        yield lsp_client


def edit(change: dict[str, str]) -> dict[str, Any]:
    return {"tool_calls": [{"name": "edit_file", "arguments": {"path": "clean.py", **change}}]}


async def test_a_late_notice_of_the_previous_texts_analysis_is_not_fresh_for_the_next_edit(
    client: LanguageClient, tmp_path: Path
) -> None:
    editor: BatchingEditor = client.editor  # type: ignore[attr-defined]
    editor.open("clean.py")
    editor.published["clean.py"] = []
    if editor.before_answer:
        # The opened text's analysis is still running when the first edit goes.
        editor.analyze_later("clean.py")
    # Two edits in a row (the second fixes the first), then "done": one verdict.
    write_script(tmp_path, [edit(BREAK), edit(FIX), {"text": "done"}])
    result = await asyncio.wait_for(
        client.protocol.send_request_async("rein/prompt", {"text": "use a local variable"}), 60
    )
    assert result["status"] == "completed", result.get("error")
    [verdict] = [
        e["event"]
        for e in editor.events
        if e["event"]["type"] == "gate_result" and e["event"]["gate"] == "analyzer"
    ]
    assert (verdict["passed"], verdict["blockers"], verdict["stale"]) == (True, [], False)
    # The late notice named the text before the fix (version 2, with `nmae`)
    # and came before the fixed text's own notice (version 3); before the
    # answer, the opened text's (version 1) raced the first edit too.
    expected = [("clean.py", 2), ("clean.py", 3)]
    if editor.before_answer:
        expected.insert(0, ("clean.py", 1))
    assert editor.notices == expected
    assert editor.published["clean.py"] == []
