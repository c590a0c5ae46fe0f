"""Who answers the navigation tools of ``rein serve``'s sessions.

A client that offers ``rein/navigate`` (Rein's VS Code extension) answers
them with the editor's own providers (:class:`~rein.lsp.editor_navigation.
EditorNavigator`). Any other LSP client gets Rein's own analyzer servers for
the folder (:class:`~rein.disk.lazy_navigator.LazyPoolNavigator`: started on
the first question, shown the client's live buffers, stopped with the
folder), when one of the folder's analyzers can navigate and is installed
(``gates.analyzer.servers`` and its presets, as headless, but never the
project's own ``node_modules/.bin`` or TypeScript) and
``gates.analyzer.enabled`` is not false. Otherwise there is none, and the
tools are not offered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rein.disk.analyzer_discovery import workspace_specs
from rein.disk.analyzer_specs import find_executable
from rein.disk.lazy_navigator import LazyPoolNavigator
from rein.disk.pool_navigator import DIAGNOSTICS_ONLY
from rein.lsp.editor_navigation import EditorNavigator

if TYPE_CHECKING:
    from rein.config import ReinConfig
    from rein.harness.generations import MutationLog
    from rein.harness.navigation_ports import Navigator
    from rein.lsp.channel import ClientChannel
    from rein.lsp.editor import EditorWorkspace

__all__ = ["folder_navigator"]


def folder_navigator(
    client: ClientChannel,
    root: Path,
    config: ReinConfig,
    mutations: MutationLog,
    workspace: EditorWorkspace,
    *,
    offers_navigation: bool,
) -> tuple[Navigator | None, Callable[[], Awaitable[None]] | None]:
    """The folder's navigator and what closes it (None: nothing to close)."""
    if offers_navigation:
        return EditorNavigator(client, root), None
    analyzer = config.gates.analyzer
    if not analyzer.enabled:  # no analyzer servers of Rein's run here
        return None, None
    # Only servers that navigate: a linter's is no use to the tools here.
    # Nothing of the folder's own runs: an LSP client gives Rein no word on
    # whether the person trusts it (a project's node_modules/.bin server or
    # its own tsserver.js would be its code).
    specs = [
        s
        for s in workspace_specs(root, analyzer, own_tools=False)
        if s.name not in DIAGNOSTICS_ONLY
    ]
    if not any(find_executable(s.command[0]) is not None for s in specs):
        return None, None

    def open_paths() -> list[str]:
        found = (workspace.relative(uri) for uri in client.open_documents())
        return [path for path in found if path is not None]

    navigator = LazyPoolNavigator(
        root,
        specs,
        mutations,
        workspace.buffer_text,
        open_paths,
        request_timeout_ms=analyzer.request_timeout_ms,
        workspace_max_files=analyzer.workspace_max_files,
    )
    return navigator, navigator.aclose
