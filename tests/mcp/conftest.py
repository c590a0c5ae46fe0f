"""MCP server specs for the tests' real stdio servers."""

from __future__ import annotations

import sys
from pathlib import Path

from rein.mcp.config import McpServerSpec

TOOLBOX = Path(__file__).resolve().parents[1] / "mcp_servers" / "toolbox.py"


def toolbox_spec(name: str = "box", **kwargs: object) -> McpServerSpec:
    """The toolbox server (tests/mcp_servers/toolbox.py) over stdio."""
    return McpServerSpec(
        name=name,
        source="settings",
        transport="stdio",
        command=sys.executable,
        args=(str(TOOLBOX),),
        trusted=True,
        **kwargs,  # type: ignore[arg-type]
    )


def time_spec(name: str = "time") -> McpServerSpec:
    """mcp-server-time from PyPI (offline), over stdio."""
    return McpServerSpec(
        name=name,
        source="settings",
        transport="stdio",
        command=sys.executable,
        args=("-m", "mcp_server_time", "--local-timezone", "UTC"),
        trusted=True,
    )
