"""The workspace folder of ``rein serve``: a :class:`~rein.hosting.folder.
FolderHost` over the editor's documents (``workspace/applyEdit``), its
diagnostics (``rein/diagnostics``), its dialogs, MCP and hook questions and
its navigation (the client's providers over ``rein/navigate`` when it
offers them, else Rein's own analyzer servers: :mod:`rein.lsp.folder_navigation`).

:class:`FolderWiring` names what the server itself supplies (its model
factory, its event and notice sinks, what it does with each new session),
so the wiring reads in one place and the server keeps its own state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rein.harness.generations import MutationLog
from rein.harness.ports import Mutation
from rein.hosting.folder import FolderHost, FolderNotices
from rein.lsp.editor import EditorWorkspace
from rein.lsp.editor_diagnostics import EditorDiagnostics
from rein.lsp.editor_dialogs import EditorApprover, EditorUserChannel
from rein.lsp.folder_navigation import NavigationScan, folder_navigator
from rein.lsp.hook_ports import EditorHookPorts
from rein.lsp.mcp_ports import EditorMcpPorts
from rein.store import default_storage_path

if TYPE_CHECKING:
    from rein.config import ReinConfig
    from rein.disk.watcher import DiskWatcher
    from rein.harness.events import Event
    from rein.harness.ports import Model
    from rein.lsp.approval_registry import ApprovalRegistry
    from rein.lsp.channel import ClientChannel
    from rein.lsp.editor_settings import EditorSettings
    from rein.providers.config import ModelConfig
    from rein.session import Session

__all__ = ["EditorServer", "FolderWiring", "editor_folder"]


class EditorServer(Protocol):
    """What the folder reads from the server as it goes: the client, the
    root, the configuration now, the approval rule books, and whether the
    client answers ``rein/navigate``."""

    @property
    def client(self) -> ClientChannel: ...

    @property
    def root(self) -> Path: ...

    @property
    def config(self) -> ReinConfig: ...

    @property
    def approvals(self) -> ApprovalRegistry: ...

    @property
    def offers_navigation(self) -> bool: ...

    @property
    def navigation(self) -> NavigationScan: ...

    @property
    def settings(self) -> EditorSettings: ...


@dataclass(frozen=True)
class FolderWiring:
    """What the server gives its folder: the model factory, the preview's
    events, who runs the disk watcher, where store and checkpoint troubles
    go, and what happens to each session made or evicted."""

    make_model: Callable[[ModelConfig], Model]
    preview_event: Callable[[Event], None]
    run_watcher: Callable[[DiskWatcher], None]
    store_error: Callable[[str], None]
    checkpoint_error: Callable[[str], None]
    store_notice: Callable[[str], None]
    on_new_session: Sequence[Callable[[Session], None]]
    on_evict: Sequence[Callable[[Session], None]]


def editor_folder(
    server: EditorServer, wiring: FolderWiring
) -> tuple[FolderHost[EditorWorkspace], EditorDiagnostics]:
    """The folder over the editor, and the editor's diagnostics source (the
    server feeds it ``rein/diagnosticsChanged``)."""

    def storage() -> Path:
        return Path(server.config.storage_path or default_storage_path())

    mutations = MutationLog()
    workspace = EditorWorkspace(server.client, server.root, mutations)
    navigator, close_navigator = folder_navigator(
        server.client,
        server.root,
        server.config,
        mutations,
        workspace,
        offers_navigation=server.offers_navigation,
        specs=lambda: server.navigation.specs(server.root, server.config.gates.analyzer),
    )
    source = EditorDiagnostics(server.client, workspace)

    def note_external(paths: tuple[str, ...]) -> Mutation | None:
        mutation = workspace.note_external(paths)
        if mutation is not None:
            gone = gone_unheld(server.root, paths, workspace.buffer_text)
            if gone:
                # The editor cannot open a file that is not there and
                # publishes nothing for one it does not hold: its
                # diagnostics are none, now (a command's own temporary file,
                # gone as it came: ``sed -i``'s). Waiting for them made every
                # such command's verdict wait out maxWaitMs, then stale.
                folder.diagnostics.notify_diagnostics_changed(gone)
        return mutation

    folder = FolderHost(
        server.root,
        lambda: server.config,
        mutations,
        workspace,
        source,
        wiring.make_model,
        storage=lambda: server.config.storage_path or str(default_storage_path()),
        emit=wiring.preview_event,
        note_external=note_external,
        # A save of an open buffer is no external change: the watcher
        # compares the disk's text with the buffer's, off the event loop.
        known_text=workspace.buffer_text,
        on_watch=wiring.run_watcher,
        approver=lambda session_id: EditorApprover(server.client, session_id),
        user=lambda session_id: EditorUserChannel(server.client, session_id),
        approval_rules=lambda session_id: server.approvals.book(session_id),
        navigator=navigator,
        on_close=() if close_navigator is None else (close_navigator,),
        mcp_ports=EditorMcpPorts(server.client, storage),
        hook_ports=EditorHookPorts(server.client, storage),
        notices=FolderNotices(wiring.store_error, wiring.checkpoint_error, wiring.store_notice),
        on_new_session=wiring.on_new_session,
        on_evict=wiring.on_evict,
        evict=True,
    )

    def follow(config: ReinConfig) -> None:
        """The analyzer timings (``gates.analyzer``) of the configuration
        now: the folder may be built before the editor's configuration
        arrives (its first ``didChange`` or ``rein/diagnosticsChanged``),
        and a settings change applies from the next verdict."""
        analyzer = config.gates.analyzer
        source.quiet_s = folder.diagnostics.quiet_s = analyzer.quiet_period_ms / 1000.0
        source.answer_timeout_s = analyzer.request_timeout_ms / 1000.0
        source.pending_wait_s = folder.diagnostics.max_wait_s = analyzer.max_wait_ms / 1000.0

    follow(server.config)
    server.settings.on_change.append(follow)
    return folder, source


def gone_unheld(
    root: Path, paths: Sequence[str], buffer_text: Callable[[str], str | None]
) -> list[str]:
    """Of ``paths``, those that are not on disk and not open in the editor."""
    return [p for p in paths if buffer_text(p) is None and not (root / p).exists()]
