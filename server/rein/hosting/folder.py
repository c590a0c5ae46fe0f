"""What one workspace folder needs, whichever host serves it.

:class:`FolderHost` owns the per-folder parts every host shares: the
mutation log, the diagnostics coordinator over the host's diagnostics
source, the preview, the disk watcher, the workspace's MCP servers and the
:class:`~rein.session.SessionManager` with its store, and the
:class:`~rein.session.SessionPorts` its sessions are built from. What
differs per host comes in as ports: the workspace view (the disk, the
client's buffers, the editor's documents), the diagnostics source (the
headless analyzers, the editor's diagnostics), and per session who
approves, who answers ``ask_user``, where commands run and which approval
rules apply.

``rein serve`` builds one over the editor
(:class:`rein.lsp.server.ReinServer`), ``rein run`` and ``rein acp`` one
per folder through :class:`~rein.hosting.workspace_host.WorkspaceHost`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from rein.bring.hook_trust import HookTrustPorts
from rein.config import ReinConfig
from rein.disk.watcher import DiskWatcher
from rein.harness.events import Event
from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.generations import MutationLog
from rein.harness.navigation_ports import Navigator
from rein.harness.ports import (
    AnnouncesSending,
    ApprovalRuleBook,
    Approver,
    CommandExecutor,
    DiagnosticsSource,
    Model,
    MutationListening,
    UserChannel,
    Workspace,
)
from rein.hosting.preview import FolderPreview, Spawn
from rein.mcp.config import McpConfigPorts
from rein.mcp.hosting import workspace_manager
from rein.mcp.manager import McpManager
from rein.process.runner import SubprocessRunner
from rein.providers.config import ModelConfig
from rein.sandboxing.others import OtherCommandsSandbox
from rein.sandboxing.settings import SandboxSettings

if TYPE_CHECKING:
    from rein.session import Session, SessionManager, SessionPorts

__all__ = ["FolderHost", "FolderNotices"]

W = TypeVar("W", bound=Workspace)


def _nobody(session_id: str) -> None:
    return None


class FolderNotices:
    """Who hears of trouble around the sessions (as for
    :class:`~rein.session.SessionManager`): the store could not be opened,
    checkpoints failed, the open store had trouble. None: nobody."""

    def __init__(
        self,
        store_error: Callable[[str], None] | None = None,
        checkpoint_error: Callable[[str], None] | None = None,
        store_notice: Callable[[str], None] | None = None,
    ) -> None:
        self.store_error = store_error
        self.checkpoint_error = checkpoint_error
        self.store_notice = store_notice


class FolderHost(Generic[W]):
    """One workspace folder and the sessions over it.

    Ports: ``config`` gives the configuration now (the editor's changes);
    ``mutations`` is the log ``workspace`` records every change in;
    ``diagnostics`` is the source the coordinator settles;
    ``model_factory`` makes a session's model; ``storage`` gives the session
    store's folder (None: in memory); ``mcp_ports`` is who is asked for MCP
    inputs and trust (None: nobody); ``navigator`` answers the sessions'
    navigation tools (the editor's providers, the analyzer pool's servers;
    None: they are not offered); ``on_close`` is awaited when the folder
    closes (a navigator's own servers stop).

    The disk watcher (``watch``) reports changes nobody made through the
    workspace to ``note_external`` (the preview's own files left out);
    ``known_text`` is a file's text as the host knows it (a save of exactly
    that text is no outside change). It is made on first use
    (:meth:`disk_watcher`) and ``on_watch`` starts it (None: the host runs
    it itself). The preview's events outside a run go to ``emit``; its work
    is started with ``spawn`` (None: asyncio tasks).

    Per session (called with its id): ``approver``, ``user``, ``commands``
    and ``approval_rules`` as for :class:`~rein.session.SessionPorts`;
    ``on_new_session`` and ``on_evict`` are given each session the manager
    makes or evicts (the manager itself is made on first use: a folder that
    only syncs documents builds no sessions).

    The folder wires its ports itself: a diagnostics source that is
    :class:`~rein.harness.ports.MutationListening` hears every change of
    the mutation log, and a workspace that
    :class:`~rein.harness.ports.AnnouncesSending` tells the diagnostics
    coordinator which paths it is about to send (``expect``).
    """

    def __init__(
        self,
        root: Path,
        config: Callable[[], ReinConfig],
        mutations: MutationLog,
        workspace: W,
        diagnostics: DiagnosticsSource,
        model_factory: Callable[[ModelConfig], Model],
        *,
        storage: Callable[[], str | Path | None],
        emit: Callable[[Event], None],
        note_external: Callable[[tuple[str, ...]], object],
        known_text: Callable[[str], str | None] | None = None,
        spawn: Spawn | None = None,
        watch: bool = True,
        on_watch: Callable[[DiskWatcher], None] | None = None,
        approver: Callable[[str], Approver | None] = _nobody,
        user: Callable[[str], UserChannel | None] = _nobody,
        commands: Callable[[str], CommandExecutor | None] = _nobody,
        approval_rules: Callable[[str], ApprovalRuleBook | None] = _nobody,
        mcp_ports: McpConfigPorts | None = None,
        hook_ports: HookTrustPorts | None = None,
        navigator: Navigator | None = None,
        on_close: Sequence[Callable[[], Awaitable[None]]] = (),
        notices: FolderNotices | None = None,
        on_new_session: Sequence[Callable[[Session], None]] = (),
        on_evict: Sequence[Callable[[Session], None]] = (),
        evict: bool = False,
        recover_interrupted: bool = True,
    ) -> None:
        self.root = root
        self.config = config
        self.mutations = mutations
        self.workspace = workspace
        self.source = diagnostics
        self.model_factory = model_factory

        def sandbox() -> SandboxSettings:
            return self.config().sandbox_settings()

        self._gates_sandbox = OtherCommandsSandbox(str(root), sandbox, "gates")
        self.runner = SubprocessRunner(str(root), sandbox=self._gates_sandbox)
        #: The dependency installs' runner (their sandbox reaches the registries).
        self.install_runner = SubprocessRunner(
            str(root), sandbox=OtherCommandsSandbox(str(root), sandbox, "install")
        )
        analyzer = config().gates.analyzer
        self.diagnostics = DiagnosticsCoordinator(
            diagnostics, quiet_ms=analyzer.quiet_period_ms, max_wait_ms=analyzer.max_wait_ms
        )
        mutations.subscribe(self.diagnostics.notify_mutation)
        if isinstance(diagnostics, MutationListening):
            mutations.subscribe(diagnostics.notify_mutation)
        if isinstance(workspace, AnnouncesSending):
            workspace.on_sending(self.diagnostics.expect)
        self.preview = FolderPreview(
            root,
            lambda: self.config().gates.preview,
            mutations,
            emit,
            spawn,
            sandbox=OtherCommandsSandbox(str(root), sandbox, "preview"),
        )
        self.watch = watch
        self._note_external = note_external
        self._known_text = known_text
        self._on_watch = on_watch
        self._storage = storage
        self._approver = approver
        self._user = user
        self._commands = commands
        self._approval_rules = approval_rules
        self._mcp_ports = mcp_ports
        self._hook_ports = hook_ports
        #: Answers the sessions' navigation tools (None: they are not offered).
        self.navigator = navigator
        self._on_close = tuple(on_close)
        self._notices = notices or FolderNotices()
        self._on_new_session = tuple(on_new_session)
        self._on_evict = tuple(on_evict)
        self._evict = evict
        self._recover_interrupted = recover_interrupted
        self._watcher: DiskWatcher | None = None
        self._mcp: McpManager | None = None
        self._manager: SessionManager | None = None

    # ---------------------------------------------------------------- parts

    def disk_watcher(self) -> DiskWatcher:
        """Watches the folder for changes nobody made through the workspace
        (a command a run started, a formatter): mutations of origin
        "external"; while a run's command runs they count for that run."""
        if self._watcher is None:
            preview = self.preview

            def external(paths: tuple[str, ...]) -> None:
                # The preview's own files (its log, its listed outputs) are no change.
                kept = tuple(preview.without_outputs(paths))
                if kept:
                    self._note_external(kept)

            self._watcher = DiskWatcher(self.root, external, known_text=self._known_text)
            self.mutations.subscribe(self._watcher.on_own_mutation)
            if isinstance(self.workspace, AnnouncesSending):
                # The editor may write an edit to disk before it answers.
                self.workspace.on_sending(self._watcher.sending)
            if self._on_watch is not None:
                self._on_watch(self._watcher)
        return self._watcher

    @property
    def watcher(self) -> DiskWatcher | None:
        """The disk watcher once made."""
        return self._watcher

    @property
    def mcp(self) -> McpManager:
        """The workspace's MCP servers, one manager shared by the sessions
        (started by the first run that needs tools)."""
        if self._mcp is None:
            self._mcp = workspace_manager(self.root, self.config, self._mcp_ports)
        return self._mcp

    @property
    def manager(self) -> SessionManager:
        """The sessions of this folder and their store."""
        if self._manager is None:
            from rein.session import SessionManager

            notices = self._notices
            manager = SessionManager(
                self.config,
                self.ports,
                storage=self._storage,
                on_store_error=notices.store_error,
                on_checkpoint_error=notices.checkpoint_error,
                on_store_notice=notices.store_notice,
                evict=self._evict,
                recover_interrupted=self._recover_interrupted,
            )
            manager.on_new_session.extend(self._on_new_session)
            manager.on_evict.extend(self._on_evict)
            self._manager = manager
        return self._manager

    @property
    def has_manager(self) -> bool:
        """Whether the session manager was made (sessions may exist)."""
        return self._manager is not None

    def ports(self) -> SessionPorts:
        """The folder's ports for :func:`rein.session.build_session` (the
        disk watcher starts with the first session)."""
        from rein.session import SessionPorts

        watcher = self.disk_watcher() if self.watch else None
        return SessionPorts(
            root=self.root,
            workspace=self.workspace,
            diagnostics=self.diagnostics,
            runner=self.runner,
            install_runner=self.install_runner,
            gates_sandboxed=lambda: self._gates_sandbox.sandbox() is not None,
            gates_sandbox=self._gates_sandbox,
            approver=self._approver,
            user=self._user,
            preview_gates=self.preview.gates,
            model_factory=self.model_factory,
            changes=self.mutations,
            settle_changes=watcher.settle if watcher is not None else None,
            mcp=self.mcp,
            commands=self._commands,
            approval_rules=self._approval_rules,
            hooks=self._hook_ports,
            navigator=self.navigator,
        )

    async def close(self) -> None:
        """Stop the preview and the watcher and close the MCP servers (the
        parts that were made), then what ``on_close`` names."""
        await self.preview.shutdown()
        if self._watcher is not None:
            self._watcher.stop()
        if self._mcp is not None:
            await self._mcp.aclose()
        for close in self._on_close:
            await close()
