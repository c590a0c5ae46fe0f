"""``rein mcp list``: the configured MCP servers of a workspace, where each
comes from, what it runs, and the ones that do not start with the reason."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

import anyio

from rein.config import ReinConfig
from rein.headless.mcp_ports import TerminalMcpPorts
from rein.mcp.config import McpServers, load_servers

__all__ = ["list_servers", "listing_json"]


def listing_json(result: McpServers) -> dict[str, Any]:
    """The listing as JSON (``--json``)."""
    return {
        "servers": [
            {
                "name": s.name,
                "source": s.source,
                "transport": s.transport,
                "commandLine": s.command_line(),
                "trusted": s.trusted,
                "includeTools": list(s.include_tools) if s.include_tools is not None else None,
                "excludeTools": list(s.exclude_tools),
                "timeout": s.timeout_s,
            }
            for s in result.servers
        ],
        "skipped": [
            {"name": s.name, "source": s.source, "reason": s.reason} for s in result.skipped
        ],
        "errors": list(result.errors),
    }


def _print_text(result: McpServers, out: TextIO) -> None:
    if not (result.servers or result.skipped or result.errors):
        print("no MCP servers configured", file=out)
        return
    for s in result.servers:
        print(f"{s.name}  [{s.source}, {s.transport}]  {s.command_line()}", file=out)
    for skipped in result.skipped:
        print(f"{skipped.name}  [{skipped.source}]  skipped: {skipped.reason}", file=out)
    for error in result.errors:
        print(f"error: {error}", file=out)


def list_servers(
    root: Path, config: ReinConfig, storage: Path, as_json: bool, trust_mcp: bool
) -> int:
    """Print the listing; exit 1 when a file could not be read, else 0."""
    ports = TerminalMcpPorts(storage, trust_mcp=trust_mcp)
    result = anyio.run(load_servers, root, config, ports)
    if as_json:
        print(json.dumps(listing_json(result), indent=2))
    else:
        _print_text(result, sys.stdout)
    return 1 if result.errors else 0
