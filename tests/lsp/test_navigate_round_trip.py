"""``rein/navigate`` over the real server: a client that offers navigation
in ``initialize`` is asked each question about the live buffer of the
session's file, its answers reach the tool as the port's types, and a
question it does not answer in time is unavailable with the reason (the run
goes on); ``rename_symbol`` then applies the editor's rename of three files
as ONE ``workspace/applyEdit`` and one mutation generation. The server is
``rein serve`` with one probing tool (tests/lsp/navigating_serve.py)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types as lsp

from tests.fakes.editor import Editor, make_client, wire
from tests.lsp.conftest import write_script

SERVE = [sys.executable, str(Path(__file__).with_name("navigating_serve.py"))]


def rng(line: int, start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


async def test_the_editor_answers_each_navigation_question(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def f(x):\n    return x\n")
    (root / "b.py").write_text("from a import f as g\n\ng(1)\n")
    (root / "c.py").write_text("from a import f\n\nf(2)\n")
    a, b, c = (root / "a.py").as_uri(), (root / "b.py").as_uri(), (root / "c.py").as_uri()
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "probe_navigation",
                        "arguments": {"path": "b.py", "line": 0, "character": 14},
                    }
                ]
            },
            {
                "tool_calls": [
                    {
                        "name": "rename_symbol",
                        "arguments": {"path": "b.py", "line": 1, "symbol": "f", "new_name": "g2"},
                    }
                ]
            },
            {"text": "done"},
        ],
    )
    answers: dict[str, Any] = {
        "definition": [
            {"targetUri": a, "targetRange": rng(0, 0, 12), "targetSelectionRange": rng(0, 4, 5)}
        ],
        "references": [{"uri": a, "range": rng(0, 4, 5)}, {"uri": b, "range": rng(0, 14, 15)}],
        "documentSymbols": [
            {"name": "g", "kind": 13, "range": rng(0, 19, 20), "selectionRange": rng(0, 19, 20)}
        ],
        "workspaceSymbols": [
            {"name": "f", "kind": 12, "location": {"uri": a, "range": rng(0, 4, 5)}}
        ],
        "rename": {
            "documentChanges": [
                {
                    "textDocument": {"uri": a, "version": None},
                    "edits": [{"range": rng(0, 4, 5), "newText": "g2"}],
                },
                {
                    "textDocument": {"uri": b, "version": 1},
                    "edits": [{"range": rng(0, 14, 15), "newText": "g2"}],
                },
                {
                    "textDocument": {"uri": c, "version": None},
                    "edits": [
                        {"range": rng(0, 14, 15), "newText": "g2"},
                        {"range": rng(2, 0, 1), "newText": "g2"},
                    ],
                },
            ]
        },
    }
    asked: list[dict[str, Any]] = []
    never = asyncio.Event()

    client = make_client()
    ed = Editor(client, root)
    ed.finds_nothing = True  # the rename's verdict: no wait for diagnostics nobody sends
    wire(ed)

    @client.feature("rein/navigate")
    async def navigate(params: dict[str, Any]) -> Any:
        asked.append(params)
        if params["kind"] == "hover":  # an editor that hangs on this one
            await never.wait()
        return answers[params["kind"]]

    client.set_configuration(
        {
            "storagePath": str(tmp_path / "storage"),
            "model": {"provider": "replay", "script": str(tmp_path / "script.yaml")},
            "harness": {"clientRequestTimeoutMs": 1000},
        },
        section="rein",
    )
    capabilities = pytest_lsp.client_capabilities("visual-studio-code")
    capabilities.experimental = {"rein": {"navigation": True}}
    await client.start_io(*SERVE)
    try:
        await client.initialize_session(
            lsp.InitializeParams(capabilities=capabilities, root_uri=root.as_uri())
        )
        ed.open("b.py")
        result = await asyncio.wait_for(
            client.protocol.send_request_async("rein/prompt", {"text": "where is g from?"}), 60
        )
        await asyncio.wait_for(client.shutdown_session(), 10)
    finally:
        await asyncio.wait_for(client.stop(), 10)

    assert result["status"] == "completed", result
    assert [p["kind"] for p in asked] == [
        "definition",
        "references",
        "hover",
        "documentSymbols",
        "workspaceSymbols",
        "rename",
        "rename",  # rename_symbol's
    ]
    assert asked[0] == {"kind": "definition", "uri": b, "position": {"line": 0, "character": 14}}
    assert asked[1]["includeDeclaration"] is True
    assert asked[4] == {"kind": "workspaceSymbols", "query": "f"}
    assert asked[5]["newName"] == "g2"
    [end] = [
        e["event"]
        for e in ed.events
        if e["event"]["type"] == "tool_call_end" and e["event"]["name"] == "probe_navigation"
    ]
    assert end["content"].splitlines() == [
        "source: the editor",
        "definition: ['a.py@0:4']",
        "references: ['a.py@0:4', 'b.py@0:14']",
        "hover: unavailable: the editor did not answer rein/navigate within 1 s "
        "(harness.clientRequestTimeoutMs) (hover)",
        "documentSymbols: ['variable g@b.py:0']",
        "workspaceSymbols: ['function f@a.py:0']",
        # The open document's version the editor computed the edits on comes through.
        "rename: ['a.py@0:4=g2', 'b.py@0:14=g2 v1', 'c.py@0:14=g2', 'c.py@2:0=g2']",
    ]
    # The rename: one approval, then every file in ONE applyEdit (the open
    # b.py at the version the editor renamed), one generation.
    [renamed] = [
        e["event"]
        for e in ed.events
        if e["event"]["type"] == "tool_call_end" and e["event"]["name"] == "rename_symbol"
    ]
    assert renamed["content"].startswith("Renamed `f` to `g2`: 4 edits in 3 files:"), renamed
    assert renamed["content"].endswith("(one change: generation 1)"), renamed
    [edit] = [p for p in ed.applied if p.label == "Rein: rename f to g2"]
    assert [
        (ed.rel(d.text_document.uri), d.text_document.version)
        for d in edit.edit.document_changes or []
        if isinstance(d, lsp.TextDocumentEdit)
    ] == [("a.py", None), ("b.py", 1), ("c.py", None)]
    assert len(ed.applied) == 1
    assert (root / "a.py").read_text() == "def g2(x):\n    return x\n"
    assert ed.docs["b.py"][1] == "from a import g2 as g\n\ng(1)\n"
    assert (root / "c.py").read_text() == "from a import g2\n\ng2(2)\n"
