"""The MCP servers an ACP client passes, as Rein's specs: source "acp",
trusted, stdio run in the session's folder, HTTP with its headers."""

from __future__ import annotations

from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio

from rein.acp.mcp_servers import client_servers
from rein.mcp.spec import McpServerSpec


def test_stdio_and_http_servers_become_trusted_acp_specs() -> None:
    specs = client_servers(
        [
            McpServerStdio(
                name="box",
                command="python",
                args=["-m", "box"],
                env=[EnvVariable(name="TOKEN", value="t")],
            ),
            HttpMcpServer(
                type="http",
                name="web",
                url="https://mcp.example/x",
                headers=[HttpHeader(name="Authorization", value="Bearer k")],
            ),
        ],
        "/work/project",
    )
    assert specs == [
        McpServerSpec(
            name="box",
            source="acp",
            transport="stdio",
            command="python",
            args=("-m", "box"),
            env={"TOKEN": "t"},
            cwd="/work/project",
            trusted=True,
        ),
        McpServerSpec(
            name="web",
            source="acp",
            transport="http",
            url="https://mcp.example/x",
            headers={"Authorization": "Bearer k"},
            trusted=True,
        ),
    ]
