"""The headless host: everything ``rein run``, ``rein demo`` and the evals
need, one session over a :class:`~rein.hosting.workspace_host.WorkspaceHost`.

The workspace host has the ports (disk workspace + mutation log + file
watcher + analyzer pool + diagnostics coordinator + preview + the session
manager and its store); the session itself (agents, planner and flow, gates,
tools with ``task``, prompts) comes from the same assembly as the language
server's, and with a ``storage`` folder it lives in the same SQLite store
(``rein sessions`` lists it, ``rein run --resume`` continues it). Use it as
an async context manager; it starts the analyzers and stops every process
it started.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from rein.bring.hook_trust import HookTrustPorts
from rein.config import ReinConfig
from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.analyzers import AnalyzerPool
from rein.disk.disk_workspace import DiskWorkspace
from rein.disk.watcher import DiskWatcher
from rein.harness import Event, RunResult
from rein.harness.errors import ConfigError
from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import ApprovalRequest, Approver, Model, UserChannel
from rein.hosting.workspace_host import BASELINE_LIMIT_S, WorkspaceHost
from rein.mcp.config import McpConfigPorts
from rein.mcp.manager import McpManager
from rein.preview.coordinator import PreviewCoordinator
from rein.process.runner import SubprocessRunner
from rein.session import Mode, Session, SessionManager, SessionPorts, SessionSpec

__all__ = ["BASELINE_LIMIT_S", "ApproveAll", "HeadlessSession"]


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

    ``session_id``: the id of a new session (None: a fresh one).

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
        analyzers: Sequence[AnalyzerSpec] | None = None,
        approver: Approver | None = None,
        user: UserChannel | None = None,
        mode: Mode = "agent",
        watch: bool = True,
        storage: str | Path | None = None,
        resume: str | None = None,
        mcp_ports: McpConfigPorts | None = None,
        hook_ports: HookTrustPorts | None = None,
        session_id: str | None = None,
        allow_hosts: tuple[str, ...] = (),
    ) -> None:
        self.model = model
        #: Hosts the new session's sandboxed commands may reach besides
        #: ``sandbox.network`` (``rein run --allow-host``).
        self.allow_hosts = allow_hosts
        self.mode = mode
        self.resume = resume
        #: A new session's id chosen by the caller (an isolated run names
        #: its copy after it); None: a fresh one.
        self.session_id = session_id
        #: The folder's ports and the session manager.
        self.host = WorkspaceHost(
            root,
            config or ReinConfig(),
            lambda _config: model,
            analyzers=analyzers,
            approver=lambda session_id: approver,
            user=lambda session_id: user,
            watch=watch,
            storage=storage,
            mcp_ports=mcp_ports,
            hook_ports=hook_ports,
        )
        self._session: Session | None = None

    # ------------------------------------------------- the host's parts, named

    @property
    def root(self) -> Path:
        return self.host.root

    @property
    def config(self) -> ReinConfig:
        return self.host.config

    @property
    def mutations(self) -> MutationLog:
        return self.host.mutations

    @property
    def disk(self) -> DiskWorkspace:
        return self.host.disk

    @property
    def workspace(self) -> TrackedWorkspace:
        return self.host.workspace

    @property
    def runner(self) -> SubprocessRunner:
        return self.host.runner

    @property
    def pool(self) -> AnalyzerPool:
        return self.host.pool

    @property
    def diagnostics(self) -> DiagnosticsCoordinator:
        return self.host.diagnostics

    @property
    def watcher(self) -> DiskWatcher | None:
        return self.host.watcher

    @property
    def preview(self) -> PreviewCoordinator:
        return self.host.preview

    @property
    def manager(self) -> SessionManager:
        return self.host.manager

    @property
    def mcp(self) -> McpManager:
        return self.host.mcp

    @property
    def reports(self) -> list[str]:
        return self.host.reports

    @property
    def preview_listeners(self) -> list[Callable[[Event], None]]:
        return self.host.preview_listeners

    def ports(self) -> SessionPorts:
        return self.host.ports()

    def analyzers_line(self) -> str:
        return self.host.analyzers_line()

    async def analyzers_started(self) -> None:
        await self.host.analyzers_started()

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
        if store is not None:
            # Another process holding the store's lock stops the run before
            # it starts (StoreError naming the holder), not at its first write.
            await store.check_writable()
        if self.resume is None:
            return self.manager.new(
                SessionSpec(
                    mode=self.mode,
                    model=self.model,
                    session_id=self.session_id,
                    allow_hosts=self.allow_hosts,
                )
            )
        if store is None:
            raise ConfigError(f"cannot resume {self.resume}: there is no session store")
        record = await store.get_session(self.resume)
        if record is not None and record.workspace and record.workspace != str(self.root):
            if not await anyio.Path(record.workspace).is_dir():
                # An isolated run's copy, removed once applied or discarded.
                raise ConfigError(
                    f"session {self.resume} worked on {record.workspace}, which is gone "
                    "(an isolated run's copy is removed once applied, kept as a branch or "
                    "discarded): it cannot be resumed; start a new session"
                )
            # Its transcript and checkpoints are of that folder's files.
            raise ConfigError(
                f"session {self.resume} works on {record.workspace}, not {self.root}: "
                f"resume it with -w {shlex.quote(record.workspace)}"
            )
        found = await self.manager.load(self.resume)
        if found is None:
            raise ConfigError(f"no stored session {self.resume!r} in {store.path}")
        return found

    # ------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> HeadlessSession:
        # The session first (a resume of an unknown id fails before any
        # analyzer starts), then the host's processes.
        try:
            self._session = await self._open_session()
        except BaseException:
            self.manager.close()
            raise
        await self.host.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None and (exc[0] is None or isinstance(exc[1], Exception)):
            # The run is over: its SessionEnd hooks ("other", as Claude
            # Code's non-interactive runs), bounded; not on an interrupt.
            from rein.session.ending import end_sessions

            await end_sessions([self._session], "other")
        await self.host.__aexit__(*exc)

    # ------------------------------------------------------------------ runs

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        """Every event of the session (the agent's, the planner's and the
        plan's) and the preview's."""
        off = self.session.subscribe(listener)
        off_preview = self.host.subscribe_preview(listener)

        def unsubscribe() -> None:
            off()
            off_preview()

        return unsubscribe

    async def prompt(self, text: str) -> RunResult:
        """One run: a new task, or the answer to the question the session
        waits on."""
        return await self.manager.run_prompt(self.session, text)
