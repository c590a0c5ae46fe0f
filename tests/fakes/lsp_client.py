"""A stand-in for the analyzer pool's LSP client (pygls's LanguageClient)
that records the notifications sent to the server."""

from __future__ import annotations

from typing import Any


class RecordingLanguageClient:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def workspace_did_change_configuration(self, params: Any) -> None:
        self.sent.append(("workspace/didChangeConfiguration", params))
