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

Finding which of those servers the folder needs walks the folder: the
server runs it on a thread (:class:`NavigationScan`, awaited by the
requests that build the folder), so a large folder does not hold up the
other requests; the result is the one an inline scan gives.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rein.disk.analyzer_discovery import workspace_specs
from rein.disk.analyzer_specs import find_executable
from rein.disk.lazy_navigator import LazyPoolNavigator
from rein.disk.pool_navigator import DIAGNOSTICS_ONLY
from rein.lsp.editor_navigation import EditorNavigator

if TYPE_CHECKING:
    from rein.config import ReinConfig
    from rein.disk.analyzer_specs import AnalyzerSpec
    from rein.harness.config import AnalyzerGateConfig
    from rein.harness.generations import MutationLog
    from rein.harness.navigation_ports import Navigator
    from rein.lsp.channel import ClientChannel
    from rein.lsp.editor import EditorWorkspace

__all__ = ["NavigationScan", "folder_navigator", "navigation_specs"]

log = logging.getLogger(__name__)


def navigation_specs(root: Path, analyzer: AnalyzerGateConfig) -> list[AnalyzerSpec]:
    """The analyzer servers that would navigate ``root`` for a client
    without navigation of its own; empty when the gate is off or none of
    them is installed. Walks the folder: slow on a large one."""
    if not analyzer.enabled:  # no analyzer servers of Rein's run here
        return []
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
        return []
    return specs


class NavigationScan:
    """:func:`navigation_specs` of one folder, run on a thread: :meth:`run`
    starts it (once for the same folder and settings) and waits for it;
    :meth:`specs` gives its result, or scans inline when none is there for
    these settings (a folder built before any request waited)."""

    def __init__(self) -> None:
        self._key: tuple[Path, AnalyzerGateConfig] | None = None
        self._scan: asyncio.Future[list[AnalyzerSpec]] | None = None

    async def run(self, root: Path, analyzer: AnalyzerGateConfig) -> None:
        if self._scan is None or self._key != (root, analyzer):
            self._key = (root, analyzer)
            self._scan = asyncio.ensure_future(asyncio.to_thread(navigation_specs, root, analyzer))
        try:
            # Shielded: a request cancelled meanwhile leaves the scan to the next.
            await asyncio.shield(self._scan)
        except Exception as exc:  # raised again where the folder is built
            log.warning("scanning %s for its navigation servers failed: %s", root, exc)

    def specs(self, root: Path, analyzer: AnalyzerGateConfig) -> list[AnalyzerSpec]:
        scan = self._scan
        if (
            scan is not None
            and self._key == (root, analyzer)
            and scan.done()
            and not scan.cancelled()
            and scan.exception() is None
        ):
            return scan.result()
        return navigation_specs(root, analyzer)


def folder_navigator(
    client: ClientChannel,
    root: Path,
    config: ReinConfig,
    mutations: MutationLog,
    workspace: EditorWorkspace,
    *,
    offers_navigation: bool,
    specs: Callable[[], Sequence[AnalyzerSpec]],
) -> tuple[Navigator | None, Callable[[], Awaitable[None]] | None]:
    """The folder's navigator and what closes it (None: nothing to close);
    ``specs()``: :func:`navigation_specs` of the folder, asked only when the
    client has no navigation of its own."""
    if offers_navigation:
        return EditorNavigator(client, root), None
    analyzer = config.gates.analyzer
    servers = list(specs())
    if not servers:
        return None, None

    def open_paths() -> list[str]:
        found = (workspace.relative(uri) for uri in client.open_documents())
        return [path for path in found if path is not None]

    navigator = LazyPoolNavigator(
        root,
        servers,
        mutations,
        workspace.buffer_text,
        open_paths,
        request_timeout_ms=analyzer.request_timeout_ms,
        workspace_max_files=analyzer.workspace_max_files,
    )
    return navigator, navigator.aclose
