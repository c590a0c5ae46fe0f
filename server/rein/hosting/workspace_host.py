"""One folder on disk, hosted for any number of sessions.

:class:`WorkspaceHost` is what ``rein run`` and ``rein acp`` share: a
:class:`~rein.hosting.folder.FolderHost` (the mutation log, the diagnostics
coordinator, the preview, the file watcher, the workspace's MCP servers and
the :class:`~rein.session.SessionManager` with its SQLite store) over the
disk workspace and the headless analyzer pool. The sessions themselves come
from :func:`rein.session.build_session` through :meth:`WorkspaceHost.ports`;
what differs per host (who approves, who answers ``ask_user``, where
commands run, whose view of a file is the truth) is passed in as per-session
factories and an optional workspace wrapper.

``rein run`` puts one session over it (:class:`rein.hosting.headless.HeadlessSession`);
``rein acp`` keeps one host per distinct ``cwd`` and all the sessions of that
folder (:mod:`rein.acp.host`). Use it as an async context manager: it opens
the store, starts the analyzers (their baseline is taken in the background:
the analyzer gate waits for it, bounded, before the run's first change), the
watcher and the preview's task group, and stops every process it started.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio
import anyio.abc

from rein.bring.hook_trust import HookTrustPorts
from rein.config import ReinConfig
from rein.disk.analyzer_discovery import WorkspaceFiles, not_analysed, scan_workspace
from rein.disk.analyzer_discovery import workspace_specs as discover_specs
from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.analyzers import AnalyzerPool
from rein.disk.disk_workspace import DiskWorkspace
from rein.disk.pool_navigator import PoolNavigator, navigates
from rein.disk.pool_status import not_analysed_text
from rein.harness import Event
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import (
    ApprovalRuleBook,
    Approver,
    CommandExecutor,
    Model,
    Mutation,
    UserChannel,
    Workspace,
)
from rein.harness.reported import reported_logger
from rein.hosting.folder import FolderHost, FolderNotices
from rein.mcp.config import McpConfigPorts
from rein.providers.config import ModelConfig
from rein.session import SessionPorts
from rein.session.session import gates_closed

__all__ = ["BASELINE_LIMIT_S", "KeepsTexts", "WorkspaceHost"]

log = logging.getLogger(__name__)
reported_log = reported_logger(__name__)

#: How long the analyzers' start-up baseline may take before it is reported.
BASELINE_LIMIT_S = 120.0
#: How long closing the host lets analyzers still starting finish their start.
START_GRACE_S = 3.0


def _nobody(session_id: str) -> None:
    return None


@runtime_checkable
class KeepsTexts(Protocol):
    """A workspace view that knows files by a text other than the disk's
    (``rein acp``: the client's buffers). The analyzers read it first, and
    the watcher takes a save of exactly that text for no outside change."""

    def text_of(self, path: str) -> str | None: ...


class WorkspaceHost:
    """The ports of one folder and the sessions over it.

    ``model_factory`` makes a session's model from the ``model``
    configuration; ``storage`` is the session store's folder (None keeps
    sessions in memory); ``mcp_ports`` is who is asked for MCP inputs and
    trust (None: nobody); ``recover_interrupted`` as for
    :class:`~rein.session.SessionManager` (False for a second host of the
    same store in one process).

    ``analyzers``: the analyzer pool's servers; None: those
    ``gates.analyzer.servers`` and its presets give this workspace
    (:mod:`rein.disk.analyzer_discovery`).

    Per session (called with its id): ``approver`` answers the calls whose
    policy is "ask" (None: nobody can approve, such a call is refused with a
    result the model can read); ``user`` answers ``ask_user`` (None: the run
    ends waiting); ``commands`` runs ``run_command``'s commands (None: a
    local process).

    ``wrap_workspace`` puts another view in front of the disk (``rein acp``:
    the client's buffers); the mutation log tracks whatever it returns, and
    when the view :class:`KeepsTexts` the analyzers and the watcher use it.
    """

    def __init__(
        self,
        root: str | Path,
        config: ReinConfig,
        model_factory: Callable[[ModelConfig], Model],
        *,
        analyzers: Sequence[AnalyzerSpec] | None = None,
        approver: Callable[[str], Approver | None] = _nobody,
        user: Callable[[str], UserChannel | None] = _nobody,
        commands: Callable[[str], CommandExecutor | None] = _nobody,
        approval_rules: Callable[[str], ApprovalRuleBook | None] = _nobody,
        wrap_workspace: Callable[[DiskWorkspace], Workspace] | None = None,
        watch: bool = True,
        storage: str | Path | None = None,
        mcp_ports: McpConfigPorts | None = None,
        hook_ports: HookTrustPorts | None = None,
        recover_interrupted: bool = True,
    ) -> None:
        self.root = Path(root).resolve()
        self.config = config
        self.model_factory = model_factory
        mutations = MutationLog()
        self.disk = DiskWorkspace(self.root)
        #: What the sessions read and write through (the disk, or a view over it).
        self.view: Workspace = wrap_workspace(self.disk) if wrap_workspace else self.disk
        workspace = TrackedWorkspace(self.view, mutations)
        known = self.view.text_of if isinstance(self.view, KeepsTexts) else None
        gates_config = self.config.gates
        #: The workspace's files per extension (the analyzers line's "not
        #: analysed"); scanned only when the analyzer gate is on.
        self.files = (
            scan_workspace(self.root) if gates_config.analyzer.enabled else WorkspaceFiles()
        )
        if analyzers is None and gates_config.analyzer.enabled:
            analyzers = discover_specs(self.root, gates_config.analyzer, self.files)
        self.pool = AnalyzerPool(
            self.root,
            analyzers or () if gates_config.analyzer.enabled else (),
            on_diagnostics_changed=self._diagnostics_changed,
            on_report=self.report,
            quiet_ms=gates_config.analyzer.quiet_period_ms,
            workspace_max_files=gates_config.analyzer.workspace_max_files,
            max_importers=gates_config.analyzer.max_importers,
            defer_workspace=gates_config.analyzer.defer_workspace_analysis,
            request_timeout_ms=gates_config.analyzer.request_timeout_ms,
            owed_limit_ms=gates_config.analyzer.settle_timeout_ms,
            read=known,
        )
        #: The folder's shared parts (mutation log, coordinator, preview,
        #: watcher, MCP, sessions) over the disk and the analyzers.
        self.folder: FolderHost[TrackedWorkspace] = FolderHost(
            self.root,
            lambda: self.config,
            mutations,
            workspace,
            self.pool,
            model_factory,
            storage=lambda: storage,
            emit=self._preview_event,
            note_external=self._external_change,
            known_text=known,
            spawn=self._spawn,
            watch=watch,
            approver=approver,
            user=user,
            commands=commands,
            approval_rules=approval_rules,
            mcp_ports=mcp_ports,
            hook_ports=hook_ports,
            notices=FolderNotices(
                checkpoint_error=lambda message: self.report(f"checkpoints: {message}"),
                store_notice=lambda message: self.report(f"sessions: {message}"),
            ),
            recover_interrupted=recover_interrupted,
            # The pool's own servers answer navigation when one of them can.
            navigator=(PoolNavigator(self.pool) if navigates(self.pool.specs) else None),
        )
        self.mutations = mutations
        self.workspace = workspace
        self.runner = self.folder.runner
        self.diagnostics = self.folder.diagnostics
        mutations.subscribe(self.pool.on_mutation)
        self.watcher = self.folder.disk_watcher() if watch else None
        #: Preview events outside a run go to these listeners.
        self.preview_listeners: list[Callable[[Event], None]] = []
        #: The preview, made now: it observes the folder from the start.
        self.preview = self.folder.preview.coordinator
        self.manager = self.folder.manager
        #: What went wrong around the sessions (said once each, in order).
        self.reports: list[str] = []
        #: The workspace's MCP servers (started by the first run that needs tools).
        self.mcp = self.folder.mcp
        self._stack: AsyncExitStack | None = None
        self._tg: anyio.abc.TaskGroup | None = None

    def ports(self) -> SessionPorts:
        return self.folder.ports()

    # ------------------------------------------------------------- plumbing

    def analyzers_line(self) -> str:
        """``analyzers: ruff 0.x (python), gopls v0.x (go); not analysed: .rs
        (3 files)``, or why there are none, for the terminal at start."""
        if not self.config.gates.analyzer.enabled:
            return "analyzers: off (gates.analyzer.enabled is false)"
        # While they start, what they will cover is what is configured.
        if self.pool.has_started:
            running = [a.spec for a in self.pool.analyzers if a.alive]
        else:
            running = list(self.pool.specs)
        uncovered = not_analysed_text(not_analysed(self.files, running))
        return f"analyzers: {self.pool.describe()}" + (f"; {uncovered}" if uncovered else "")

    async def analyzers_started(self) -> None:
        """Return once the analyzers started (or failed to): from then on
        :meth:`analyzers_line` names them and their versions."""
        await self.pool.started()

    async def _start_analyzers(self) -> None:
        await self.pool.start_analyzers()
        if not self.pool.analyzers:
            return
        # The baseline: every analyzer says it is done, not its first publish.
        if not await self.pool.wait_initial(BASELINE_LIMIT_S):
            self.report(
                f"the analyzers did not finish their baseline within {BASELINE_LIMIT_S:g} s"
            )

    def report(self, message: str) -> None:
        self.reports.append(message)
        reported_log.warning("%s", message)

    def _diagnostics_changed(self, paths: list[str]) -> None:
        self.diagnostics.notify_diagnostics_changed(paths)

    def _preview_event(self, event: Event) -> None:
        for listener in list(self.preview_listeners):
            listener(event)

    def _spawn(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        if self._tg is None:
            raise RuntimeError("the workspace host is not running (use `async with`)")
        self._tg.start_soon(fn)

    def _external_change(self, paths: tuple[str, ...]) -> None:
        mutation: Mutation = self.disk.note_external_change(paths)
        self.mutations.record(mutation)

    # ------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> WorkspaceHost:
        self._stack = AsyncExitStack()
        await self._stack.__aenter__()
        try:
            await self.manager.open_store()
            if self.manager.store_error is not None:
                self.report(f"sessions are not stored: {self.manager.store_error}")
            # Last: the manager's close (its sessions' gates closing) and then
            # the wait for those (a warm pytest reaped on this loop).
            self._stack.push_async_callback(gates_closed)
            self._stack.callback(self.manager.close)
            self._stack.push_async_callback(self.mcp.aclose)
            await self.pool.prepare()
            self._stack.push_async_callback(self.pool.stop)
            self._tg = await self._stack.enter_async_context(anyio.create_task_group())
            # Not waited on here: the model is asked at once while the
            # analyzers start and take their baseline; the analyzer gate
            # waits for it (reported past a second) before the run's first
            # change and before its verdict.
            self._tg.start_soon(self._start_analyzers)
            if self.watcher is not None:
                self._tg.start_soon(self.watcher.run)
                await self.watcher.ready.wait()
                self._stack.callback(self.watcher.stop)
        except BaseException:
            await self._stack.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.preview.shutdown()
        # Analyzers still starting (a run that ended within their start)
        # finish it first, bounded: one cancelled while its process spawns
        # left that process's pipes open past the event loop.
        with anyio.move_on_after(START_GRACE_S):
            await self.pool.started()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        assert self._stack is not None
        await self._stack.__aexit__(None, None, None)

    def subscribe_preview(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        """The preview's events outside a run (a crash, a reload by hand)."""
        self.preview_listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self.preview_listeners:
                self.preview_listeners.remove(listener)

        return unsubscribe
