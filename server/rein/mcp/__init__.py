"""MCP tool servers: their configuration (:mod:`rein.mcp.config`), and the
runtime that starts them and offers their tools (:mod:`rein.mcp.manager`,
:mod:`rein.mcp.client`, :mod:`rein.mcp.tools`). The ``mcp`` SDK is imported
only inside this package (:mod:`rein.mcp.client`), and only when a server is
configured. Nothing in the harness imports this package."""
