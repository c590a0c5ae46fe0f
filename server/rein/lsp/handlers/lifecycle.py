"""The server's life and its configuration: ``initialize``,
``initialized`` (pulls the ``rein`` section), the pushed or changed
settings, ``shutdown`` and ``exit``."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

if TYPE_CHECKING:
    from rein.lsp.server import ReinServer

__all__ = ["did_change_configuration", "exit_", "initialize", "initialized", "shutdown"]

log = logging.getLogger(__name__)

#: The longest wait for the client's ``rein`` section.
CONFIGURATION_BOUND_S = 10.0


def initialize(server: ReinServer, params: lsp.InitializeParams) -> None:
    server.set_initialization_options(params.initialization_options)
    server.offers_navigation = _offers_navigation(params.capabilities)


def _offers_navigation(capabilities: lsp.ClientCapabilities | None) -> bool:
    """Whether the client answers ``rein/navigate`` (its sessions then get
    the editor's navigator): ``experimental: {"rein": {"navigation": true}}``."""
    experimental = capabilities.experimental if capabilities is not None else None
    rein = experimental.get("rein") if isinstance(experimental, dict) else None
    return isinstance(rein, dict) and rein.get("navigation") is True


async def initialized(server: ReinServer, params: lsp.InitializedParams) -> None:
    try:
        if not await _pull_configuration(server):
            server.apply_configuration({}, "initializationOptions")
    finally:
        server.configured_event().set()
    await server.prepare_folder()  # the folder's walk, on a thread
    server.disk_watcher()
    await server.open_store()


async def did_change_configuration(
    server: ReinServer, params: lsp.DidChangeConfigurationParams
) -> None:
    settings = params.settings
    if isinstance(settings, dict) and isinstance(settings.get("rein"), dict):
        server.apply_configuration(settings["rein"], "settings")
    else:
        await _pull_configuration(server)


async def shutdown(server: ReinServer, params: Any) -> None:
    await server.shutdown_sessions()


def exit_(server: ReinServer, params: Any) -> None:
    server.kill_preview()  # without a shutdown request first


async def _pull_configuration(server: ReinServer) -> bool:
    """Ask the client for the ``rein`` section and apply it; False when the
    client cannot be asked."""
    caps = server.client_capabilities
    if caps.workspace is None or not caps.workspace.configuration:
        return False
    # Through the client channel (bounded, $/cancelRequest when given up,
    # the pending answer kept so a late one is dropped quietly), and at
    # most 10 s before the configuration (and its bound) is known.
    params = lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="rein")])
    try:
        result = await asyncio.wait_for(
            server.client.request(lsp.WORKSPACE_CONFIGURATION, params), CONFIGURATION_BOUND_S
        )
    except Exception as exc:
        log.warning("workspace/configuration failed: %s", exc)
        return False
    section = result[0] if result else None
    server.apply_configuration(section or {}, "settings")
    return True
