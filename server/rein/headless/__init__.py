"""rein run, rein undo and rein mcp list (and the terminal's MCP questions);
the folder they host is :mod:`rein.hosting`'s (see docs/architecture.md)."""
