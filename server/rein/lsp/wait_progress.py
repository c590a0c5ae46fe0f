"""A gate's waits on the analyzers (``gate_waiting`` events) as the
editor's own work-done progress: ``window/workDoneProgress/create``, then
``$/progress`` begin, and end when the wait is over, for a client that
supports server-initiated progress (``window.workDoneProgress``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from uuid import uuid4

from lsprotocol import types as lsp

from rein.harness.events import Event

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

__all__ = ["WaitProgress"]


class WaitProgress:
    """A session's event listener: one progress per wait (by its message)."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        #: message -> the progress token of the wait going on.
        self._tokens: dict[str, str] = {}

    def _supported(self) -> bool:
        window = self.server.client_capabilities.window
        return bool(window and window.work_done_progress)

    def __call__(self, event: Event) -> None:
        if event.type != "gate_waiting":
            return
        if event.phase == "begin":
            if event.message in self._tokens or not self._supported():
                return
            token = f"rein/wait/{uuid4().hex}"
            self._tokens[event.message] = token
            files = f" ({event.files} file(s))" if event.files else ""
            begin = lsp.WorkDoneProgressBegin(
                title="Rein", message=f"waiting for {event.message}{files}"
            )
            progress = self.server.work_done_progress

            def created(*_: Any) -> None:
                if self._tokens.get(event.message) == token:
                    progress.begin(token, begin)
                elif token in progress.tokens:  # the wait ended before the client answered
                    del progress.tokens[token]

            progress.create(token, created)
            return
        ending = self._tokens.pop(event.message, None)
        progress = self.server.work_done_progress
        if ending is not None and ending in progress.tokens:
            progress.end(ending, lsp.WorkDoneProgressEnd(message=f"done: {event.message}"))
            del progress.tokens[ending]
