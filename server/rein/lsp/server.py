"""The Rein language server: configuration, the client channel, and the
editor's ports for the session assembly. Handlers live in
:mod:`rein.lsp.handlers` (their errors are mapped in :mod:`rein.lsp.errors`); sessions and the store in
:class:`rein.session.SessionManager`; how they end at ``shutdown`` in
:mod:`rein.lsp.shutdown`.

Starting fast: this module imports only pygls and lsprotocol. The harness,
the providers, the tools, the store and pydantic are imported on first use,
after ``initialize`` has been answered.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types as lsp
from pygls.exceptions import FeatureNotificationError
from pygls.lsp.server import LanguageServer

from rein import __version__
from rein.lsp._framing import DEFAULT_MAX_BYTES
from rein.lsp._protocol import ReinProtocol, plain_dict_converter
from rein.lsp.channel import ClientChannel, request_bound
from rein.lsp.editor_settings import EditorSettings
from rein.lsp.sandbox_notice import say_if_unsandboxed
from rein.lsp.session_streams import SessionStreams
from rein.lsp.transports import serve_stdio, serve_tcp

if TYPE_CHECKING:
    from rein.config import ReinConfig
    from rein.disk.watcher import DiskWatcher
    from rein.harness import RunResult
    from rein.harness.events import AutoRepair, Event
    from rein.harness.gating.coordinators import DiagnosticsCoordinator
    from rein.harness.generations import MutationLog
    from rein.harness.ports import Model
    from rein.hosting.folder import FolderHost
    from rein.hosting.preview import FolderPreview
    from rein.lsp.approval_registry import ApprovalRegistry
    from rein.lsp.auto_repair import AutoRepairer
    from rein.lsp.editor import EditorWorkspace
    from rein.lsp.editor_diagnostics import EditorDiagnostics
    from rein.lsp.editor_lm import EditorLmHost
    from rein.lsp.folder_navigation import NavigationScan
    from rein.lsp.isolated_sessions import IsolatedSessions
    from rein.lsp.model_choices import ModelChoices
    from rein.lsp.setup_notice import SetupNotice
    from rein.mcp.manager import McpManager
    from rein.providers._http import HttpClients
    from rein.providers.config import ModelConfig
    from rein.session import Session, SessionManager, SessionPorts
    from rein.store import SqliteStore

__all__ = ["ReinServer"]

log = logging.getLogger(__name__)


class ReinServer(LanguageServer):
    protocol: ReinProtocol

    def __init__(self, max_message_bytes: int = DEFAULT_MAX_BYTES) -> None:
        super().__init__(
            "rein",
            __version__,
            protocol_cls=ReinProtocol,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            converter_factory=plain_dict_converter,
        )
        #: The largest message accepted from the client (``--max-message-bytes``).
        self.max_message_bytes = max_message_bytes
        self._reported_internal_error = False
        #: The editor's ``rein`` settings, validated (:mod:`rein.lsp.editor_settings`).
        self.settings = EditorSettings(self._config_error)
        #: The adapters' narrow view of the client.
        self.client = ClientChannel(self, bound=lambda method: request_bound(self.config, method))
        #: The client answers ``rein/navigate`` (said in ``initialize``).
        self.offers_navigation = False
        #: The workspace folder's shared parts, made on first use.
        self._folder: FolderHost[EditorWorkspace] | None = None
        self._navigation: NavigationScan | None = None
        self._isolated: IsolatedSessions | None = None  # made once one is asked for
        self._editor_diagnostics: EditorDiagnostics | None = None
        self._auto_repair: AutoRepairer | None = None
        self._watch_task: asyncio.Future[None] | None = None
        #: Tests and embedders may replace how models are made.
        self.model_factory: Any = None
        #: The unused setup files, told once (made on first use).
        self._notice: SetupNotice | None = None
        #: Each session's event stream to the client.
        self.streams = SessionStreams(self.send_event)
        #: Whether the sandbox's state was said (once per server).
        self._sandbox_said = False
        self._sandbox_notice: asyncio.Task[None] | None = None  # kept while it runs
        #: The HTTP clients every session's model shares.
        self._http_clients: HttpClients | None = None
        self._lm_host: EditorLmHost | None = None
        self._model_choices: ModelChoices | None = None
        self._approvals: ApprovalRegistry | None = None
        #: The process's exit code once :meth:`start_io` returns (1: ``exit``
        #: came before ``shutdown``).
        self.exit_code = 0

    # ------------------------------------------------------------------ wire

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio with Rein's frame reader (:mod:`rein.lsp.transports`)."""
        self.exit_code = serve_stdio(self, self.protocol, self.max_message_bytes, stdin, stdout)

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client at a time over TCP (debugging), with Rein's reader."""
        serve_tcp(self, self.protocol, self.max_message_bytes, host, port)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Errors outside a request go to the log with their traceback; a
        failing notification handler is shown once, without its details
        (they can hold file paths)."""
        log.error("server error (%s): %s", getattr(source, "__name__", source), error)
        if source is FeatureNotificationError and not self._reported_internal_error:
            self._reported_internal_error = True
            self.window_show_message(
                lsp.ShowMessageParams(
                    type=lsp.MessageType.Error,
                    message="Rein: an internal error occurred; the details are in the server log",
                )
            )

    # ---------------------------------------------------------- configuration

    @property
    def config(self) -> ReinConfig:
        return self.settings.config

    @config.setter
    def config(self, value: ReinConfig) -> None:
        self.settings.config = value

    def apply_configuration(self, data: Any, source: str) -> bool:
        """Validate and apply a ``rein`` section key by key; False when a
        setting was invalid (:meth:`EditorSettings.apply`)."""
        return self.settings.apply(data, source)

    def set_initialization_options(self, options: Any) -> None:
        self.settings.keep_initialization_options(options)

    def configured_event(self) -> asyncio.Event:
        return self.settings.configured_event()

    async def ready(self, timeout_s: float = 15.0) -> None:
        """Wait (bounded) until the configuration is applied
        (:meth:`EditorSettings.ready`), then for the folder's scan."""
        await self.settings.ready(timeout_s)
        await self.prepare_folder()

    async def prepare_folder(self) -> None:
        """Before the folder is built: find the servers that would navigate
        it (walking the folder) on a thread, once, so that the other
        requests are answered meanwhile (:class:`~rein.lsp.folder_navigation.
        NavigationScan`)."""
        if self._folder is None and not self.offers_navigation:
            await self.navigation.run(self.root, self.config.gates.analyzer)

    @property
    def navigation(self) -> NavigationScan:
        if self._navigation is None:
            from rein.lsp.folder_navigation import NavigationScan

            self._navigation = NavigationScan()
        return self._navigation

    def _config_error(self, message: str) -> None:
        self.window_show_message(
            lsp.ShowMessageParams(type=lsp.MessageType.Error, message=f"Rein: {message}")
        )

    # -------------------------------------------------------------- adapters

    @property
    def root(self) -> Path:
        root = self.workspace.root_path
        return (Path(root) if root else Path(os.getcwd())).resolve()

    @property
    def folder(self) -> FolderHost[EditorWorkspace]:
        """The workspace folder's shared parts (:class:`rein.hosting.folder.
        FolderHost`: the mutation log, the diagnostics coordinator, the
        preview, the disk watcher, MCP and the sessions) over the editor's
        documents and diagnostics."""
        if self._folder is None:
            from rein.lsp.editor_folder import FolderWiring, editor_folder

            folder, source = editor_folder(
                self,
                FolderWiring(
                    make_model=self._make_model,
                    preview_event=self._preview_event,
                    run_watcher=self._run_watcher,
                    store_error=self._store_error,
                    checkpoint_error=self._checkpoint_error,
                    store_notice=self._store_notice,
                    on_new_session=(self._stream_session, self._model_chosen),
                    on_evict=(self._drop_stream, self._model_forgotten),
                ),
            )
            self._editor_diagnostics = source
            self._folder = folder
        return self._folder

    def _model_chosen(self, session: Session) -> None:
        self.model_choices.on_new_session(session)

    def _model_forgotten(self, session: Session) -> None:
        self.model_choices.forget(session)

    @property
    def mutations(self) -> MutationLog:
        return self.folder.mutations

    def adapters(self) -> tuple[EditorWorkspace, DiagnosticsCoordinator]:
        folder = self.folder
        return folder.workspace, folder.diagnostics

    def on_diagnostics_changed(
        self, uris: list[str], versions: dict[str, int] | None = None
    ) -> None:
        """``rein/diagnosticsChanged``: feeds the coordinator (freshness:
        :func:`rein.lsp.editor_diagnostics.fresh_and_outdated`) and the
        editor's source (its quiet period)."""
        from rein.lsp.editor_diagnostics import fresh_and_outdated

        workspace, coordinator = self.adapters()
        documents = self.workspace.text_documents
        fresh, outdated = fresh_and_outdated(workspace, documents, uris, versions or {})
        coordinator.notify_diagnostics_changed(fresh, outdated=outdated)
        if self._editor_diagnostics is not None:
            self._editor_diagnostics.notify_changed(fresh + outdated)

    @property
    def preview(self) -> FolderPreview:
        """The preview, one per server, shared by the sessions."""
        return self.folder.preview

    def _preview_event(self, event: Event) -> None:
        """The preview's events outside a run: sent with ``sessionId: null``."""
        self.streams.send(None, event)

    @property
    def auto_repair(self) -> AutoRepairer:
        if self._auto_repair is None:
            from rein.lsp.auto_repair import AutoRepairer

            self._auto_repair = AutoRepairer(
                self.folder,
                self.settings,
                self.new_session,
                self.report_auto_repair,
                self._waits_for_lm_consent,
            )
        return self._auto_repair

    def _waits_for_lm_consent(self) -> bool:
        """A run no person started would use the editor's models, which no
        person allowed yet."""
        return (
            self.model_choices.current(None).provider == "vscode-lm" and not self.lm_host.consented
        )

    def session_ports(self) -> SessionPorts:
        """The editor's ports for :func:`rein.session.build_session`."""
        return self.folder.ports()

    @property
    def approvals(self) -> ApprovalRegistry:
        """The sessions' approval rules over the workspace's (stored)."""
        if self._approvals is None:
            from rein.lsp.approval_registry import ApprovalRegistry, WorkspaceRules

            workspace = WorkspaceRules(str(self.root), lambda: self.store)
            self._approvals = ApprovalRegistry(workspace)
        return self._approvals

    @property
    def mcp(self) -> McpManager:
        """The workspace's MCP servers, one manager shared by the sessions."""
        return self.folder.mcp

    def _make_model(self, config: ModelConfig) -> Model:
        """A session's model, refusing an unusable model configuration first
        (also when tests or embedders replace how models are made)."""
        config.check_usable()
        make: Callable[[ModelConfig], Model] = self.model_factory or self.create_model
        return make(config)

    def create_model(self, config: ModelConfig) -> Any:
        """A session's model (the model picker's choice first, rein/setModel);
        the HTTP providers share the server's clients, vscode-lm asks the
        editor."""
        return self.build_model(self.model_choices.effective(config))

    def build_model(self, config: ModelConfig) -> Model:
        """The model ``config`` describes, as given (no picker choice
        applied): HTTP providers share the server's clients, vscode-lm asks
        the editor. ConfigError when it cannot be built."""
        from rein.providers import create_model, shared_http_clients

        if self._http_clients is None:
            self._http_clients = shared_http_clients()
        return create_model(config, clients=self._http_clients, lm_host=self.lm_host)

    @property
    def lm_host(self) -> EditorLmHost:
        """The editor's language models (provider vscode-lm)."""
        if self._lm_host is None:
            from rein.lsp.editor_lm import EditorLmHost

            self._lm_host = EditorLmHost(self.protocol)
        return self._lm_host

    @property
    def model_choices(self) -> ModelChoices:
        """The model picker's choices (rein/setModel)."""
        if self._model_choices is None:
            from rein.lsp.model_choices import ModelChoices

            self._model_choices = ModelChoices(lambda: self.config, self.build_model)
        return self._model_choices

    def disk_watcher(self) -> DiskWatcher:
        """Watches the workspace folder for changes the editor did not make
        (a command the run started, a formatter): they are mutations of
        origin "external", and while a run's command runs they count for
        that run. Started with the first session."""
        return self.folder.disk_watcher()

    def _run_watcher(self, watcher: DiskWatcher) -> None:
        self._watch_task = asyncio.ensure_future(watcher.run())

    # -------------------------------------------------------------- sessions

    @property
    def manager(self) -> SessionManager:
        return self.folder.manager

    def _store_error(self, message: str) -> None:
        self.window_show_message(
            lsp.ShowMessageParams(
                type=lsp.MessageType.Error,
                message=f"Rein: {message}. Sessions are kept in memory only until the "
                "server restarts.",
            )
        )

    def _store_notice(self, message: str) -> None:
        """Trouble with the open session store (a write that failed, a
        database deleted and created again): a warning, the runs go on."""
        self.window_show_message(
            lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"Rein: {message}")
        )

    def _checkpoint_error(self, message: str) -> None:
        self.window_show_message(
            lsp.ShowMessageParams(
                type=lsp.MessageType.Warning,
                message=f"Rein: {message}. Runs go on; what they change may not be undoable.",
            )
        )

    def _stream_session(self, session: Session) -> None:
        from rein.lsp.wait_progress import WaitProgress

        self.streams.open(session)
        session.closers.append(session.subscribe(WaitProgress(self)))
        self._say_if_unsandboxed()

    def _say_if_unsandboxed(self) -> None:
        """Once: a warning when commands cannot run sandboxed (off the loop)."""
        if self._sandbox_said:
            return
        self._sandbox_said = True
        self._sandbox_notice = say_if_unsandboxed(
            self.config.approval.command,
            self.config.sandbox.bwrap,
            self.config.sandbox.also,
            lambda notice: self.window_show_message(
                lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"Rein: {notice}")
            ),
        )

    def _drop_stream(self, session: Session) -> None:
        """An evicted session's stream goes; its ``seq`` is remembered."""
        self.streams.close(session.id, evicted=True)

    def state(self) -> dict[str, Any]:
        """What the server holds (``rein/serverState``): sessions in memory,
        open HTTP clients, live progress tokens, event streams."""
        return {
            "sessionsInMemory": sorted(self.sessions)
            if self._folder is not None and self._folder.has_manager
            else [],
            "httpClients": self._http_clients.open if self._http_clients is not None else 0,
            "progressTokens": len(self.work_done_progress.tokens),
            "streams": len(self.streams),
        }

    @property
    def sessions(self) -> dict[str, Session]:
        return self.manager.sessions

    @property
    def store(self) -> SqliteStore | None:
        return self.manager.store

    async def open_store(self) -> SqliteStore | None:
        return await self.manager.open_store()

    async def load_session(self, session_id: str) -> Session | None:
        """The session, loaded from the store if need be; ConfigError when
        its model cannot be built (a handler answers RequestFailed)."""
        return await self.manager.load(session_id)

    def new_session(self, **spec: Any) -> Session:
        """A new session (``mode``, ``title``, ``origin``, ``harness``,
        ``model``); ConfigError when its model cannot be built (invalid
        model settings: nothing is created, no request is sent; a handler
        answers RequestFailed, :mod:`rein.lsp.errors`)."""
        session = self.manager.new(**spec)
        if self._notice is None:
            from rein.lsp.setup_notice import SetupNotice

            self._notice = SetupNotice(self._warn)
        self._notice.check(self.config, self.root)
        return session

    def _warn(self, message: str) -> None:
        self.window_show_message(
            lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=message)
        )

    @property
    def isolated(self) -> IsolatedSessions:
        """The isolated sessions (``rein/newSession`` ``isolated: true``)."""
        if self._isolated is None:
            from rein.lsp.isolated_sessions import IsolatedSessions

            self._isolated = IsolatedSessions(self, self._make_model)
        return self._isolated

    @property
    def editor_workspace(self) -> EditorWorkspace:
        return self.folder.workspace

    async def run_prompt(self, session: Session, text: str) -> RunResult:
        return await self.manager.run_prompt(session, text)

    def active_runs(self) -> list[Session]:
        return self.manager.active()

    async def shutdown_sessions(self) -> None:
        """End the sessions (:func:`rein.lsp.shutdown.end_all_sessions`),
        then close the folder (its disk watcher stopped, and its task
        awaited, bounded) and the shared HTTP clients."""
        from rein.lsp.shutdown import end_all_sessions, watcher_ended

        await end_all_sessions(self._folder, self._isolated)
        try:
            if self._folder is not None:
                await self._folder.close()  # stops the disk watcher
        finally:
            task, self._watch_task = self._watch_task, None
            await watcher_ended(task)
        if self._http_clients is not None:
            await self._http_clients.aclose()

    def kill_preview(self) -> None:
        if self._folder is not None:
            self._folder.preview.kill_now()

    # ---------------------------------------------------------------- events

    def send_event(self, payload: dict[str, Any]) -> None:
        """Send one ``rein/event`` notification (framed directly: the
        payload is plain JSON data already)."""
        self.client.notify_json("rein/event", payload)

    def report_auto_repair(self, session: Session | None, event: AutoRepair) -> None:
        self.streams.send(session, event)
