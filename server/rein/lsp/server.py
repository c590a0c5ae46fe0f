"""The Rein language server: configuration, the client channel, and the
editor's ports for the session assembly. Handlers live in
:mod:`rein.lsp.handlers` (their errors are mapped in :mod:`rein.lsp.errors`); sessions and the store in
:class:`rein.session.SessionManager`.

Starting fast: this module imports only pygls and lsprotocol. The harness,
the providers, the tools, the store and pydantic are imported on first use,
after ``initialize`` has been answered.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types as lsp
from pygls.exceptions import FeatureNotificationError
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from rein import __version__
from rein.lsp._framing import DEFAULT_MAX_BYTES
from rein.lsp._protocol import ReinProtocol, plain_dict_converter, serve_frames
from rein.lsp.channel import ClientChannel, request_bound
from rein.lsp.sandbox_notice import say_if_unsandboxed

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
        self._config: ReinConfig | None = None
        self._init_options: dict[str, Any] = {}
        #: The invalid settings already reported, as (key, problem).
        self._reported_config_errors: set[tuple[str, str]] = set()
        #: The adapters' narrow view of the client.
        self.client = ClientChannel(self, bound=lambda method: request_bound(self.config, method))
        #: The client answers ``rein/navigate`` (said in ``initialize``).
        self.offers_navigation = False
        #: The workspace folder's shared parts, made on first use.
        self._folder: FolderHost[EditorWorkspace] | None = None
        self._isolated: IsolatedSessions | None = None  # made once one is asked for
        self._editor_diagnostics: EditorDiagnostics | None = None
        self._auto_repair: AutoRepairer | None = None
        self._watch_task: asyncio.Future[None] | None = None
        #: Tests and embedders may replace how models are made.
        self.model_factory: Any = None
        #: The unused setup files, told once (made on first use).
        self._notice: SetupNotice | None = None
        #: Set once the configuration is known (``initialized`` handled).
        self._configured: asyncio.Event | None = None
        #: Each session's event stream to the client, by session id.
        self.streams: dict[str, Any] = {}
        #: The last ``seq`` sent for each evicted session: a reloaded
        #: session's events go on from it.
        self._evicted_seq: dict[str, int] = {}
        #: Whether the sandbox's state was said (once per server).
        self._sandbox_said = False
        self._sandbox_notice: asyncio.Task[None] | None = None  # kept while it runs
        #: The HTTP clients every session's model shares.
        self._http_clients: HttpClients | None = None
        self._lm_host: EditorLmHost | None = None
        self._model_choices: ModelChoices | None = None
        self._approvals: ApprovalRegistry | None = None

    # ------------------------------------------------------------------ wire

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio with Rein's frame reader (:mod:`rein.lsp._framing`)
        instead of pygls's."""
        source = stdin or sys.stdin.buffer
        read_some = getattr(source, "read1", None) or source.read
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def read() -> bytes:
            loop = asyncio.get_running_loop()
            chunk: bytes = await loop.run_in_executor(self.thread_pool, read_some, 65536)
            return chunk

        try:
            asyncio.run(serve_frames(read, self.protocol, self._stop_event, self.max_message_bytes))
        except BrokenPipeError:
            log.error("the client is gone; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client at a time over TCP (debugging), with Rein's reader."""
        self._stop_event = stop = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)

            async def read() -> bytes:
                return await reader.read(65536)

            await serve_frames(read, self.protocol, stop, self.max_message_bytes)
            self.shutdown()

        async def main() -> None:
            server = await asyncio.start_server(connection, host, port)
            self._server = server  # closed by shutdown(): the client left
            log.info("listening on %s:%s", host, port)
            async with server:
                await server.serve_forever()

        try:
            asyncio.run(main())
        except asyncio.CancelledError:
            log.debug("the TCP server was cancelled")

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
        if self._config is None:
            from rein.config import ReinConfig

            self._config = ReinConfig()
        return self._config

    @config.setter
    def config(self, value: ReinConfig) -> None:
        self._config = value

    def apply_configuration(self, data: Any, source: str) -> bool:
        """Validate and apply a ``rein`` section key by key
        (:func:`rein.config.resolve_config`): an invalid value falls back to
        the last good value of that key (or its default), an invalid model
        endpoint makes runs fail; each invalid setting is reported once,
        naming the key and the allowed values. False when one was invalid."""
        from rein.config import resolve_config

        merged = dict(self._init_options)
        if isinstance(data, dict):
            merged.update(data)
        resolved = resolve_config(merged, self._config, source)
        self.config = resolved.config
        current = {(issue.key, issue.problem) for issue in resolved.issues}
        for issue in resolved.issues:
            if (issue.key, issue.problem) in self._reported_config_errors:
                continue
            message = issue.message(source)
            log.warning("%s", message)
            self.window_show_message(
                lsp.ShowMessageParams(type=lsp.MessageType.Error, message=f"Rein: {message}")
            )
        # A setting fixed and broken again is reported again.
        self._reported_config_errors = current
        return not resolved.issues

    def set_initialization_options(self, options: Any) -> None:
        """Keep the ``rein`` section of the initialization options; it is
        validated (with the editor's settings) once ``initialized`` arrives."""
        if isinstance(options, dict):
            section = options.get("rein", options)
            self._init_options = dict(section) if isinstance(section, dict) else {}

    def configured_event(self) -> asyncio.Event:
        if self._configured is None:
            self._configured = asyncio.Event()
        return self._configured

    async def ready(self, timeout_s: float = 15.0) -> None:
        """Wait (bounded) until the configuration is applied: requests that
        arrive between ``initialized`` and the editor's answer to
        ``workspace/configuration`` must not run with the defaults."""
        event = self.configured_event()
        if event.is_set():
            return
        try:
            await asyncio.wait_for(event.wait(), timeout_s)
        except TimeoutError:
            log.warning(
                "no configuration after %.0f s; using the initialization options", timeout_s
            )
            self.apply_configuration({}, "initializationOptions")
            event.set()

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
        """``rein/diagnosticsChanged``: feeds the coordinator (freshness) and
        the editor's source (its quiet period). Diagnostics the editor made
        for an older version of a document than the one synced here (the
        client batches its notices: one can arrive after Rein's next edit)
        are not fresh for that edit, nor are those made for the version an
        edit of Rein's was computed against (the notice can arrive while that
        edit is on its way, before the editor's answer and its didChange)."""
        workspace, coordinator = self.adapters()
        versions = versions or {}
        fresh: list[str] = []
        outdated: list[str] = []
        for uri in uris:
            path = workspace.relative(uri)
            if path is None:
                continue
            made_for = versions.get(uri)
            document = self.workspace.text_documents.get(uri) if made_for is not None else None
            synced = document.version if document is not None else None
            if made_for is not None and (
                (synced is not None and made_for < synced)
                or workspace.older_than_last_edit(uri, made_for)
            ):
                outdated.append(path)
            else:
                fresh.append(path)
        paths = fresh + outdated
        coordinator.notify_diagnostics_changed(fresh, outdated=outdated)
        if self._editor_diagnostics is not None:
            self._editor_diagnostics.notify_changed(paths)

    @property
    def preview(self) -> FolderPreview:
        """The preview, one per server, shared by the sessions."""
        return self.folder.preview

    def _preview_event(self, event: Event) -> None:
        """The preview's events outside a run: sent with ``sessionId: null``."""
        self.send_event(
            {"sessionId": None, "runId": None, "seq": 0, "event": event.model_dump(mode="json")}
        )

    @property
    def auto_repair(self) -> AutoRepairer:
        if self._auto_repair is None:
            from rein.lsp.auto_repair import AutoRepairer

            self._auto_repair = AutoRepairer(
                self.folder,
                lambda: self.config,
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
        from rein.lsp.event_stream import EventStream
        from rein.lsp.wait_progress import WaitProgress

        stream = EventStream(session.id, self.send_event, lambda: session.current_run_id)
        stream.seq = self._evicted_seq.pop(session.id, 0)
        session.closers.append(session.subscribe(stream))
        session.closers.append(session.subscribe(WaitProgress(self)))
        session.on_run_end.append(stream.flush)
        self.streams[session.id] = stream
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
        stream = self.streams.pop(session.id, None)
        if stream is not None:
            stream.flush()
            if stream.seq:
                self._evicted_seq[session.id] = stream.seq

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
        """Abort every run, wait for them (bounded: the transcript gets their
        last messages), end the sessions (SessionEnd hooks, bounded:
        ``prompt_input_exit``), closing the isolated copies once theirs ended."""
        from rein.session.ending import abort_runs, end_sessions

        copies = self._isolated
        isolated = [made.session for made in copies.live.values()] if copies is not None else []
        folder = self._folder
        mine = list(folder.manager.sessions.values()) if folder and folder.has_manager else []
        await abort_runs([*isolated, *mine], "the server is shutting down")

        async def end_isolated() -> None:
            await end_sessions(isolated, "prompt_input_exit")
            if copies is not None:
                await copies.close()

        await asyncio.gather(end_sessions(mine, "prompt_input_exit"), end_isolated())
        if self._folder is not None:
            await self._folder.close()
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

    def send_session_event(self, session: Session | None, event: Any) -> None:
        """An event of ``session`` on its stream; without a session it is
        sent with ``sessionId: null``."""
        stream = self.streams.get(session.id) if session is not None else None
        if stream is not None:
            stream(event)
        else:
            self.send_event(
                {"sessionId": None, "runId": None, "seq": 0, "event": event.model_dump(mode="json")}
            )

    def report_auto_repair(self, session: Session | None, event: AutoRepair) -> None:
        self.send_session_event(session, event)
