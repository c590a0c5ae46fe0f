"""The language server: the only place pygls and lsprotocol are imported
(besides the headless analyzer pool, which is a pygls client).
:func:`create_server` makes one with every handler of
:mod:`rein.lsp.handlers` registered."""

from __future__ import annotations

from rein.lsp._framing import DEFAULT_MAX_BYTES
from rein.lsp.handlers import register
from rein.lsp.server import ReinServer

__all__ = ["create_server"]


def create_server(max_message_bytes: int = DEFAULT_MAX_BYTES) -> ReinServer:
    server = ReinServer(max_message_bytes)
    register(server)
    return server
