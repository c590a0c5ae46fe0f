"""The editor's navigator: each ``rein/navigate`` answer becomes the
navigation port's types; errors, timeouts, malformed answers and renames
with file operations become NavigationUnavailable naming the reason; only a
client offering navigation gets the navigator (any other gets Rein's own
servers, started on the first question)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

from rein.config import load_config
from rein.disk.analyzer_specs import find_executable
from rein.disk.lazy_navigator import LazyPoolNavigator
from rein.harness.navigation_ports import (
    CodeLocation,
    CodeRange,
    CodeSymbol,
    FileEdits,
    NavigationUnavailable,
    Position,
    TextReplacement,
)
from rein.lsp import create_server
from rein.lsp.client_timeout import ClientTimeout
from rein.lsp.editor_navigation import EditorNavigator
from rein.lsp.server import ReinServer
from tests.fakes.channel import FakeClientChannel


def rng(l1: int, c1: int, l2: int, c2: int) -> dict[str, Any]:
    return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}


def code_range(l1: int, c1: int, l2: int, c2: int) -> CodeRange:
    return CodeRange(Position(l1, c1), Position(l2, c2))


def navigator(tmp_path: Path, *answers: Any) -> tuple[EditorNavigator, FakeClientChannel]:
    channel = FakeClientChannel({"rein/navigate": list(answers)})
    return EditorNavigator(channel, tmp_path), channel  # type: ignore[arg-type]


async def test_definitions_and_references_become_workspace_relative_locations(
    tmp_path: Path,
) -> None:
    uri = (tmp_path / "src" / "a.ts").as_uri()
    nav, channel = navigator(
        tmp_path,
        # LocationLinks: the name's range (targetSelectionRange) is the place.
        [
            {
                "targetUri": uri,
                "targetRange": rng(3, 0, 9, 1),
                "targetSelectionRange": rng(3, 16, 3, 21),
            },
            {"targetUri": "file:///usr/lib/node/lib.d.ts", "targetRange": rng(1, 2, 1, 5)},
        ],
        {"uri": uri, "range": rng(0, 1, 0, 2)},  # one Location, not a list
        [
            {"uri": uri, "range": rng(3, 16, 3, 21)},
            # An unsaved document's reference: no file a tool could open, left out.
            {"uri": "untitled:Untitled-1", "range": rng(0, 0, 0, 3)},
            {"uri": uri, "range": rng(12, 4, 12, 9)},
        ],
        None,
    )
    found = await nav.definition("src/b.ts", Position(2, 7))
    assert found == [
        CodeLocation("src/a.ts", code_range(3, 16, 3, 21)),
        CodeLocation("/usr/lib/node/lib.d.ts", code_range(1, 2, 1, 5)),
    ]
    assert await nav.definition("src/b.ts", Position(0, 0)) == [
        CodeLocation("src/a.ts", code_range(0, 1, 0, 2))
    ]
    refs = await nav.references("src/a.ts", Position(3, 17), include_declaration=False)
    assert [(r.path, r.range.start.line) for r in refs] == [("src/a.ts", 3), ("src/a.ts", 12)]
    assert await nav.definition("src/a.ts", Position(5, 0)) == []
    assert channel.requests[0] == (
        "rein/navigate",
        {
            "kind": "definition",
            "uri": (tmp_path / "src" / "b.ts").as_uri(),
            "position": {"line": 2, "character": 7},
        },
    )
    assert channel.requests[2][1] == {
        "kind": "references",
        "uri": uri,
        "position": {"line": 3, "character": 17},
        "includeDeclaration": False,
    }
    assert nav.source == "the editor"


async def test_hover_contents_as_text(tmp_path: Path) -> None:
    nav, _ = navigator(
        tmp_path,
        {"contents": "function f(x: number): string\n\nDoes f."},
        {"contents": {"kind": "markdown", "value": "**f**"}},
        {"contents": [{"language": "python", "value": "def f(x)"}, "Does f."]},
        {"contents": ""},
        None,
    )
    assert await nav.hover("a.py", Position(0, 4)) == "function f(x: number): string\n\nDoes f."
    assert await nav.hover("a.py", Position(0, 4)) == "**f**"
    assert await nav.hover("a.py", Position(0, 4)) == "```python\ndef f(x)\n```\n\nDoes f."
    assert await nav.hover("a.py", Position(0, 4)) is None
    assert await nav.hover("a.py", Position(0, 4)) is None


async def test_document_outline_and_workspace_symbols(tmp_path: Path) -> None:
    other = (tmp_path / "m.py").as_uri()
    nav, channel = navigator(
        tmp_path,
        [
            {
                "name": "Shape",
                "detail": "class",
                "kind": 5,
                "range": rng(0, 0, 4, 0),
                "selectionRange": rng(0, 6, 0, 11),
                "children": [
                    {
                        "name": "area",
                        "kind": 6,
                        "range": rng(1, 4, 3, 0),
                        "selectionRange": rng(1, 8, 1, 12),
                    },
                    # No selectionRange (a provider in JavaScript): the range.
                    {"name": "size", "kind": 7, "range": rng(3, 4, 3, 9)},
                ],
            }
        ],
        [
            {
                "name": "area",
                "kind": 6,
                "containerName": "Shape",
                "location": {"uri": other, "range": rng(1, 8, 1, 12)},
            },
            {"name": "AREA", "kind": 14, "location": {"uri": other}},  # a WorkspaceSymbol
            # An unsaved document is no file a tool can read: left out.
            {"name": "area", "kind": 12, "location": {"uri": "untitled:Untitled-1"}},
        ],
    )
    # An outline points at each symbol's name (selectionRange), as the pool's
    # do; its whole range is the extent (find_definition shows its lines).
    (outline,) = await nav.document_symbols("s.py")
    assert outline == CodeSymbol(
        "Shape",
        "class",
        CodeLocation("s.py", code_range(0, 6, 0, 11)),
        detail="class",
        children=(
            CodeSymbol(
                "area",
                "method",
                CodeLocation("s.py", code_range(1, 8, 1, 12)),
                extent=code_range(1, 4, 3, 0),
            ),
            CodeSymbol(
                "size",
                "property",
                CodeLocation("s.py", code_range(3, 4, 3, 9)),
                extent=code_range(3, 4, 3, 9),
            ),
        ),
        extent=code_range(0, 0, 4, 0),
    )
    found = await nav.workspace_symbols("area")
    assert found == [
        CodeSymbol(
            "area", "method", CodeLocation("m.py", code_range(1, 8, 1, 12)), container="Shape"
        ),
        CodeSymbol("AREA", "constant", CodeLocation("m.py", code_range(0, 0, 0, 0))),
    ]
    assert channel.requests[1][1] == {"kind": "workspaceSymbols", "query": "area"}


async def test_rename_edits_per_path_from_changes_or_document_changes(tmp_path: Path) -> None:
    a, b = (tmp_path / "a.py").as_uri(), (tmp_path / "pkg" / "b.py").as_uri()
    nav, channel = navigator(
        tmp_path,
        {"changes": {a: [{"range": rng(0, 4, 0, 5), "newText": "g"}], b: []}},
        {
            "documentChanges": [
                {"textDocument": {"uri": a, "version": 3}, "edits": []},
                {
                    "textDocument": {"uri": b, "version": 7},
                    "edits": [
                        {"range": rng(0, 14, 0, 15), "newText": "g"},
                        {"range": rng(2, 0, 2, 1), "newText": "g", "annotationId": "x"},
                    ],
                },
                {
                    "textDocument": {"uri": (tmp_path / "c.py").as_uri(), "version": None},
                    "edits": [{"range": rng(1, 0, 1, 1), "newText": "g"}],
                },
            ]
        },
    )
    first = await nav.rename("a.py", Position(0, 4), "g")
    assert {p: list(e) for p, e in first.items()} == {
        "a.py": [TextReplacement(code_range(0, 4, 0, 5), "g")]
    }
    assert first["a.py"].version is None  # "changes" say no version
    # Each edit carries the version of the document it was computed on (an
    # open buffer's), and so does the file's FileEdits, which rename_symbol checks.
    second = await nav.rename("a.py", Position(0, 4), "g")
    assert {p: list(e) for p, e in second.items()} == {
        "pkg/b.py": [
            TextReplacement(code_range(0, 14, 0, 15), "g", version=7),
            TextReplacement(code_range(2, 0, 2, 1), "g", version=7),
        ],
        "c.py": [TextReplacement(code_range(1, 0, 1, 1), "g")],
    }
    assert isinstance(second["pkg/b.py"], FileEdits)
    assert (second["pkg/b.py"].version, second["c.py"].version) == (7, None)
    assert channel.requests[0][1]["newName"] == "g"


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            ClientTimeout("rein/navigate", 10),
            "did not answer rein/navigate within 10 s (harness.clientRequestTimeoutMs)",
        ),
        (JsonRpcException(code=-32603, message="no provider"), "could not answer rename"),
        (JsonRpcMethodNotFound(), "does not answer rein/navigate"),
        (None, "no rename for the symbol there"),
        ("nonsense", "is not a WorkspaceEdit"),
        (
            {"documentChanges": [{"kind": "rename", "oldUri": "a", "newUri": "b"}]},
            "also renames files, which Rein does not apply",
        ),
        ({"changes": {"file:///a.py": [{"range": rng(0, 0, 0, 1)}]}}, "TextEdits"),
        (
            {"documentChanges": [{"textDocument": {"uri": "file:///a.py", "version": "3"}}]},
            "a textDocument version as an integer or null",
        ),
        (
            {"changes": {"untitled:Untitled-1": [{"range": rng(0, 0, 0, 1), "newText": "g"}]}},
            "also edits untitled:Untitled-1, which is not a file on disk (save it first)",
        ),
    ],
)
async def test_what_the_editor_cannot_answer_is_unavailable_with_the_reason(
    tmp_path: Path, answer: Any, reason: str
) -> None:
    nav, _ = navigator(tmp_path, answer)
    with pytest.raises(NavigationUnavailable, match=reason.replace("(", r"\(").replace(")", r"\)")):
        await nav.rename("a.py", Position(0, 0), "g")


async def test_malformed_locations_and_a_forgotten_method_are_unavailable(
    tmp_path: Path,
) -> None:
    nav, channel = navigator(tmp_path, [{"uri": "file:///a.py"}], [{"range": rng(0, 0, 0, 1)}])
    with pytest.raises(NavigationUnavailable, match=r"\(definition\) is not ranges"):
        await nav.definition("a.py", Position(0, 0))
    with pytest.raises(NavigationUnavailable, match="Location or LocationLink"):
        await nav.references("a.py", Position(0, 0))
    channel.unsupported.add("rein/navigate")
    with pytest.raises(NavigationUnavailable, match="does not answer rein/navigate"):
        await nav.hover("a.py", Position(0, 0))
    assert len(channel.requests) == 2


class _Sink:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


def _initialized(root: Path, capabilities: dict[str, Any]) -> ReinServer:
    server = create_server()
    server.protocol.set_writer(_Sink())
    frame = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities},
    }
    server.protocol.handle_frame(json.dumps(frame).encode())
    return server


@pytest.mark.parametrize(
    ("capabilities", "offered"),
    [
        ({"experimental": {"rein": {"navigation": True}}}, True),
        ({"experimental": {"rein": {"navigation": "yes"}}}, False),
        ({"experimental": {"other": True}}, False),
        ({}, False),
    ],
)
def test_only_a_client_offering_navigation_gets_the_editor_navigator(
    tmp_path: Path, capabilities: dict[str, Any], offered: bool
) -> None:
    server = _initialized(tmp_path, capabilities)
    navigator = server.folder.navigator
    assert isinstance(navigator, EditorNavigator) is offered
    if offered:
        assert isinstance(navigator, EditorNavigator)
        assert navigator.client is server.client
        assert navigator.root == tmp_path.resolve()


async def test_a_client_without_navigation_gets_reins_own_servers_started_on_first_use(
    tmp_path: Path,
) -> None:
    """A Python folder: Rein's analyzer servers answer, none started before a
    question; closing the folder closes them (a question then is refused)."""
    if find_executable("basedpyright-langserver") is None:
        pytest.skip("needs basedpyright")
    (tmp_path / "a.py").write_text("x = 1\n")
    server = _initialized(tmp_path, {})
    navigator = server.folder.navigator
    assert isinstance(navigator, LazyPoolNavigator)
    assert "basedpyright" in [spec.name for spec in navigator.specs]
    assert not navigator.started and navigator.pool.analyzers == []
    await server.folder.close()
    with pytest.raises(NavigationUnavailable, match="the workspace folder is closed"):
        await navigator.references("a.py", Position(0, 0))
    assert not navigator.started


def test_a_folder_without_a_language_that_navigates_gets_no_navigator(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# notes\n")
    assert _initialized(tmp_path, {}).folder.navigator is None


def test_with_the_analyzer_gate_off_no_servers_of_reins_answer(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    server = _initialized(tmp_path, {})
    server.config = load_config({"gates": {"analyzer": {"enabled": False}}}, "test")
    assert server.folder.navigator is None


def test_nothing_of_the_folders_own_runs_for_a_client_without_navigation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An LSP client says nothing of whether the person trusts the folder:
    its own node_modules/.bin server is not the one started (with none
    elsewhere the tools are not offered), and its own tsserver.js is not
    handed to a server found elsewhere."""
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    monkeypatch.setenv("REIN_TOOL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("sys.executable", str(tmp_path / "py" / "python"))
    folder = tmp_path / "ws"
    bin_dir = folder / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    own = bin_dir / "typescript-language-server"
    own.write_text("#!/bin/sh\ntouch ran\n")
    own.chmod(0o755)
    (folder / "node_modules" / "typescript" / "lib").mkdir(parents=True)
    (folder / "node_modules" / "typescript" / "lib" / "tsserver.js").write_text("//\n")
    (folder / "a.ts").write_text("export const x = 1;\n")
    assert _initialized(folder, {}).folder.navigator is None
    elsewhere = tmp_path / "cache" / "bin"
    elsewhere.mkdir(parents=True)
    (elsewhere / "typescript-language-server").write_text("#!/bin/sh\n")
    (elsewhere / "typescript-language-server").chmod(0o755)
    navigator = _initialized(folder, {}).folder.navigator
    assert isinstance(navigator, LazyPoolNavigator)
    [spec] = [s for s in navigator.specs if s.name == "typescript"]
    assert spec.command[0] == str(elsewhere / "typescript-language-server")
    assert "path" not in (spec.initialization_options or {}).get("tsserver", {})
