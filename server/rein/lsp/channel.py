"""The editor adapters' narrow view of the client: requests, notifications,
open documents, and which of Rein's optional client methods the client has.

The adapters (workspace, diagnostics, confirm, askUser, saveDocuments) talk
to the client only through a :class:`ClientChannel`, never through the
server's protocol object, so they can be tested and reused without a server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

if TYPE_CHECKING:
    from lsprotocol import types as lsp
    from pygls.lsp.server import LanguageServer

__all__ = ["ClientChannel", "method_not_found"]

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

    async def apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> Any:
        return await self._server.workspace_apply_edit_async(params)

    def document(self, uri: str) -> Any:
        """The open document at ``uri`` (None when the editor has none)."""
        return self._server.workspace.text_documents.get(uri)
