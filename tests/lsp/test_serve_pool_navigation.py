"""Navigation in the real ``rein serve`` for an LSP client that does not
offer ``rein/navigate``: the session is offered the navigation tools, and
the first question starts Rein's own basedpyright for the folder, which
answers on the client's live buffers. ``find_references`` finds a use
under an import alias that exists only in an unsaved buffer, and after the
person types more (unsaved), the next question sees that too;
``find_definition`` shows the definition's lines; once the buffer is closed
unsaved, the disk's text answers again."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from rein.disk.analyzer_specs import find_executable
from tests.fakes.editor import Editor
from tests.lsp.conftest import _settings, editing, serve_fixture, write_script

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        find_executable("basedpyright-langserver") is None, reason="needs basedpyright"
    ),
]

CORE = "def f(x: int) -> int:\n    return x + 1\n"
ON_DISK = "from pkg.core import f\n"
TYPED = "from pkg.core import f as g\n\n\ndef h() -> int:\n    return g(3)\n"
TYPED_MORE = TYPED + "\n\nLATER = g(4)\n"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def found(*use_lines: str) -> str:
    return (
        f"{3 + len(use_lines)} references to `f` in 2 files (basedpyright):\n"
        "pkg/core.py\n  1:5: def f(x: int) -> int:\n"
        "pkg/use.py\n  1:22: from pkg.core import f as g\n"
        "  1:27: from pkg.core import f as g (as g)\n" + "\n".join(use_lines)
    )


@serve_fixture()
async def client(lsp_client: LanguageClient, tmp_path: Path) -> Any:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/core.py").write_text(CORE)
    (root / "pkg/use.py").write_text(ON_DISK)
    write_script(
        tmp_path,
        [
            {
                "expect": {"tools_include": ["find_references", "hover", "rename_symbol"]},
                **call("find_references", path="pkg/core.py", line=1, symbol="f"),
            },
            {
                "expect": {"last_message_contains": found("  5:12: return g(3) (as g)")},
                "text": "f is used as g.",
            },
            call("find_references", path="pkg/core.py", line=1, symbol="f"),
            {
                "expect": {
                    "last_message_contains": found(
                        "  5:12: return g(3) (as g)", "  8:9: LATER = g(4) (as g)"
                    )
                },
                **call("find_definition", path="pkg/use.py", line=8, symbol="g"),
            },
            {
                # The definition with its lines (the outline's range of f).
                "expect": {
                    "last_message_contains": "1 definition of `g` (basedpyright):\n"
                    "pkg/core.py\n  1:5: def f(x: int) -> int:\n    2|     return x + 1"
                },
                "text": "and later too.",
            },
            call("find_references", path="pkg/core.py", line=1, symbol="f"),
            {
                # The buffer closed unsaved: the disk's text again.
                "expect": {
                    "last_message_contains": "2 references to `f` in 2 files (basedpyright):\n"
                    "pkg/core.py\n  1:5: def f(x: int) -> int:\n"
                    "pkg/use.py\n  1:22: from pkg.core import f"
                },
                "text": "only imported now.",
            },
        ],
    )
    # A client of the "visual-studio-code" profile, without Rein's
    # experimental.rein.navigation: no rein/navigate.
    async with editing(Editor(lsp_client, root), _settings(tmp_path)):
        yield lsp_client


async def test_serve_navigates_with_its_own_analyzer_on_the_live_buffers(
    client: LanguageClient,
) -> None:
    ed: Editor = client.editor  # type: ignore[attr-defined]
    ed.open("pkg/use.py")
    ed.type("pkg/use.py", TYPED)  # typed, not saved

    async def prompt(params: dict[str, Any]) -> dict[str, Any]:
        answer = await asyncio.wait_for(
            client.protocol.send_request_async("rein/prompt", params), 90
        )
        return answer  # type: ignore[no-any-return]

    def errors() -> list[str]:
        return [e["event"]["message"] for e in ed.events if e["event"]["type"] == "error"]

    first = await prompt({"text": "where is f used?"})
    assert first["status"] == "completed", errors()
    ed.type("pkg/use.py", TYPED_MORE)
    second = await prompt({"text": "and now?", "sessionId": first["sessionId"]})
    assert second["status"] == "completed", errors()
    client.text_document_did_close(
        lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri=ed.uri("pkg/use.py")))
    )
    third = await prompt({"text": "and after closing it?", "sessionId": first["sessionId"]})
    assert third["status"] == "completed", errors()
    assert (ed.root / "pkg/use.py").read_text() == ON_DISK
