"""``rein mcp list``: the configured MCP servers of a workspace, where each
comes from, what it runs, and the ones that do not start with the reason.

Unless ``--no-start``, each server is started once (in parallel, each start
bounded by the manager's start timeout), its tools listed, and all stopped:
the listing shows what a run would get (running with its tools, or failed
with the error)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

import anyio

from rein.config import ReinConfig
from rein.config_file import build_config
from rein.harness.errors import ConfigError
from rein.headless.mcp_ports import TerminalMcpPorts
from rein.headless.stderr_log import log_to_stderr
from rein.mcp.config import McpServers, load_servers
from rein.mcp.manager import McpManager, sandboxed_connections
from rein.sandboxing.others import OtherCommandsSandbox
from rein.store import default_storage_path

__all__ = ["list_servers", "listing_json", "mcp_list_command"]


def listing_json(result: McpServers, states: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The listing as JSON (``--json``); ``states``: each started server's
    ``state``, ``tools`` and ``error`` (empty with ``--no-start``)."""
    return {
        "servers": [
            {
                **states.get(s.name, {}),
                "name": s.name,
                "source": s.source,
                "transport": s.transport,
                "commandLine": s.shown_line(),
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


def _state_text(state: dict[str, Any]) -> str:
    if not state:
        return ""
    if state["state"] == "running":
        tools = state["tools"]
        return f"running, {len(tools)} tools: {', '.join(tools) or '-'}  "
    error = str(state.get("error") or "no error given")
    first, _, rest = error.partition("\n")
    return f"{state['state']}: {first}  " + (f"\n{rest}" if rest else "")


def _print_text(result: McpServers, states: dict[str, dict[str, Any]], out: TextIO) -> None:
    if not (result.servers or result.skipped or result.errors):
        print("no MCP servers configured", file=out)
        return
    for s in result.servers:
        # A failure's first line in the row; the rest (its stderr's tail) under it.
        first, *rest = _state_text(states.get(s.name, {})).split("\n")
        print(f"{s.name}  [{s.source}, {s.transport}]  {first}{s.shown_line()}", file=out)
        for line in rest:
            print(f"    {line.rstrip()}", file=out)
    for skipped in result.skipped:
        print(f"{skipped.name}  [{skipped.source}]  skipped: {skipped.reason}", file=out)
    for error in result.errors:
        print(f"error: {error}", file=out)


async def _start_once(
    root: Path, config: ReinConfig, result: McpServers
) -> dict[str, dict[str, Any]]:
    """Start each server once (a stdio server in the sandbox when
    ``sandbox.also`` names ``mcp``, as in a session), list its tools, stop
    them all."""
    sandbox = OtherCommandsSandbox(str(root), config.sandbox_settings, "mcp")
    manager = McpManager(result.servers, connect=sandboxed_connections(sandbox))
    try:
        await manager.ensure_started()
        states: dict[str, dict[str, Any]] = {}
        for status in manager.servers.values():
            entry: dict[str, Any] = {"state": status.state, "tools": [t.name for t in status.tools]}
            if status.error:
                entry["error"] = status.error
            states[status.spec.name] = entry
        return states
    finally:
        await manager.aclose()


async def _listing(
    root: Path, config: ReinConfig, ports: TerminalMcpPorts, start: bool
) -> tuple[McpServers, dict[str, dict[str, Any]]]:
    result = await load_servers(root, config, ports)
    states = await _start_once(root, config, result) if start and result.servers else {}
    return result, states


def list_servers(
    root: Path,
    config: ReinConfig,
    storage: Path,
    as_json: bool,
    trust_mcp: bool,
    start: bool = True,
) -> int:
    """Print the listing; exit 1 when a file could not be read or a server
    failed to start, else 0."""
    log_to_stderr()  # a failed start is said by its row, not again by the log
    ports = TerminalMcpPorts(storage, trust_mcp=trust_mcp)
    result, states = anyio.run(_listing, root, config, ports, start)
    if as_json:
        print(json.dumps(listing_json(result, states), indent=2))
    else:
        _print_text(result, states, sys.stdout)
    failed = any(state["state"] != "running" for state in states.values())
    return 1 if result.errors or failed else 0


def mcp_list_command(
    root: Path, config_file: str | None, storage: str | None, as_json: bool, trust_mcp: bool,
    start: bool,
) -> int:  # fmt: skip
    """``rein mcp list``: :func:`list_servers` for ``root`` with the
    configuration in ``config_file`` (or REIN_CONFIG); exit 2 when that is
    invalid or ``root`` is not a folder."""
    try:
        config = build_config(config_file, {})
    except ConfigError as exc:
        print(f"rein mcp: {exc}", file=sys.stderr)
        return 2
    root = root.resolve()
    if not root.is_dir():
        print(f"rein mcp: {root} is not a folder", file=sys.stderr)
        return 2
    folder = Path(storage or config.storage_path or default_storage_path())
    return list_servers(root, config, folder, as_json, trust_mcp, start=start)
