"""What the pool knows of one analyzer and how it is found and configured:
:class:`AnalyzerSpec`, :func:`spec_of` (a ``gates.analyzer.servers`` entry
or preset as a spec), :data:`DEFAULT_ANALYZERS` (the ruff and basedpyright
presets), :func:`find_executable` and the settings helper the analyzer
process fills its settings with."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rein.harness.analyzer_servers import PRESETS, AnalyzerServerConfig

__all__ = [
    "DEFAULT_ANALYZERS",
    "AnalyzerSpec",
    "find_executable",
    "spec_of",
    "with_setting",
]


@dataclass(frozen=True, slots=True)
class AnalyzerSpec:
    name: str
    command: tuple[str, ...]
    extensions: frozenset[str]
    language_id: str = "python"
    settings: dict[str, Any] = field(default_factory=dict)
    #: Ask for pull diagnostics (textDocument/diagnostic) when the server
    #: offers them; otherwise rely on publishDiagnostics.
    pull: bool = True
    #: Ask tsserver, through typescript-language-server's
    #: ``typescript.tsserverRequest``, for every open file's diagnostics after
    #: each change (:mod:`rein.disk.ts_diagnostics`); its publishes are unused.
    tsserver: bool = False
    #: Declare window.workDoneProgress: the server reports its progress with
    #: ``$/progress`` instead of its own notifications (pyright's).
    work_done_progress: bool = False
    #: Every publish for an open document carries its version: one without
    #: (basedpyright's workspace pass over files it enumerated, sent before
    #: it knows the document is open) does not answer a change.
    versioned_publish: bool = False
    #: After a change the server is done only once it has published nothing
    #: for this long (seconds; the pool's quiet period when that is longer).
    settle_s: float = 0.0
    #: The settings key of the server's ``exclude`` list (dotted), filled with
    #: the workspace filter's folders; None: the server has none.
    exclude_setting: str | None = None
    #: The settings key (dotted) choosing between the server's own workspace
    #: analysis ("workspace") and open files only ("openFilesOnly"); None: it
    #: analyses what is open. In a workspace over the pool's
    #: ``workspace_max_files`` it is set to "openFilesOnly", and the pool
    #: opens the files a change touches and their importers instead.
    diagnostic_mode_setting: str | None = None
    #: Declare workspace.configuration (the server asks for its settings).
    #: False for a server that, while it waits for that answer, lints only
    #: the last file opened (bash-language-server 5): it then reads its
    #: settings from the initialization options alone.
    workspace_configuration: bool = True
    #: The server asks for its settings (``workspace/configuration``) once
    #: initialized: with ``workspace_configuration`` they are not sent with
    #: ``workspace/didChangeConfiguration`` at start too (basedpyright set
    #: its workspace up again on it, 0-1.9 s later).
    asks_settings: bool = False
    #: Extension -> the languageId its files are opened with; an extension
    #: not here: ``language_id``.
    language_ids: Mapping[str, str] = field(default_factory=dict)
    #: Sent as ``initializationOptions`` (typescript-language-server's
    #: ``disableAutomaticTypingAcquisition``, ``tsserver``); None:
    #: ``{"settings": settings}`` (nothing when there are no settings).
    initialization_options: dict[str, Any] | None = None
    #: Said with the server in the analyzers line (clangd's fallback flags).
    note: str | None = None

    def language_for(self, path: str) -> str:
        """The languageId ``path`` is opened with."""
        return self.language_ids.get(os.path.splitext(path)[1], self.language_id)

    def initialization(self, settings: dict[str, Any]) -> dict[str, Any] | None:
        """The ``initializationOptions`` sent with these settings."""
        if self.initialization_options is not None:
            return self.initialization_options
        return {"settings": settings} if settings else None


def spec_of(server: AnalyzerServerConfig, **changes: Any) -> AnalyzerSpec:
    """The pool's spec of a configured (or preset) server; ``changes``
    replace fields (the executable found, a preset's workspace options)."""
    if not server.command or not server.extensions:
        raise ValueError(f"analyzer {server.name!r} has no command or no extensions")
    fields: dict[str, Any] = {
        "name": server.name,
        "command": tuple(server.command),
        "extensions": frozenset(server.extensions),
        "language_id": next(iter(server.extensions.values())),
        "language_ids": dict(server.extensions),
        "settings": dict(server.settings or {}),
        "initialization_options": server.initialization_options,
        "pull": server.diagnostics != "publish",
        "tsserver": server.diagnostics == "tsserver",
        "work_done_progress": bool(server.work_done_progress),
        "versioned_publish": bool(server.versioned_publish),
        "settle_s": (server.settle_ms or 0) / 1000,
        "workspace_configuration": server.workspace_configuration is not False,
        "asks_settings": bool(server.asks_settings),
        "exclude_setting": server.exclude_setting,
        "diagnostic_mode_setting": server.diagnostic_mode_setting,
    }
    fields.update(changes)
    return AnalyzerSpec(**fields)


#: ruff server and basedpyright-langserver, as their presets have them.
DEFAULT_ANALYZERS: tuple[AnalyzerSpec, ...] = tuple(
    spec_of(preset) for preset in PRESETS if preset.name in ("ruff", "basedpyright")
)


def find_executable(name: str) -> str | None:
    """PATH first, then next to this interpreter (a venv's bin/)."""
    found = shutil.which(name)
    if found:
        return found
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else None


def with_setting(settings: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    """A copy of ``settings`` with ``value`` at the dotted key."""
    out = dict(settings)
    node = out
    *parents, last = dotted.split(".")
    for part in parents:
        child = node.get(part)
        child = dict(child) if isinstance(child, dict) else {}
        node[part] = child
        node = child
    node[last] = value
    return out
