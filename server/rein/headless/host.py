"""A headless session: everything ``rein run`` and ``rein demo`` need, wired.

Disk workspace + mutation log + file watcher + analyzer pool + diagnostics
and dependency coordinators + gates + tools + the Agent. Use it as an async
context manager; it starts the analyzers and stops every process it started.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.abc

from rein.config import ReinConfig
from rein.harness import Agent, Event, RunResult, UserMessage
from rein.harness.coordinators import DependencyCoordinator, DiagnosticsCoordinator
from rein.harness.gates import AnalyzerGate, CommandGate, DependencyGate, Gate, GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.plan_act import PlanActFlow, planner_system_prompt, toolkit_overview
from rein.harness.ports import Approver, Model, ModelOptions, Mutation, UserChannel
from rein.harness.preview import PreviewCoordinator
from rein.harness.preview_gates import preview_gates
from rein.harness.prompts import build_system_prompt
from rein.harness.tools import ToolEnvironment
from rein.headless.analyzers import DEFAULT_ANALYZERS, AnalyzerPool, AnalyzerSpec
from rein.headless.commands import SubprocessRunner
from rein.headless.disk_workspace import DiskWorkspace
from rein.headless.preview_process import SubprocessPreviewFactory
from rein.headless.watcher import DiskWatcher
from rein.tools import bootstrap
from rein.tools.registry import default_tools, tool_sections

__all__ = ["HeadlessSession"]

log = logging.getLogger(__name__)


class _AllowAll:
    async def confirm(self, request: Any) -> bool:
        return True


class HeadlessSession:
    def __init__(
        self,
        root: str | Path,
        model: Model,
        config: ReinConfig | None = None,
        *,
        analyzers: Sequence[AnalyzerSpec] = DEFAULT_ANALYZERS,
        approver: Approver | None = None,
        user: UserChannel | None = None,
        mode: Literal["agent", "plan", "explain"] = "agent",
        watch: bool = True,
    ) -> None:
        self.root = Path(root).resolve()
        self.config = config or ReinConfig()
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
        gates: list[Gate] = []
        dependencies = None
        if gates_config.dependencies.enabled and gates_config.dependencies.commands:
            dependencies = DependencyCoordinator(
                self.runner,
                gates_config.dependencies.commands,
                timeout_s=gates_config.dependencies.timeout_ms / 1000,
            )
            gates.append(DependencyGate(dependencies))
        if gates_config.analyzer.enabled:
            gates.append(AnalyzerGate(self.diagnostics, gates_config.analyzer.severity))
        #: Preview events outside a run go to these listeners.
        self.preview_listeners: list[Callable[[Event], None]] = []
        self.preview = PreviewCoordinator(
            SubprocessPreviewFactory(str(self.root)),
            gates_config.preview,
            emit=self._preview_event,
            spawn=self._spawn,
        )
        if gates_config.preview.enabled:
            gates.extend(preview_gates(self.preview))
        if gates_config.runtime.command:
            gates.append(
                CommandGate(
                    "runtime",
                    gates_config.runtime.command,
                    self.runner,
                    gates_config.runtime.timeout_ms / 1000,
                )
            )
        for custom in gates_config.custom:
            gates.append(
                CommandGate(custom.name, custom.command, self.runner, custom.timeout_ms / 1000)
            )
        self.gates = GatePipeline(gates, dependencies=dependencies)
        settings = self.config.tool_settings()
        tools = default_tools(settings, read_only=mode == "explain")
        system = build_system_prompt(
            tools.names(), tool_sections(tools), mode, bootstrap.project_instructions(self.root)
        )
        self.agent = Agent(
            model,
            tools=tools,
            config=self.config.harness,
            system_prompt=system,
            env=ToolEnvironment(
                workspace=self.workspace,
                diagnostics=self.diagnostics,
                approver=approver or _AllowAll(),
                user=user,
                settings=settings,
                settle_changes=self.watcher.settle if self.watcher is not None else None,
            ),
            gates=None if mode == "plan" else self.gates,
        )
        #: Plan mode: the plan-act flow over a planner and this agent as executor.
        self.flow: PlanActFlow | None = None
        if mode == "plan":
            planner = Agent(
                model,
                config=self.config.harness,
                system_prompt=planner_system_prompt(toolkit_overview(tools)),
                options=ModelOptions(tool_choice="required"),
            )
            self.planner = planner
            self.flow = PlanActFlow(planner, self.agent, self._flow_event, gates=self.gates)
        self.flow_listeners: list[Callable[[Event], None]] = []
        self.reports: list[str] = []
        self._stack: AsyncExitStack | None = None
        self._tg: anyio.abc.TaskGroup | None = None

    # ------------------------------------------------------------- plumbing

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
        mutation: Mutation = self.disk.note_external_change(paths)
        self.mutations.record(mutation)

    # ------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> HeadlessSession:
        self._stack = AsyncExitStack()
        await self._stack.__aenter__()
        await self.pool.start()
        self._stack.push_async_callback(self.pool.stop)
        if self.pool.analyzers:
            if not await self.pool.wait_initial(60):
                self._report("the analyzers did not publish a baseline within 60 s")
        self._tg = await self._stack.enter_async_context(anyio.create_task_group())
        if self.watcher is not None:
            self._tg.start_soon(self.watcher.run)
            await self.watcher.ready.wait()
            self._stack.callback(self.watcher.stop)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.preview.shutdown()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        assert self._stack is not None
        await self._stack.__aexit__(None, None, None)

    # ------------------------------------------------------------------ runs

    def subscribe(self, listener: Callable[[Event], None]) -> None:
        """Every event of the session: the agent's, the planner's and the
        plan's, and the preview's."""
        self.agent.subscribe(listener)
        if self.flow is not None:
            self.planner.subscribe(listener)
            self.flow_listeners.append(listener)
        self.preview_listeners.append(listener)

    def _flow_event(self, event: Event) -> None:
        for listener in list(self.flow_listeners):
            listener(event)

    async def prompt(self, text: str) -> RunResult:
        if self.flow is not None:
            context = bootstrap.bootstrap_message(self.root) if not self.agent.messages else ""
            return await self.flow.run(f"{context}\n\n{text}" if context else text)
        messages = []
        if not self.agent.messages:
            messages.append(
                UserMessage(content=bootstrap.bootstrap_message(self.root), origin="bootstrap")
            )
        messages.append(UserMessage(content=text))
        return await self.agent.prompt_messages(messages)
