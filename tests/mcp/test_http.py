"""A Streamable HTTP MCP server (the toolbox's tools, served by uvicorn on
127.0.0.1 in the test) through the manager: tools listed and called, the
configured headers sent."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn

from rein.mcp.config import McpServerSpec
from rein.mcp.manager import McpManager
from tests.mcp_servers.toolbox import server as toolbox


class RecordHeaders:
    """ASGI middleware: the headers of every HTTP request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.headers: list[dict[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.headers.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await self.app(scope, receive, send)


async def test_a_streamable_http_server_is_listed_and_called_with_its_headers() -> None:
    app = RecordHeaders(toolbox.streamable_http_app())
    # Listening before uvicorn starts: the client's connections wait in the backlog.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    port = sock.getsockname()[1]
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    serving = asyncio.create_task(web.serve(sockets=[sock]))
    spec = McpServerSpec(
        name="web",
        source="settings",
        transport="http",
        url=f"http://127.0.0.1:{port}/mcp",
        headers={"X-Rein-Test": "yes"},
        trusted=True,
        timeout_s=10.0,
    )
    manager = McpManager([spec])
    try:
        await manager.ensure_started()
        assert manager.servers["web"].state == "running", manager.servers["web"].error
        assert "echo" in [t.name for t in manager.tool_infos()]
        result = await manager.call_tool("web", "echo", {"text": "over http"})
        assert (result.content, result.is_error) == ("echo: over http", False)
        assert app.headers and all(h.get("x-rein-test") == "yes" for h in app.headers)
    finally:
        await manager.aclose()
        web.should_exit = True
        await asyncio.wait_for(serving, 10)
        sock.close()
