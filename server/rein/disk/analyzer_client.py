"""The pool's LSP client of one analyzer server (pygls's LanguageClient):
which of the server's messages go to which of the analyzer's handlers
(:class:`ClientListener`), and the notifications that show the server a
document (:func:`show_opened`, :func:`show_changed`, :func:`show_closed`,
:func:`show_watched`). Its diagnostics and capabilities are kept as
plain JSON: some servers send capabilities lsprotocol cannot structure
(ruff's notebook selector), and structuring thousands of diagnostics with
cattrs cost a large repository's verdict tens of milliseconds per change
(sympy)."""

from __future__ import annotations

from typing import Any, Protocol

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from rein.disk.analyzer_notices import NoticeListener, listen

__all__ = [
    "ClientListener",
    "analyzer_client",
    "show_changed",
    "show_closed",
    "show_opened",
    "show_watched",
]


class ClientListener(NoticeListener, Protocol):
    """What the client reports to (the analyzer): besides the server's
    notices, its diagnostics, its questions for settings, its request to
    pull every file again, and its exit."""

    def on_publish(self, params: dict[str, Any]) -> None: ...
    def on_configuration(self, params: lsp.ConfigurationParams) -> list[Any]: ...
    def on_refresh(self) -> None: ...
    async def on_exit(self, returncode: int | None) -> None: ...


def analyzer_client(listener: ClientListener, name: str) -> LanguageClient:
    """A client whose handlers report to ``listener`` (``name``: the
    server's, in the log); not started."""
    client = LanguageClient("rein-analyzer-pool", "0.1")
    for raw in (lsp.InitializeResult, lsp.PublishDiagnosticsParams):
        client.protocol._converter.register_structure_hook(raw, lambda obj, _type: obj)

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: Any) -> None:
        listener.on_publish(params)

    @client.feature(lsp.WORKSPACE_CONFIGURATION)
    def on_configuration(params: lsp.ConfigurationParams) -> list[Any]:
        return listener.on_configuration(params)

    @client.feature(lsp.WORKSPACE_DIAGNOSTIC_REFRESH)
    def on_refresh(params: Any) -> None:
        listener.on_refresh()

    listen(client, listener, name)

    async def server_exit(server: Any) -> None:
        await listener.on_exit(server.returncode)

    client.server_exit = server_exit  # type: ignore[method-assign]
    return client


def show_opened(client: LanguageClient, uri: str, language: str, text: str) -> None:
    """``textDocument/didOpen`` at version 1."""
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
        )
    )


def show_changed(client: LanguageClient, uri: str, version: int, text: str) -> None:
    """``textDocument/didChange`` with the whole ``text``, then ``didSave``
    (servers that check on save)."""
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    client.text_document_did_save(
        lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )


def show_closed(client: LanguageClient, uri: str) -> None:
    """``textDocument/didClose``."""
    client.text_document_did_close(
        lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri=uri))
    )


def show_watched(client: LanguageClient, uri: str, kind: lsp.FileChangeType) -> None:
    """``workspace/didChangeWatchedFiles`` of one file."""
    client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=uri, type=kind)])
    )
