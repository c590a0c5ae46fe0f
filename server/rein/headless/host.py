"""The headless host: everything ``rein run``, ``rein demo`` and the evals
need, wired around one session built by :func:`rein.session.build_session`.

Disk workspace + mutation log + file watcher + analyzer pool + diagnostics
coordinator + preview are this host's ports; the session itself (agents,
planner and flow, gates, tools with ``task``, prompts) comes from the same
assembly as the language server's, and with a ``storage`` folder it lives in
the same SQLite store (``rein sessions`` lists it, ``rein run --resume``
continues it). Use it as an async context manager; it starts the analyzers
and stops every process it started.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from rein.config import ReinConfig
from rein.harness import Event, RunResult
from rein.harness.coordinators import DiagnosticsCoordinator
from rein.harness.errors import ConfigError
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import ApprovalRequest, Approver, Model, Mutation, UserChannel
from rein.harness.preview import PreviewCoordinator
from rein.harness.preview_gates import preview_gates
from rein.headless.analyzers import DEFAULT_ANALYZERS, AnalyzerPool, AnalyzerSpec
from rein.headless.disk_workspace import DiskWorkspace
from rein.headless.watcher import DiskWatcher
from rein.mcp.config import McpConfigPorts
from rein.mcp.hosting import workspace_manager
from rein.process.preview import SubprocessPreviewFactory
from rein.process.runner import SubprocessRunner
from rein.session import Mode, Session, SessionManager, SessionPorts, SessionSpec

__all__ = ["ApproveAll", "HeadlessSession"]

log = logging.getLogger(__name__)

#: How long start-up waits for the analyzers' baseline at most.
BASELINE_LIMIT_S = 120.0


class ApproveAll:
    """An approver that says yes to everything (``rein run --yes``, the
    demo, benchmarks). Never the default: pass it on purpose."""

    async def confirm(self, request: ApprovalRequest) -> bool:
        return True


class HeadlessSession:
    """One session over a folder on disk.

    ``storage``: the session store's folder (None keeps the session in
    memory); ``resume``: the id of a stored session to continue (its mode is
    the stored one).

    ``approver`` answers the calls whose policy is "ask" (``rein.approval``:
    by default writes inside the workspace are allowed and commands asked,
    as in the editor). Without one nobody can approve: such a call is
    refused with a result the model can read. :class:`ApproveAll` approves
    everything, on purpose only.
    """

    def __init__(
        self,
        root: str | Path,
        model: Model,
        config: ReinConfig | None = None,
        *,
        analyzers: Sequence[AnalyzerSpec] = DEFAULT_ANALYZERS,
        approver: Approver | None = None,
        user: UserChannel | None = None,
        mode: Mode = "agent",
        watch: bool = True,
        storage: str | Path | None = None,
        resume: str | None = None,
        mcp_ports: McpConfigPorts | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.config = config or ReinConfig()
        self.model = model
        self.mode = mode
        self.resume = resume
        self._approver = approver
        self._user = user
        self.mutations = MutationLog()
        self.disk = DiskWorkspace(self.root)
        self.workspace = TrackedWorkspace(self.disk, self.mutations)
        self.runner = SubprocessRunner(str(self.root))
        gates_config = self.config.gates
        self.pool = AnalyzerPool(
            self.root,
            analyzers if gates_config.analyzer.enabled else (),
            on_diagnostics_changed=self._diagnostics_changed,
            on_report=self._report,
            quiet_ms=gates_config.analyzer.quiet_period_ms,
            workspace_max_files=gates_config.analyzer.workspace_max_files,
            max_importers=gates_config.analyzer.max_importers,
            request_timeout_ms=gates_config.analyzer.request_timeout_ms,
        )
        self.diagnostics = DiagnosticsCoordinator(
            self.pool,
            quiet_ms=gates_config.analyzer.quiet_period_ms,
            max_wait_ms=gates_config.analyzer.max_wait_ms,
        )
        self.mutations.subscribe(self.diagnostics.notify_mutation)
        self.mutations.subscribe(self.pool.on_mutation)
        self.watcher = DiskWatcher(self.root, self._external_change) if watch else None
        if self.watcher is not None:
            self.mutations.subscribe(self.watcher.on_own_mutation)
        #: Preview events outside a run go to these listeners.
        self.preview_listeners: list[Callable[[Event], None]] = []
        self.preview = PreviewCoordinator(
            SubprocessPreviewFactory(str(self.root)),
            gates_config.preview,
            emit=self._preview_event,
            spawn=self._spawn,
        )
        self.mutations.subscribe(self.preview.on_mutation)
        self.manager = SessionManager(
            lambda: self.config,
            self.ports,
            storage=lambda: storage,
            on_checkpoint_error=lambda message: self._report(f"checkpoints: {message}"),
        )
        self.reports: list[str] = []
        #: The workspace's MCP servers (started by the first run that needs tools).
        #: ``mcp_ports``: who is asked for inputs and trust (None: nobody).
        self.mcp = workspace_manager(self.root, lambda: self.config, mcp_ports)
        self._session: Session | None = None
        self._stack: AsyncExitStack | None = None
        self._tg: anyio.abc.TaskGroup | None = None

    def ports(self) -> SessionPorts:
        return SessionPorts(
            root=self.root,
            workspace=self.workspace,
            diagnostics=self.diagnostics,
            runner=self.runner,
            approver=lambda session_id: self._approver,
            user=lambda session_id: self._user,
            preview_gates=lambda: (
                preview_gates(self.preview) if self.config.gates.preview.enabled else []
            ),
            model_factory=lambda _config: self.model,
            changes=self.mutations,
            settle_changes=self.watcher.settle if self.watcher is not None else None,
            mcp=self.mcp,
        )

    # ------------------------------------------------------------- the session

    @property
    def session(self) -> Session:
        if self._session is None:
            raise RuntimeError("the headless session is not open (use `async with`)")
        return self._session

    @property
    def agent(self) -> Any:
        return self.session.agent

    @property
    def planner(self) -> Any:
        return self.session.planner

    @property
    def flow(self) -> Any:
        return self.session.flow

    @property
    def gates(self) -> Any:
        return self.session.gates

    async def _open_session(self) -> Session:
        store = await self.manager.open_store()
        if self.manager.store_error is not None:
            self._report(f"sessions are not stored: {self.manager.store_error}")
        if self.resume is None:
            return self.manager.new(SessionSpec(mode=self.mode, model=self.model))
        if store is None:
            raise ConfigError(f"cannot resume {self.resume}: there is no session store")
        found = await self.manager.load(self.resume)
        if found is None:
            raise ConfigError(f"no stored session {self.resume!r} in {store.path}")
        return found

    # ------------------------------------------------------------- plumbing

    def analyzers_line(self) -> str:
        """``analyzers: ruff 0.x, basedpyright 1.x``, or why there are none,
        for the terminal at start."""
        if not self.config.gates.analyzer.enabled:
            return "analyzers: off (gates.analyzer.enabled is false)"
        return f"analyzers: {self.pool.describe()}"

    def _diagnostics_changed(self, paths: list[str]) -> None:
        self.diagnostics.notify_diagnostics_changed(paths)

    def _report(self, message: str) -> None:
        self.reports.append(message)
        log.warning("%s", message)

    def _preview_event(self, event: Event) -> None:
        for listener in list(self.preview_listeners):
            listener(event)

    def _spawn(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        if self._tg is None:
            raise RuntimeError("the headless session is not running (use `async with`)")
        self._tg.start_soon(fn)

    def _external_change(self, paths: tuple[str, ...]) -> None:
        # The preview's own files (its log, its listed outputs) are no change.
        paths = tuple(self.preview.without_outputs(paths))
        if not paths:
            return
        mutation: Mutation = self.disk.note_external_change(paths)
        self.mutations.record(mutation)

    # ------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> HeadlessSession:
        self._stack = AsyncExitStack()
        await self._stack.__aenter__()
        try:
            self._session = await self._open_session()
            self._stack.callback(self.manager.close)
            self._stack.push_async_callback(self.mcp.aclose)
            await self.pool.start()
            self._stack.push_async_callback(self.pool.stop)
            if self.pool.analyzers:
                # The baseline: every analyzer says it is done, not its first publish.
                if not await self.pool.wait_initial(BASELINE_LIMIT_S):
                    self._report(
                        f"the analyzers did not finish their baseline within {BASELINE_LIMIT_S:g} s"
                    )
            self._tg = await self._stack.enter_async_context(anyio.create_task_group())
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
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        assert self._stack is not None
        await self._stack.__aexit__(None, None, None)

    # ------------------------------------------------------------------ runs

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        """Every event of the session (the agent's, the planner's and the
        plan's) and the preview's."""
        off = self.session.subscribe(listener)
        self.preview_listeners.append(listener)

        def unsubscribe() -> None:
            off()
            if listener in self.preview_listeners:
                self.preview_listeners.remove(listener)

        return unsubscribe

    async def prompt(self, text: str) -> RunResult:
        """One run: a new task, or the answer to the question the session
        waits on."""
        return await self.manager.run_prompt(self.session, text)
