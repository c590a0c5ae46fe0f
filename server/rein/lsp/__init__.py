"""The language server: the only place pygls and lsprotocol are imported
(besides the headless analyzer pool, which is a pygls client)."""

from rein.lsp.features import create_server

__all__ = ["create_server"]
