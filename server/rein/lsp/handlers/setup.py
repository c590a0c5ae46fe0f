"""``rein/setup``: the person's setup as the panel's setup view shows it
(the same items as ``rein doctor``'s setup part): hooks, skills, custom
agents, commands, instruction files and MCP servers, each with where it
came from, whether it is used, and why not.

The files are read when asked (a file added since is listed). The MCP
servers are the ones this server's workspace loaded (their state as the
panel's MCP section shows it); before the first session loads them the
view says they are not loaded yet, never "none found"."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rein.bring.inventory import SetupItem, Status
    from rein.lsp.server import ReinServer

__all__ = ["mcp_items", "setup"]


async def setup(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.bring.hook_config import HOOKS_TRUST_FILE
    from rein.lsp.params import CommandsParams, parse
    from rein.mcp.trust import FileTrustStore
    from rein.session.setup_files import setup_inventory
    from rein.store import default_storage_path

    parse(CommandsParams, params, "rein/setup")  # no fields
    storage = Path(server.config.storage_path or default_storage_path())
    trust = FileTrustStore(storage, persist=False, file_name=HOOKS_TRUST_FILE)
    inventory = setup_inventory(server.config, server.root, trust)
    items = mcp_items(server.mcp.snapshot())
    inventory.add(items or [])
    return {
        "items": inventory.json(),
        "unlisted": sorted(inventory.unlisted),
        "mcpLoaded": items is not None,
    }


def mcp_items(snapshot: dict[str, Any]) -> list[SetupItem] | None:
    """The MCP servers of ``rein/mcpServers``' answer as setup items; None
    when nothing was loaded yet (no server, none skipped, no error)."""
    from rein.bring.inventory import SetupItem
    from rein.mcp.spec import SOURCE_WHERE

    def where(entry: dict[str, Any]) -> str:
        source = str(entry["source"])
        return SOURCE_WHERE.get(source, source)

    servers = snapshot.get("servers") or []
    skipped = snapshot.get("skipped") or []
    errors = snapshot.get("errors") or []
    if not (servers or skipped or errors):
        return None
    items: list[SetupItem] = []
    for entry in servers:
        state = str(entry.get("state", ""))
        detail = f"{state}: {entry['error']}" if entry.get("error") else state
        items.append(SetupItem("mcp", str(entry["name"]), where(entry), "used", detail))
    for entry in skipped:
        reason = str(entry.get("reason", ""))
        status: Status = "invalid"
        if reason.startswith("not trusted"):
            status = "not trusted"
        elif reason == "disabled":
            status = "off"
        items.append(SetupItem("mcp", str(entry["name"]), where(entry), status, reason))
    for error in errors:
        items.append(SetupItem("mcp", "-", "mcp", "invalid", str(error)))
    return items
