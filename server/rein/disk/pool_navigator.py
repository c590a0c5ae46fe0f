"""The analyzer pool as a :class:`~rein.harness.navigation_ports.Navigator`:
``rein run`` and ``rein acp`` answer the navigation tools with the language
servers the analyzer gate already runs (basedpyright for Python, the
TypeScript, Go and C/C++ presets where they run), through the same
connections: no second server process.

Before a question the file is opened in its server (the pool's
``ensure_open``; the text is the one the pool shows its servers: the
client's buffer over ACP, else the disk), and until the pool has once
settled it is given a bounded wait to: basedpyright lists only a symbol's
declaration as its references until it has indexed the project. Past the
bound the answer is what the server has, marked as possibly incomplete
(:class:`~rein.harness.navigation_ports.PartialLocations`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp

from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzers import AnalyzerPool
from rein.harness.navigation_ports import (
    CodeLocation,
    CodeRange,
    CodeSymbol,
    FileEdits,
    NavigationUnavailable,
    PartialLocations,
    Position,
    TextReplacement,
)

__all__ = ["DIAGNOSTICS_ONLY", "INDEX_WAIT_S", "PoolNavigator", "navigates"]

#: Analyzers that only report findings (linters): never asked to navigate.
DIAGNOSTICS_ONLY = frozenset({"ruff", "eslint", "biome", "bash"})
#: How long a question waits for the servers to settle (index the project).
INDEX_WAIT_S = 10.0
NOT_INDEXED = "the server may not have indexed the project yet"


def navigates(names: Sequence[str]) -> bool:
    """Whether an analyzer of these names can answer navigation."""
    return any(name not in DIAGNOSTICS_ONLY for name in names)


def _position(p: lsp.Position) -> Position:
    return Position(p.line, p.character)


def _range(r: lsp.Range) -> CodeRange:
    return CodeRange(_position(r.start), _position(r.end))


def _kind(kind: Any) -> str:
    try:
        return lsp.SymbolKind(kind).name.lower()
    except ValueError:
        return "symbol"


def _hover_text(contents: Any) -> str:
    if isinstance(contents, lsp.MarkupContent):
        return contents.value
    if isinstance(contents, str):
        return contents
    if isinstance(contents, lsp.MarkedStringWithLanguage):
        return f"```{contents.language}\n{contents.value}\n```"
    if isinstance(contents, list | tuple):
        return "\n\n".join(_hover_text(c) for c in contents)
    return str(contents)


class PoolNavigator:
    """Navigation answered by the pool's running language servers."""

    def __init__(self, pool: AnalyzerPool, *, index_wait_s: float = INDEX_WAIT_S) -> None:
        self.pool = pool
        self.index_wait_s = index_wait_s
        self._answered_by: str | None = None
        #: The servers settled once: later questions do not wait (the
        #: server answers on the text it was last sent, as it stands).
        self._indexed = False

    @property
    def source(self) -> str:
        if self._answered_by is not None:
            return self._answered_by
        names = [s.name for s in self.pool.specs if s.name not in DIAGNOSTICS_ONLY]
        return "/".join(names) or "no language server"

    # ------------------------------------------------------------ plumbing

    def _uri(self, path: str) -> str:
        return (self.pool.root / path).as_uri()

    def _path(self, uri: str) -> str:
        rel = self.pool.relative(uri)
        if rel is not None:
            return rel
        parsed = urlparse(uri)
        return unquote(parsed.path) if parsed.scheme == "file" else uri

    def _location(self, uri: str, r: lsp.Range) -> CodeLocation:
        return CodeLocation(self._path(uri), _range(r))

    def _analyzer(self, path: str) -> _Analyzer:
        for analyzer in self.pool.analyzers:
            if analyzer.spec.name in DIAGNOSTICS_ONLY or not analyzer.owns(path):
                continue
            if not analyzer.alive or analyzer.client is None:
                why = analyzer.failure or "it is restarting"
                raise NavigationUnavailable(f"{analyzer.spec.name} is not running: {why}.")
            return analyzer
        suffix = Path(path).suffix or path
        running = ", ".join(a.spec.name for a in self.pool.analyzers) or "none"
        raise NavigationUnavailable(
            f"No language server here answers for {suffix} files (analyzers: {running}); "
            "use grep and read_file instead."
        )

    async def _ready(self, path: str) -> tuple[_Analyzer, bool]:
        """The server of ``path`` with the file open, and whether the pool
        settled within the bound."""
        await self.pool.started()
        analyzer = self._analyzer(path)
        if self.pool.skipped(path):
            raise NavigationUnavailable(f"{path} is not analysed (the workspace filter skips it).")
        await self.pool.ensure_open([path], importers=False)
        if not self._indexed:
            self._indexed = await self.pool.wait_idle(self.index_wait_s)
        return analyzer, self._indexed

    async def _ask(self, analyzer: _Analyzer, what: str, request: Awaitable[Any]) -> Any:
        seconds = self.pool.request_timeout_s
        try:
            answer = await asyncio.wait_for(request, seconds)
        except TimeoutError:
            raise NavigationUnavailable(
                f"{analyzer.spec.name} did not answer {what} within {seconds:g} s."
            ) from None
        except NavigationUnavailable:
            raise
        except Exception as exc:
            raise NavigationUnavailable(f"{analyzer.spec.name} failed {what}: {exc}") from None
        self._answered_by = analyzer.spec.name
        return answer

    def _doc(
        self, path: str, position: Position
    ) -> tuple[lsp.TextDocumentIdentifier, lsp.Position]:
        return (
            lsp.TextDocumentIdentifier(uri=self._uri(path)),
            lsp.Position(line=position.line, character=position.character),
        )

    def _locations(self, answer: Any) -> list[CodeLocation]:
        if answer is None:
            return []
        items = answer if isinstance(answer, list | tuple) else [answer]
        out: list[CodeLocation] = []
        for item in items:
            if isinstance(item, lsp.Location):
                out.append(self._location(item.uri, item.range))
            elif isinstance(item, lsp.LocationLink):
                out.append(self._location(item.target_uri, item.target_selection_range))
        return out

    # ----------------------------------------------------------- Navigator

    async def definition(self, path: str, position: Position) -> Sequence[CodeLocation]:
        analyzer, _ = await self._ready(path)
        assert analyzer.client is not None
        document, at = self._doc(path, position)
        answer = await self._ask(
            analyzer,
            "a definition request",
            analyzer.client.text_document_definition_async(
                lsp.DefinitionParams(text_document=document, position=at)
            ),
        )
        return self._locations(answer)

    async def references(
        self, path: str, position: Position, *, include_declaration: bool = True
    ) -> Sequence[CodeLocation]:
        analyzer, settled = await self._ready(path)
        assert analyzer.client is not None
        document, at = self._doc(path, position)
        answer = await self._ask(
            analyzer,
            "a references request",
            analyzer.client.text_document_references_async(
                lsp.ReferenceParams(
                    text_document=document,
                    position=at,
                    context=lsp.ReferenceContext(include_declaration=include_declaration),
                )
            ),
        )
        found = self._locations(answer)
        return found if settled else PartialLocations(found, NOT_INDEXED)

    async def hover(self, path: str, position: Position) -> str | None:
        analyzer, _ = await self._ready(path)
        assert analyzer.client is not None
        document, at = self._doc(path, position)
        answer = await self._ask(
            analyzer,
            "a hover request",
            analyzer.client.text_document_hover_async(
                lsp.HoverParams(text_document=document, position=at)
            ),
        )
        return None if answer is None else _hover_text(answer.contents)

    async def document_symbols(self, path: str) -> Sequence[CodeSymbol]:
        analyzer, _ = await self._ready(path)
        assert analyzer.client is not None
        answer = await self._ask(
            analyzer,
            "a document symbols request",
            analyzer.client.text_document_document_symbol_async(
                lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(self._uri(path)))
            ),
        )
        return [self._symbol(path, item) for item in answer or []]

    def _symbol(self, path: str, item: Any, container: str | None = None) -> CodeSymbol:
        if isinstance(item, lsp.DocumentSymbol):
            return CodeSymbol(
                name=item.name,
                kind=_kind(item.kind),
                location=CodeLocation(path, _range(item.selection_range)),
                container=container,
                detail=item.detail or None,
                children=tuple(self._symbol(path, c, item.name) for c in item.children or []),
            )
        location = item.location
        if isinstance(location, lsp.Location):
            where = self._location(location.uri, location.range)
        else:
            where = CodeLocation(
                self._path(location.uri), CodeRange(Position(0, 0), Position(0, 0))
            )
        return CodeSymbol(
            name=item.name,
            kind=_kind(item.kind),
            location=where,
            container=item.container_name or None,
        )

    async def workspace_symbols(self, query: str) -> Sequence[CodeSymbol]:
        found: list[CodeSymbol] = []
        await self.pool.started()
        if not self._indexed:
            self._indexed = await self.pool.wait_idle(self.index_wait_s)
        asked = False
        for analyzer in self.pool.analyzers:
            if analyzer.spec.name in DIAGNOSTICS_ONLY or not analyzer.alive:
                continue
            if analyzer.client is None:
                continue
            asked = True
            answer = await self._ask(
                analyzer,
                "a workspace symbols request",
                analyzer.client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=query)),
            )
            found.extend(self._symbol("", item) for item in answer or [])
        if not asked:
            raise NavigationUnavailable("No language server is running here to search symbols.")
        return found

    async def rename(
        self, path: str, position: Position, new_name: str
    ) -> Mapping[str, Sequence[TextReplacement]]:
        analyzer, _ = await self._ready(path)
        assert analyzer.client is not None
        document, at = self._doc(path, position)
        answer = await self._ask(
            analyzer,
            "a rename request",
            analyzer.client.text_document_rename_async(
                lsp.RenameParams(text_document=document, position=at, new_name=new_name)
            ),
        )
        if answer is None:
            raise NavigationUnavailable(f"{analyzer.spec.name} has no rename at that place.")
        return _rename_edits(answer, self._path, analyzer.sent, analyzer.spec.name)


def _rename_edits(
    answer: lsp.WorkspaceEdit, path_of: Callable[[str], str], sent: Mapping[str, str], server: str
) -> dict[str, FileEdits]:
    """A rename's WorkspaceEdit as edits per path, each with the text the
    server was sent (``sent``), so rename_symbol refuses them for a file
    that holds another text by then. ``documentChanges``, when given, is
    the answer (in LSP it wins over ``changes``)."""
    edits: dict[str, list[TextReplacement]] = {}
    if answer.document_changes:
        for change in answer.document_changes:
            if not isinstance(change, lsp.TextDocumentEdit):
                raise NavigationUnavailable(
                    f"{server}'s rename creates, renames or deletes files, which "
                    "rename_symbol does not do; nothing changed."
                )
            edits.setdefault(path_of(change.text_document.uri), []).extend(
                TextReplacement(
                    _range(e.range),
                    e.snippet.value if isinstance(e, lsp.SnippetTextEdit) else e.new_text,
                )
                for e in change.edits
            )
    else:
        for uri, changes in (answer.changes or {}).items():
            edits.setdefault(path_of(uri), []).extend(
                TextReplacement(_range(c.range), c.new_text) for c in changes
            )
    return {path: FileEdits(found, text=sent.get(path)) for path, found in edits.items()}
