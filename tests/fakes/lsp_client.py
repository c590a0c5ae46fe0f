"""A stand-in for the analyzer pool's LSP client (pygls's LanguageClient)
that records the notifications sent to the server."""

from __future__ import annotations

from typing import Any


class RecordingLanguageClient:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def workspace_did_change_configuration(self, params: Any) -> None:
        self.sent.append(("workspace/didChangeConfiguration", params))

    # Documents (the pool opens, changes and closes files): recorded too.
    def text_document_did_open(self, params: Any) -> None:
        self.sent.append(("textDocument/didOpen", params))

    def text_document_did_change(self, params: Any) -> None:
        self.sent.append(("textDocument/didChange", params))

    def text_document_did_save(self, params: Any) -> None:
        self.sent.append(("textDocument/didSave", params))

    def text_document_did_close(self, params: Any) -> None:
        self.sent.append(("textDocument/didClose", params))

    def workspace_did_change_watched_files(self, params: Any) -> None:
        self.sent.append(("workspace/didChangeWatchedFiles", params))
