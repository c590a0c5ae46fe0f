"""An analyzer server's start handshake, as the pool's LSP client: the
settings it is sent (its spec's, with the workspace filter's excludes and,
in a workspace too large to analyse as a whole, open files only), the
answer to its ``workspace/configuration`` requests, and the
``initialize``/``initialized`` exchange that tells it those settings."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from rein.disk.analyzer_capabilities import client_capabilities
from rein.disk.analyzer_specs import AnalyzerSpec, with_setting

__all__ = ["configuration_answer", "handshake", "settings_for"]


def settings_for(spec: AnalyzerSpec, excludes: list[str], *, file_by_file: bool) -> dict[str, Any]:
    """The settings ``spec``'s server is sent: the spec's, with the filter's
    ``excludes`` at its exclude key, and its diagnostic mode set to open
    files only when the workspace is checked ``file_by_file``."""
    settings = spec.settings
    if spec.exclude_setting:
        settings = with_setting(settings, spec.exclude_setting, excludes)
    if file_by_file and spec.diagnostic_mode_setting:
        settings = with_setting(settings, spec.diagnostic_mode_setting, "openFilesOnly")
    return settings


def configuration_answer(settings: dict[str, Any], params: lsp.ConfigurationParams) -> list[Any]:
    """The answer to a ``workspace/configuration`` request: each item's
    section of ``settings`` (the whole settings for an item without one)."""
    out: list[Any] = []
    for item in params.items:
        section = item.section or ""
        value: Any = settings
        for part in section.split(".") if section else []:
            value = value.get(part, {}) if isinstance(value, dict) else {}
        out.append(value)
    return out


async def handshake(
    client: LanguageClient,
    spec: AnalyzerSpec,
    root: Path,
    settings: dict[str, Any],
    bounded: Callable[[str, Awaitable[Any]], Awaitable[Any]],
) -> dict[str, Any]:
    """``initialize`` (its answer awaited through ``bounded``), then
    ``initialized`` and, to a server that does not ask for them
    (``asks_settings``), the settings; returns the initialize result (a
    plain dict: the client does not structure it)."""
    result: Any = await bounded(
        "initialize",
        client.initialize_async(
            lsp.InitializeParams(
                process_id=os.getpid(),
                root_uri=root.as_uri(),
                workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
                capabilities=client_capabilities(spec),
                initialization_options=spec.initialization(settings),
            )
        ),
    )
    client.initialized(lsp.InitializedParams())
    if settings and not (spec.asks_settings and spec.workspace_configuration):
        # A server that asks for them has them from its request: told again,
        # basedpyright set its workspace up a second time.
        client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings=settings)
        )
    return result if isinstance(result, dict) else {}
