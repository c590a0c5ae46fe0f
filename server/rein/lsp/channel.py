"""The editor adapters' narrow view of the client: requests, notifications,
open documents, and which of Rein's optional client methods the client has.

The adapters (workspace, diagnostics, confirm, askUser, saveDocuments) talk
to the client only through a :class:`ClientChannel`, never through the
server's protocol object, so they can be tested and reused without a server.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

if TYPE_CHECKING:
    from lsprotocol import types as lsp
    from pygls.lsp.server import LanguageServer

__all__ = ["ClientChannel", "method_not_found"]

log = logging.getLogger(__name__)

_METHOD_NOT_FOUND = -32601


def method_not_found(exc: BaseException) -> bool:
    return isinstance(exc, JsonRpcMethodNotFound) or (
        isinstance(exc, JsonRpcException) and getattr(exc, "code", None) == _METHOD_NOT_FOUND
    )


class ClientChannel:
    """Request, notify and feature flags over one language server's client.

    A client answering MethodNotFound to one of Rein's optional methods
    (``rein/confirm``, ``rein/askUser``, ``rein/saveDocuments``) is
    remembered: :meth:`supports` is then False and the method is not asked
    again.
    """

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._unsupported: set[str] = set()
        #: Pending writes of directly framed notifications (kept referenced).
        self._writes: set[asyncio.Future[Any]] = set()

    def supports(self, method: str) -> bool:
        return method not in self._unsupported

    def forget(self, method: str) -> None:
        """The client does not have ``method``: stop asking it."""
        self._unsupported.add(method)

    async def request(self, method: str, params: Any) -> Any:
        """Send a request; a MethodNotFound answer is remembered, then raised."""
        try:
            return await self._server.protocol.send_request_async(method, params)
        except JsonRpcException as exc:
            if method_not_found(exc):
                self.forget(method)
            raise

    def notify(self, method: str, params: Any) -> None:
        self._server.protocol.notify(method, params)

    def notify_json(self, method: str, params: dict[str, Any]) -> None:
        """A notification whose params are plain JSON data already, framed
        here directly instead of through pygls's generic (cattrs)
        serialisation, which cost two thirds of the time per event. A client
        that is gone drops it (logged)."""
        writer = self._server.protocol.writer
        if writer is None:
            return
        body = json.dumps(
            {"jsonrpc": "2.0", "method": method, "params": params}, separators=(",", ":")
        ).encode("utf-8")
        try:
            result = writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        except (BrokenPipeError, ConnectionError):
            log.warning("the client is gone; dropping %s", method)
            return
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)

    async def apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> Any:
        return await self._server.workspace_apply_edit_async(params)

    def document(self, uri: str) -> Any:
        """The open document at ``uri`` (None when the editor has none)."""
        return self._server.workspace.text_documents.get(uri)
