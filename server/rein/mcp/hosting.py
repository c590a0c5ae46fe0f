"""The workspace's MCP manager as a host makes it.

:func:`workspace_manager` gives one :class:`~rein.mcp.manager.McpManager`
whose servers are read by :func:`rein.mcp.config.load_servers` when the
first run needs them. :class:`NoPromptPorts` are the configuration ports of
a host that cannot ask the person: no input is given and no workspace
server is trusted (each is skipped with the reason; servers defined in the
user's settings start).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rein.mcp.config import (
    McpConfigPorts,
    McpServers,
    TrustStore,
    config_fingerprint,
    load_servers,
)
from rein.mcp.manager import McpManager, sandboxed_connections
from rein.mcp.trust import MemoryTrustStore
from rein.sandboxing.others import OtherCommandsSandbox

if TYPE_CHECKING:
    from rein.config import ReinConfig

__all__ = ["NoPromptPorts", "workspace_manager"]


class NoPromptPorts:
    """Nobody to ask: inputs are not given and workspace servers are not trusted."""

    trust: TrustStore

    def __init__(self) -> None:
        self.trust = MemoryTrustStore()

    async def ask_input(self, spec: Any) -> str | None:
        return None

    async def confirm_trust(self, spec: Any) -> bool:
        return False


def workspace_manager(
    root: Path, config: Callable[[], ReinConfig], ports: McpConfigPorts | None = None
) -> McpManager:
    """The manager of the workspace at ``root``; the configuration is read
    (``config()`` at that time) when the first run starts the servers, and
    again before a run when the settings or the configuration files changed."""

    async def load() -> McpServers:
        return await load_servers(root, config(), ports or NoPromptPorts())

    return McpManager(
        load=load,
        fingerprint=lambda: config_fingerprint(root, config()),
        connect=sandboxed_connections(
            OtherCommandsSandbox(str(root), lambda: config().sandbox_settings(), "mcp")
        ),
    )
