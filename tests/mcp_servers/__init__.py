"""Small MCP servers for the tests, written with the ``mcp`` SDK's server side."""
