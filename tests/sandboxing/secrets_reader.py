"""A stdio MCP server with one tool, ``read(path)``: the file's text, or
what stopped it. tests/sandboxing/test_also.py starts it in the sandbox
and asks it for a secret."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("secrets-reader")


@server.tool()
def read(path: str) -> str:
    """The text of the file at ``path``."""
    try:
        with open(path, encoding="utf-8") as handle:
            return f"read: {handle.read()}"
    except OSError as exc:
        return f"cannot read: {exc}"


if __name__ == "__main__":
    server.run()
