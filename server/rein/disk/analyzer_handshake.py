"""An analyzer server's start handshake, as the pool's LSP client: the
settings it is sent (its spec's, with the workspace filter's excludes and,
in a workspace too large to analyse as a whole, open files only), the
answer to its ``workspace/configuration`` requests, and the
``initialize``/``initialized`` exchange that tells it those settings.

A server expected to ask for its settings (``asks_settings``: basedpyright
asks at ``initialized``) is not sent them unasked: told again, basedpyright
set its workspace up a second time. One that does not ask after all
(another version, a user's command keeping the preset's ``asksSettings``)
would never have the filter's excludes nor ``openFilesOnly``, silently:
:class:`UnaskedSettings` sends them, with a warning naming the server, once
it published without having asked (it analysed without them) or
:data:`ASK_BOUND_S` after ``initialized``, whichever comes first.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from rein.disk.analyzer_capabilities import client_capabilities
from rein.disk.analyzer_specs import AnalyzerSpec, with_setting

__all__ = ["ASK_BOUND_S", "UnaskedSettings", "configuration_answer", "handshake", "settings_for"]

log = logging.getLogger(__name__)

#: A server expected to ask for its settings that has not asked this long
#: after ``initialized`` is sent them. basedpyright asks in its
#: ``initialized`` handler, before any other work (its answer to
#: ``initialize`` already awaited): a second is ample even on a loaded
#: machine, and a publish before it asked ends the wait at once.
ASK_BOUND_S = 5.0


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


class UnaskedSettings:
    """Sends a server that was expected to ask for its settings and did not
    (see the module) its settings, once, with a warning."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._client: LanguageClient | None = None
        self._settings: dict[str, Any] = {}
        self._asked = False
        self._timer: asyncio.TimerHandle | None = None

    def reset(self) -> None:
        """A new start: nothing asked, nothing expected yet."""
        self._cancel()
        self._client = None
        self._asked = False

    def expect(self, client: LanguageClient, spec: AnalyzerSpec, settings: dict[str, Any]) -> None:
        """After the handshake: ``client``'s server is expected to ask."""
        if not (settings and spec.asks_settings and spec.workspace_configuration) or self._asked:
            return
        self._client, self._settings = client, settings
        self._timer = asyncio.get_running_loop().call_later(
            ASK_BOUND_S, self._send, f"within {ASK_BOUND_S:g} s of initialized"
        )

    def asked(self) -> None:
        """It asked (workspace/configuration)."""
        self._asked = True
        self._client = None
        self._cancel()

    def published(self) -> None:
        """It published: if it has not asked, it analysed without them."""
        if self._client is not None:
            self._send("before it published")

    def _send(self, when: str) -> None:
        client, self._client = self._client, None
        self._cancel()
        if client is None or self._asked:
            return
        log.warning(
            "%s did not ask for its settings %s (asksSettings): sent them "
            "(workspace/didChangeConfiguration)",
            self.name,
            when,
        )
        client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings=self._settings)
        )

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
