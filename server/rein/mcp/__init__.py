"""MCP tool servers: their configuration (:mod:`rein.mcp.config`), and the
runtime that starts them and offers their tools. The ``mcp`` SDK is imported
only inside this package, and only when a server is configured."""
