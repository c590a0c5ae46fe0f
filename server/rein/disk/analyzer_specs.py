"""Which analyzers the pool runs and how each is found and configured:
:class:`AnalyzerSpec`, :data:`DEFAULT_ANALYZERS` (ruff server and
basedpyright-langserver), :func:`find_executable` and the settings helper
the analyzer process fills its settings with."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_ANALYZERS",
    "AnalyzerSpec",
    "find_executable",
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
    #: Declare window.workDoneProgress: the server reports its progress with
    #: ``$/progress`` instead of its own notifications (pyright's).
    work_done_progress: bool = False
    #: Every publish for an open document carries its version: one without
    #: (basedpyright's workspace pass over files it enumerated, sent before
    #: it knows the document is open) does not answer a change.
    versioned_publish: bool = False
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
    #: The initialize request's ``initializationOptions`` (typescript-language-
    #: server's ``disableAutomaticTypingAcquisition``, ``tsserver``);
    #: None: ``{"settings": settings}`` when there are settings (ruff's form).
    initialization_options: dict[str, Any] | None = None

    def initialize_options(self, settings: dict[str, Any]) -> dict[str, Any] | None:
        """What initialize sends, ``settings`` being the settings sent."""
        if self.initialization_options is not None:
            return self.initialization_options
        return {"settings": settings} if settings else None


DEFAULT_ANALYZERS: tuple[AnalyzerSpec, ...] = (
    AnalyzerSpec("ruff", ("ruff", "server"), frozenset({".py", ".pyi"})),
    AnalyzerSpec(
        "basedpyright",
        ("basedpyright-langserver", "--stdio"),
        frozenset({".py", ".pyi"}),
        # The language server reads a setting it is not sent as off, not as
        # the command line's default: autoSearchPaths is sent on (``src/`` on
        # the search path, as ``basedpyright`` on the command line has it).
        # No python.pythonPath: the server then finds the interpreter as the
        # command line does (the project's venvPath/venv, else ``.venv`` in
        # the root, else ``python`` on PATH).
        settings={
            "basedpyright": {
                "analysis": {
                    "typeCheckingMode": "standard",
                    "diagnosticMode": "workspace",
                    "autoSearchPaths": True,
                }
            }
        },
        versioned_publish=True,
        exclude_setting="basedpyright.analysis.exclude",
        diagnostic_mode_setting="basedpyright.analysis.diagnosticMode",
    ),
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
