"""The analyzer pool as a :class:`~rein.harness.navigation_ports.Navigator`:
``rein run`` and ``rein acp`` answer the navigation tools with the language
servers the analyzer gate already runs (basedpyright for Python, the
TypeScript, Go and C/C++ presets where they run), through the same
connections: no second server process.

The server of a question is chosen by what it said it offers in its
``initialize`` result (``definitionProvider``, ``referencesProvider``...) and
by the file's language (:func:`~rein.disk.nav_servers.servers_for`): a server without the
capability is skipped, the one offering the most of navigation is asked
first, the next one only when it had nothing; with none, the answer names
what is missing.

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
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from rein.disk.analyzer_requests import AnalyzerTimeout, bounded
from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzers import AnalyzerPool
from rein.disk.nav_servers import (
    CAPABILITIES,
    DIAGNOSTICS_ONLY,
    OPEN_TO_SEE,
    READS_LATER,
    SEES_OPEN_FILES_ONLY,
    NavigationServer,
    Stamp,
    WordCache,
    navigates,
    sees_open_files_only,
    servers_for,
    word_at,
)
from rein.disk.open_files import close_unlisted
from rein.disk.pool_status import not_found
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

__all__ = [
    "CAPABILITIES",
    "DIAGNOSTICS_ONLY",
    "INDEX_WAIT_S",
    "OPEN_TO_SEE",
    "SEES_OPEN_FILES_ONLY",
    "NavigationServer",
    "PoolNavigator",
    "navigates",
    "sees_open_files_only",
    "servers_for",
]

#: How long a question waits for the servers to settle (index the project).
INDEX_WAIT_S = 10.0
NOT_INDEXED = "the server may not have indexed the project yet"


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
        #: What questions seeing the workspace opened (an analyzer, a file),
        #: closed once none of them is in flight (:meth:`_seeing`).
        self._opened: list[tuple[_Analyzer, str]] = []
        self._in_flight = 0
        self._words = WordCache()

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

    def _absent(self) -> list[str]:
        """The servers that are not running from the start: not found, failed."""
        return [not_found(self.pool, name) for name in self.pool.missing] + self.pool.failed

    async def _ready(self, path: str, question: str) -> tuple[list[_Analyzer], bool]:
        """The servers that can answer ``question`` for ``path``, with the
        file open in them, and whether the pool settled within the bound."""
        await self.pool.started()
        await self._restarted(path)
        # A command's baseline shows the servers files as they were: answers
        # then would be on those texts (bounded; past it, they may be).
        await self.pool.shown_earlier.gone(self.pool.request_timeout_s)
        servers = servers_for(self.pool.analyzers, path, question, self._absent())
        if self.pool.skipped(path):
            raise NavigationUnavailable(f"{path} is not analysed (the workspace filter skips it).")
        await self.pool.ensure_open([path], importers=False)
        if not self._indexed:
            self._indexed = await self.pool.wait_idle(self.index_wait_s)
        return servers, self._indexed

    async def _restarted(self, path: str | None) -> None:
        """Wait, at most the request bound, for the restart of a crashed
        server of ``path``'s language (None: any) that waits out its backoff
        or starts again: a question right after a crash was refused with
        "it is restarting" and "use grep" though the server was back within
        a second. Then it is given the index wait again (it reads its files
        anew). One cooling down (its ``failure`` says why) is not waited
        for."""
        restarts = [
            task
            for server in self.pool.analyzers
            if not server.alive
            and server.failure is None
            and (path is None or server.owns(path))
            and (task := self.pool.restarts.pending(server.spec.name)) is not None
        ]
        if restarts:
            waited = asyncio.gather(*restarts, return_exceptions=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(waited), self.pool.request_timeout_s)
            # Started again, it reads its files anew: the index wait again.
            self._indexed = False

    @contextlib.asynccontextmanager
    async def _seeing(
        self, servers: Sequence[_Analyzer], path: str, position: Position
    ) -> AsyncIterator[str | None]:
        """:meth:`_see_workspace` for one question; after its answer, once
        no other such question is in flight, the files they opened that no
        change asked for meanwhile are closed
        (:func:`~rein.disk.open_files.close_unlisted`)."""
        self._in_flight += 1
        try:
            yield await self._see_workspace(servers, path, position)
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                opened, self._opened = self._opened, []
                close_unlisted(self.pool, opened)

    def _stamp(self, path: str) -> Stamp | None:
        """``path``'s stamp for :class:`~rein.disk.nav_servers.WordCache`;
        None when the editor's buffer holds its text (it has no stamp)."""
        if self.pool.read_first is not None and self.pool.read_first(path) is not None:
            return None
        try:
            found = (self.pool.root / path).stat()
        except OSError:
            return None
        return found.st_mtime_ns, found.st_size

    async def _see_workspace(
        self, servers: Sequence[_Analyzer], path: str, position: Position
    ) -> str | None:
        """Open in each server that knows only its open files (for ``path``:
        :func:`~rein.disk.nav_servers.sees_open_files_only`) the workspace's
        files it owns that name the symbol at ``position`` (all of them
        when no name is there), up to :data:`OPEN_TO_SEE`, and give it the
        index wait to read them; None when it sees them all, else what it
        does not see (its answer may miss uses there)."""
        for server in servers:
            mode = server.file_by_file and server.spec.diagnostic_mode_setting is not None
            if not sees_open_files_only(
                server.spec.name, self.pool.root, path, open_files_mode=mode
            ):
                continue
            owned = [p for p in sorted(self.pool.existing) if server.owns(p)]
            unseen = [p for p in owned if p not in server.versions and not self.pool.skipped(p)]
            text = self.pool.read(path)
            name = word_at(text, position.line, position.character) if text else None
            if name is not None and unseen:
                # Reading every such file: off the event loop.
                unseen = await asyncio.to_thread(
                    self._words.naming, self.pool.read, self._stamp, unseen, name
                )
            if len(unseen) > OPEN_TO_SEE:
                why = f"more than {OPEN_TO_SEE} to open"
            else:
                was_open = {id(a): set(a.versions) for a in self.pool.analyzers}
                opened = await self.pool.ensure_open(unseen, importers=False, listed=False)
                self._opened.extend(
                    (a, p)
                    for a in self.pool.analyzers
                    for p in opened
                    if p in a.versions and p not in was_open.get(id(a), ())
                )
                unseen = [p for p in unseen if p not in server.versions]
                why = f"unreadable: {unseen[0]}" if unseen else ""
                # clangd reads a file opened in it after answering didOpen
                # (the others as they answer: basedpyright checking what was
                # opened would only delay the answer).
                if (
                    opened
                    and not unseen
                    and server.spec.name in READS_LATER
                    and not await self.pool.wait_idle(self.index_wait_s)
                ):
                    return (
                        f"the analyzers had not settled within {self.index_wait_s:g} s "
                        f"after {len(opened)} {server.spec.name} file(s) were opened in "
                        f"{server.spec.name}"
                    )
            if unseen:
                named = f" naming `{name}`" if name is not None else ""
                return (
                    f"{server.spec.name} knows only the files open in it and did not see "
                    f"{len(unseen)} of the workspace's {len(owned)} {server.spec.name} "
                    f"files{named} ({why})"
                )
        return None

    async def _first(
        self,
        servers: Sequence[_Analyzer],
        question: str,
        ask: Callable[[LanguageClient], Awaitable[Any]],
    ) -> tuple[_Analyzer, Any]:
        """Ask the servers in turn; the first answer that is not empty wins
        (else the last server's, empty)."""
        answer: Any = None
        server = servers[0]
        for server in servers:
            if server.client is None:
                continue
            answer = await self._ask(server, f"a {question} request", ask(server.client))
            if answer:
                break
        return server, answer

    async def _ask(self, analyzer: _Analyzer, what: str, request: Awaitable[Any]) -> Any:
        seconds = self.pool.request_timeout_s
        try:
            # bounded: the request is shielded, so a server's late answer
            # completes it and is dropped (a plain wait_for cancelled pygls's
            # future, and the late answer set on it logged a traceback).
            answer = await bounded(analyzer.spec.name, what, seconds, request)
        except AnalyzerTimeout:
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
        servers, _ = await self._ready(path, "definition")
        document, at = self._doc(path, position)
        _, answer = await self._first(
            servers,
            "definition",
            lambda client: client.text_document_definition_async(
                lsp.DefinitionParams(text_document=document, position=at)
            ),
        )
        return self._locations(answer)

    async def references(
        self, path: str, position: Position, *, include_declaration: bool = True
    ) -> Sequence[CodeLocation]:
        servers, settled = await self._ready(path, "references")
        document, at = self._doc(path, position)
        context = lsp.ReferenceContext(include_declaration=include_declaration)
        async with self._seeing(servers, path, position) as unseen:
            _, answer = await self._first(
                servers,
                "references",
                lambda client: client.text_document_references_async(
                    lsp.ReferenceParams(text_document=document, position=at, context=context)
                ),
            )
        found = self._locations(answer)
        notes = [note for note in (unseen, None if settled else NOT_INDEXED) if note]
        return PartialLocations(found, "; ".join(notes)) if notes else found

    async def hover(self, path: str, position: Position) -> str | None:
        servers, _ = await self._ready(path, "hover")
        document, at = self._doc(path, position)
        _, answer = await self._first(
            servers,
            "hover",
            lambda client: client.text_document_hover_async(
                lsp.HoverParams(text_document=document, position=at)
            ),
        )
        return None if answer is None else _hover_text(answer.contents)

    async def document_symbols(self, path: str) -> Sequence[CodeSymbol]:
        servers, _ = await self._ready(path, "document symbols")
        document = lsp.TextDocumentIdentifier(self._uri(path))
        _, answer = await self._first(
            servers,
            "document symbols",
            lambda client: client.text_document_document_symbol_async(
                lsp.DocumentSymbolParams(text_document=document)
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
                extent=_range(item.range),
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
        """Every server that searches symbols is asked (one per language);
        the answer is said to come from all of them, and names the servers
        that are not running (their languages' symbols are not in it)."""
        await self.pool.started()
        await self._restarted(None)
        absent = self._absent()
        servers = servers_for(self.pool.analyzers, None, "workspace symbols", absent)
        if not self._indexed:
            self._indexed = await self.pool.wait_idle(self.index_wait_s)
        found: list[CodeSymbol] = []
        asked: list[str] = []
        for analyzer in servers:
            if analyzer.client is None:
                continue
            answer = await self._ask(
                analyzer,
                "a workspace symbols request",
                analyzer.client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=query)),
            )
            asked.append(analyzer.spec.name)
            found.extend(self._symbol("", item) for item in answer or [])
        # "(bash)" after a search basedpyright and typescript answered too
        # read as if only bash had looked, and gopls, not found, went unsaid.
        self._answered_by = ", ".join(asked) + (
            f"; not running: {', '.join(absent)}" if absent else ""
        )
        return found

    async def rename(
        self, path: str, position: Position, new_name: str
    ) -> Mapping[str, Sequence[TextReplacement]]:
        servers, _ = await self._ready(path, "rename")
        document, at = self._doc(path, position)
        async with self._seeing(servers, path, position) as unseen:
            if unseen is not None:
                # Its rename would leave the uses in the files it did not see.
                raise NavigationUnavailable(
                    f"Not renamed: {unseen}, and a rename could miss uses there; nothing "
                    "changed. Use grep and edit the files instead."
                )
            analyzer, answer = await self._first(
                servers,
                "rename",
                lambda client: client.text_document_rename_async(
                    lsp.RenameParams(text_document=document, position=at, new_name=new_name)
                ),
            )
            if answer is None:
                raise NavigationUnavailable(f"{analyzer.spec.name} has no rename at that place.")
            # The texts the server was sent, before its files are closed.
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
