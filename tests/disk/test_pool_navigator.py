"""The pool navigator's own logic, without a server: which analyzers may
answer, hover texts, and a clear refusal when none can."""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from lsprotocol import types as lsp

from rein.config import load_config
from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzers import AnalyzerPool, AnalyzerSpec
from rein.disk.nav_servers import naming, word_at
from rein.disk.pool_navigator import (
    PoolNavigator,
    _hover_text,
    _rename_edits,
    navigates,
    sees_open_files_only,
    servers_for,
)
from rein.harness.navigation_ports import (
    CodeRange,
    FileEdits,
    NavigationUnavailable,
    Position,
    TextReplacement,
)
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel


def _spec(name: str, command: str) -> AnalyzerSpec:
    return AnalyzerSpec(name, (command,), frozenset({".x"}))


def test_only_installed_servers_that_are_not_linters_navigate() -> None:
    here = sys.executable  # an executable that is there
    assert not navigates([_spec(n, here) for n in ("ruff", "eslint", "biome")])
    assert navigates([_spec("ruff", here), _spec("basedpyright", here)])
    assert navigates([_spec("gopls", here)])
    # bash-language-server answers shell functions' definitions, references
    # and renames: a shell-only project had no navigation tools.
    assert navigates([_spec("bash", here)])
    # A server that is not installed answers nothing: a Go project without
    # gopls was offered the tools, and each call said gopls was not found.
    assert not navigates([_spec("gopls", "gopls-not-installed-here")])
    assert not navigates([_spec("ruff", here), _spec("basedpyright", "/nowhere/basedpyright")])


async def test_a_workspace_whose_language_server_is_missing_is_offered_no_navigation(
    tmp_path: Path,
) -> None:
    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.19\n")
    (tmp_path / "main.go").write_text("package main\n\nfunc main() {}\n")
    missing = {"name": "gopls", "command": ["gopls-not-installed-here"]}
    config = load_config({"gates": {"analyzer": {"servers": [missing]}}})
    tools = ["find_definition", "find_references", "hover", "symbols", "rename_symbol"]
    model = ReplayModel([{"expect": {"tools_exclude": tools}, "text": "done"}])
    async with HeadlessSession(tmp_path, model, config, watch=False) as session:
        result = await session.prompt("look")
    assert result.status == "completed", result.error
    (request,) = model.requests
    assert not [t for t in tools if f"`{t}`" in request.system]


def test_hover_contents_of_every_shape_become_text() -> None:
    markup = lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="**f**")
    assert _hover_text(markup) == "**f**"
    marked = lsp.MarkedStringWithLanguage(language="python", value="def f()")
    assert _hover_text([marked, "doc"]) == "```python\ndef f()\n```\n\ndoc"


async def test_a_file_no_running_server_owns_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    async with AnalyzerPool(tmp_path, []) as pool:
        navigator = PoolNavigator(pool, index_wait_s=0.1)
        assert navigator.source == "no language server"
        with pytest.raises(
            NavigationUnavailable,
            match=r"No language server for \.py files answers references \(analyzers: none\)",
        ):
            await navigator.references("a.py", Position(0, 0))
        with pytest.raises(
            NavigationUnavailable, match=r"No language server here answers workspace symbols"
        ):
            await navigator.workspace_symbols("x")


def test_a_rename_answer_is_documentchanges_when_given_with_the_text_the_server_was_sent() -> None:
    def edit(line: int, new: str) -> lsp.TextEdit:
        place = lsp.Position(line=line, character=0)
        return lsp.TextEdit(range=lsp.Range(start=place, end=place), new_text=new)

    doc = lsp.OptionalVersionedTextDocumentIdentifier(uri="file:///w/a.py", version=None)
    both = lsp.WorkspaceEdit(
        changes={"file:///w/a.py": [edit(0, "x")]},
        document_changes=[lsp.TextDocumentEdit(text_document=doc, edits=[edit(0, "x")])],
    )
    path_of = {"file:///w/a.py": "a.py", "file:///w/b.py": "b.py"}.__getitem__
    edits = _rename_edits(both, path_of, {"a.py": "sent text"}, "srv")
    # One of the two (LSP: documentChanges wins), not the same insert twice.
    assert edits == {"a.py": (TextReplacement(CodeRange(Position(0, 0), Position(0, 0)), "x"),)}
    assert isinstance(edits["a.py"], FileEdits) and edits["a.py"].text == "sent text"
    only_changes = lsp.WorkspaceEdit(changes={"file:///w/b.py": [edit(1, "y")]})
    assert _rename_edits(only_changes, path_of, {}, "srv")["b.py"].text is None
    create = lsp.WorkspaceEdit(document_changes=[lsp.CreateFile(uri="file:///w/c.py")])
    with pytest.raises(NavigationUnavailable, match="srv's rename creates, renames or deletes"):
        _rename_edits(create, path_of, {}, "srv")


@dataclass
class Server:
    """What choosing a server reads of an analyzer (NavigationServer)."""

    spec: AnalyzerSpec
    capabilities: Mapping[str, Any] = field(default_factory=dict)
    alive: bool = True
    failure: str | None = None

    def owns(self, path: str) -> bool:
        return Path(path).suffix in self.spec.extensions


def server(name: str, extensions: set[str], **capabilities: Any) -> Server:
    return Server(AnalyzerSpec(name, (name,), frozenset(extensions)), capabilities)


EVERYTHING = {
    "definitionProvider": True,
    "referencesProvider": {"workDoneProgress": True},
    "hoverProvider": True,
    "documentSymbolProvider": {},
    "workspaceSymbolProvider": True,
    "renameProvider": {"prepareProvider": True},
}


def test_a_server_is_chosen_by_its_capabilities_and_the_files_language() -> None:
    linter = server("lint", {".py"}, hoverProvider=True, referencesProvider=False)
    python = server("py", {".py"}, **EVERYTHING)
    go = server("go", {".go"}, **EVERYTHING)
    servers = [linter, python, go]
    # Only the servers of the file's language that offer the question; an
    # options object ({} too) offers it, false or absent does not.
    assert servers_for(servers, "a.py", "references") == [python]
    assert servers_for(servers, "a.py", "document symbols") == [python]
    assert servers_for(servers, "m.go", "rename") == [go]
    # Both offer hover: the one offering the most navigation is asked first.
    assert servers_for(servers, "a.py", "hover") == [python, linter]
    # Workspace symbols: every language's.
    assert servers_for(servers, None, "workspace symbols") == [python, go]


def test_no_server_able_to_answer_names_what_is_missing() -> None:
    linter = server("lint", {".py"}, hoverProvider=True)
    down = server("py", {".py"}, **EVERYTHING)
    down.alive, down.failure = False, "exited (code 1)"
    with pytest.raises(NavigationUnavailable) as caught:
        servers_for([linter, down], "a.py", "definition")
    assert str(caught.value) == (
        "No language server for .py files answers definition: lint does not offer "
        "definition (definitionProvider); py is not running: exited (code 1). "
        "Use grep and read_file instead."
    )
    with pytest.raises(NavigationUnavailable) as caught:
        servers_for([linter], "x.rs", "hover", ["rust-analyzer: not found"])
    assert str(caught.value) == (
        "No language server for .rs files answers hover (analyzers: lint); "
        "not running: rust-analyzer: not found. Use grep and read_file instead."
    )


@dataclass
class SearchingServer(Server):
    """A running server that answers workspace/symbol with ``names``."""

    names: tuple[str, ...] = ()
    client: Any = None

    def __post_init__(self) -> None:
        names = self.names

        class Client:
            async def workspace_symbol_async(self, params: Any) -> list[Any]:
                return [
                    lsp.SymbolInformation(
                        name=n,
                        kind=lsp.SymbolKind.Function,
                        location=lsp.Location(
                            "file:///ws/a.py", lsp.Range(lsp.Position(0, 4), lsp.Position(0, 5))
                        ),
                    )
                    for n in names
                    if params.query in n
                ]

        self.client = Client()


class StartedPool:
    def __init__(self, analyzers: list[Any], missing: list[str]) -> None:
        self.root = Path("/ws")
        self.analyzers = analyzers
        self.missing = missing
        self.failed: list[str] = []
        self.specs = [a.spec for a in analyzers]
        self.request_timeout_s = 5.0

    async def started(self) -> None:
        pass

    def relative(self, uri: str) -> str | None:
        return uri.removeprefix("file:///ws/")

    async def wait_idle(self, timeout_s: float) -> bool:
        return True


async def test_a_workspace_search_names_every_server_asked_and_those_not_running() -> None:
    """'No symbols in the workspace matching `Total` (bash).': basedpyright
    and typescript had been asked too, and gopls (not found), the one that
    knows Go's Total, went unsaid."""
    python = SearchingServer(
        AnalyzerSpec("basedpyright", ("b",), frozenset({".py"})), EVERYTHING, names=("total_of",)
    )
    bash = SearchingServer(AnalyzerSpec("bash", ("b",), frozenset({".sh"})), EVERYTHING)
    pool = StartedPool([python, bash], missing=["gopls"])
    navigator = PoolNavigator(pool, index_wait_s=0.1)  # type: ignore[arg-type]
    assert await navigator.workspace_symbols("Total") == []
    assert navigator.source == "basedpyright, bash; not running: gopls was not found"
    found = await navigator.workspace_symbols("total")
    assert [s.name for s in found] == ["total_of"]


async def test_a_late_answer_after_the_bound_is_dropped_not_met_by_a_cancelled_request(
    tmp_path: Path,
) -> None:
    # pygls's request: a concurrent future, awaited wrapped. A plain
    # wait_for cancelled it at the bound, and the server's late answer,
    # set on it, raised InvalidStateError (pygls logged a traceback).
    sent: concurrent.futures.Future[Any] = concurrent.futures.Future()
    async with AnalyzerPool(tmp_path, [], request_timeout_ms=100) as pool:
        navigator = PoolNavigator(pool, index_wait_s=0.1)
        slow = cast(_Analyzer, SimpleNamespace(spec=AnalyzerSpec("gopls", ("g",), frozenset())))
        with pytest.raises(
            NavigationUnavailable, match=r"gopls did not answer a references request within 0.1 s"
        ):
            await navigator._ask(slow, "a references request", asyncio.wrap_future(sent))
        assert not sent.cancelled()
        sent.set_result([])  # the late answer: taken, dropped


def test_the_typescript_server_sees_only_open_files_without_a_config_above_the_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "web/src").mkdir(parents=True)
    (tmp_path / "js/lib").mkdir(parents=True)
    (tmp_path / "web/tsconfig.json").write_text("{}\n")
    # A configured project knows all its files; an inferred one the open ones.
    assert not sees_open_files_only("typescript", tmp_path, "web/src/a.ts")
    assert sees_open_files_only("typescript", tmp_path, "js/lib/a.js")
    (tmp_path / "js/jsconfig.json").write_text("{}\n")
    assert not sees_open_files_only("typescript", tmp_path, "js/lib/a.js")
    assert sees_open_files_only("typescript", tmp_path, "top.ts")
    assert sees_open_files_only("clangd", tmp_path, "web/src/a.c")
    assert sees_open_files_only("bash", tmp_path, "web/run.sh")
    assert not sees_open_files_only("gopls", tmp_path, "main.go")


def test_the_files_to_open_are_those_naming_the_symbol_at_the_place() -> None:
    text = 'x = "😀"; total(x)\nother.total\n'
    # The name around a UTF-16 column (the emoji counts two).
    assert word_at(text, 0, 10) == "total"
    assert word_at(text, 0, 15) == "total"  # at its end
    assert word_at(text, 1, 6) == "total"
    assert word_at(text, 0, 3) is None  # a space and a quote
    assert word_at(text, 5, 0) is None
    assert word_at("const $el = 1;\n", 0, 7) == "$el"
    texts = {
        "a.py": "from m import total as t\n",
        "b.py": "subtotal = 1\n",
        "c.py": "m.total()\n",
        "d.py": None,  # unreadable: kept (it stays unseen, and is named)
    }
    assert naming(texts.get, sorted(texts), "total") == ["a.py", "c.py", "d.py"]
