"""The MCP servers an ACP client passes with ``session/new`` and
``session/load``, as Rein's server specs.

The person configured them in their editor, so they are trusted (no trust
question, as for ``rein.mcp.servers``); their source is "acp". stdio and
HTTP servers are taken (``initialize`` offers HTTP when the MCP SDK is
installed); SSE and the unstable ACP transport are refused naming the entry.
They join the workspace's MCP manager: every session of that folder in this
``rein acp`` sees their tools, as it sees the workspace's own servers.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Sequence
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio

from rein.acp.errors import invalid_field
from rein.mcp.spec import McpServerSpec

__all__ = ["client_servers", "mcp_available"]

#: A spec of a server the client passed: its source "acp", trusted.
_client_spec = functools.partial(McpServerSpec, source="acp", trusted=True)


def mcp_available() -> bool:
    """The MCP SDK (the ``mcp`` extra) is installed: servers can start."""
    return importlib.util.find_spec("mcp") is not None


def client_servers(servers: Sequence[Any] | None, cwd: str) -> list[McpServerSpec]:
    """Specs for ``servers``; InvalidParams naming ``mcpServers[i]`` for a
    transport Rein does not take."""
    specs: list[McpServerSpec] = []
    for i, server in enumerate(servers or ()):
        if isinstance(server, McpServerStdio):
            specs.append(
                _client_spec(
                    name=server.name,
                    transport="stdio",
                    command=server.command,
                    args=tuple(server.args),
                    env={v.name: v.value for v in server.env},
                    cwd=cwd,
                )
            )
        elif isinstance(server, HttpMcpServer):
            specs.append(
                _client_spec(
                    name=server.name,
                    transport="http",
                    url=server.url,
                    headers={h.name: h.value for h in server.headers},
                )
            )
        else:
            kind = getattr(server, "type", type(server).__name__)
            raise invalid_field(
                f"mcpServers[{i}]", f"the {kind} transport is not supported (stdio and http are)"
            )
    return specs
