"""The setup part of ``rein doctor``: the person's hooks, skills, custom
agents, commands, instruction files (:func:`rein.session.setup_files.setup_inventory`)
and MCP servers, each with where it came from, whether it is used, and why
not. Nothing is asked and nothing starts: an MCP server the workspace
defines and the person has not trusted yet is listed "not trusted"."""

from __future__ import annotations

from pathlib import Path

import anyio

from rein.bring.hook_config import HOOKS_TRUST_FILE
from rein.bring.inventory import Inventory, SetupItem, Status
from rein.config import ReinConfig
from rein.mcp.config import McpConfigError, load_servers
from rein.mcp.spec import SOURCE_WHERE, InputSpec, McpServerSpec
from rein.mcp.trust import FileTrustStore
from rein.session.setup_files import setup_inventory

__all__ = ["setup_view"]

_NOT_ASKED = "rein doctor asks nothing: trust it in the editor or at rein run's question"


class _Listing:
    """MCP ports that ask nothing: the trust remembered so far is read."""

    def __init__(self, storage: Path) -> None:
        self._trust = FileTrustStore(storage, persist=False)

    @property
    def trust(self) -> FileTrustStore:
        return self._trust

    async def ask_input(self, spec: InputSpec) -> str | None:
        return None

    async def confirm_trust(self, spec: McpServerSpec) -> bool:
        raise McpConfigError(_NOT_ASKED)


def setup_view(root: Path, config: ReinConfig, storage: Path) -> Inventory:
    """The whole setup Rein finds for ``root``."""
    hooks_trust = FileTrustStore(storage, persist=False, file_name=HOOKS_TRUST_FILE)
    inventory = setup_inventory(config, root, hooks_trust)
    servers = anyio.run(load_servers, root, config, _Listing(storage))
    for spec in servers.servers:
        where = SOURCE_WHERE[spec.source]
        inventory.add([SetupItem("mcp", spec.name, where, "used", spec.shown_line())])
    for skipped in servers.skipped:
        status: Status = "invalid"
        if skipped.reason.startswith("not trusted"):
            status = "not trusted"
        elif skipped.reason == "disabled":
            status = "off"
        where = SOURCE_WHERE[skipped.source]
        inventory.add([SetupItem("mcp", skipped.name, where, status, skipped.reason)])
    for error in servers.errors:
        inventory.add([SetupItem("mcp", "-", "mcp", "invalid", error)])
    return inventory
