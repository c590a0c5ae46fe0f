"""MCP tool servers inside Rein: the layer above harness/tools that talks to
servers through the ``mcp`` SDK (the optional extra ``rein[mcp]``).

Nothing in the harness imports this package, and the SDK is imported only
by :mod:`rein.mcp.client`, and only once a server is configured.
"""
