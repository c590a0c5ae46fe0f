"""The Rein language server's state: configuration, the editor adapters, the
coordinators and the sessions. Handlers live in :mod:`rein.lsp.features`;
this module builds agents and runs them."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from rein import __version__
from rein.config import ReinConfig, load_config
from rein.harness import Agent, HarnessConfig, Message, RunResult, Usage, UserMessage
from rein.harness.agent import repair_transcript
from rein.harness.coordinators import DependencyCoordinator, DiagnosticsCoordinator
from rein.harness.errors import ConfigError, StoreError
from rein.harness.events import AutoRepair
from rein.harness.gates import AnalyzerGate, CommandGate, DependencyGate, Gate, GatePipeline
from rein.harness.generations import MutationLog
from rein.harness.plan_act import (
    PlanActFlow,
    PlanSnapshot,
    planner_system_prompt,
    toolkit_overview,
)
from rein.harness.ports import Model, ModelOptions
from rein.harness.prompts import build_system_prompt
from rein.harness.subagents import SubagentSpawner
from rein.harness.tools import ToolEnvironment
from rein.headless.commands import SubprocessRunner
from rein.lsp._protocol import plain_dict_converter
from rein.lsp.editor import (
    EditorApprover,
    EditorDiagnostics,
    EditorUserChannel,
    EditorWorkspace,
    workspace_root,
)
from rein.lsp.preview import ServerPreview
from rein.lsp.sessions import EventStream, Session, new_session_id
from rein.providers import create_model
from rein.store import MAIN_MEMORY, SqliteStore, StorePersistence, default_storage_path
from rein.tools import bootstrap
from rein.tools.registry import READ_ONLY_TOOLS, default_tools, tool_sections
from rein.tools.task import TaskTool

__all__ = ["ReinServer"]

log = logging.getLogger(__name__)

Mode = Literal["agent", "plan", "explain"]
PLANNER_MEMORY = "planner:memory"


class ReinServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "rein",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Full,
            converter_factory=plain_dict_converter,
        )
        self.config = ReinConfig()
        self._init_options: dict[str, Any] = {}
        self._reported_config_errors: set[str] = set()
        self.sessions: dict[str, Session] = {}
        self.client_features: dict[str, bool] = {}
        self.mutations = MutationLog()
        self._adapters: tuple[EditorWorkspace, DiagnosticsCoordinator] | None = None
        #: Tests and embedders may replace how models are made.
        self.model_factory = create_model
        self.auto_repair: Any = None
        self._writes: set[asyncio.Future[Any]] = set()
        self.store: SqliteStore | None = None
        self.store_error: str | None = None
        self._store_tried = False
        #: The preview, one per server, shared by the sessions.
        self.preview = ServerPreview(self)

    # ---------------------------------------------------------- configuration

    def apply_configuration(self, data: Any, source: str) -> bool:
        """Validate and apply a ``rein`` section; on error report it once
        (naming the key) and keep the last good configuration."""
        merged = dict(self._init_options)
        if isinstance(data, dict):
            merged.update(data)
        try:
            config = load_config(merged, source)
        except ConfigError as exc:
            key = exc.key or str(exc)
            if key not in self._reported_config_errors:
                self._reported_config_errors.add(key)
                self.window_show_message(
                    lsp.ShowMessageParams(type=lsp.MessageType.Error, message=f"Rein: {exc}")
                )
            log.warning("%s; keeping the last good configuration", exc)
            return False
        self.config = config
        self._reported_config_errors.clear()
        return True

    def set_initialization_options(self, options: Any) -> None:
        if isinstance(options, dict):
            section = options.get("rein", options)
            self._init_options = dict(section) if isinstance(section, dict) else {}
            self.apply_configuration({}, "initializationOptions")

    # ----------------------------------------------------------------- store

    async def open_store(self) -> SqliteStore | None:
        """Open the session database once (``storagePath``, else the user
        data dir). On failure say so once and keep sessions in memory."""
        if self._store_tried:
            return self.store
        self._store_tried = True
        folder = self.config.storage_path or str(default_storage_path())
        try:
            self.store = SqliteStore.open(folder)
        except StoreError as exc:
            self.store_error = str(exc)
            self.window_show_message(
                lsp.ShowMessageParams(
                    type=lsp.MessageType.Error,
                    message=f"Rein: {exc}. Sessions are kept in memory only until the server restarts.",
                )
            )
            log.error("%s", exc)
            return None
        interrupted = await self.store.mark_interrupted()
        if interrupted:
            log.warning("sessions interrupted by the last exit: %s", ", ".join(interrupted))
        return self.store

    async def load_session(self, session_id: str) -> Session | None:
        """A session from the store, its transcript rolled back if a crash
        left tool calls without results."""
        if session_id in self.sessions:
            return self.sessions[session_id]
        store = await self.open_store()
        if store is None:
            return None
        record = await store.get_session(session_id)
        if record is None:
            return None
        mode: Mode = record.mode if record.mode in ("agent", "plan", "explain") else "agent"  # type: ignore[assignment]
        memory = "executor:memory" if mode == "plan" else MAIN_MEMORY
        messages = await self._load_memory(store, session_id, memory)
        state = await store.memory_state(session_id, memory)
        planner_messages: list[Message] = []
        snapshot = None
        if mode == "plan":
            planner_messages = await self._load_memory(store, session_id, PLANNER_MEMORY)
            saved = await store.memory_state(session_id, PLANNER_MEMORY)
            snapshot = PlanSnapshot.from_json(saved) if saved else None
        session = self.new_session(
            mode=mode,
            title=record.title,
            origin=record.origin,
            session_id=session_id,
            messages=messages,
            waiting_for=state.get("waiting_for"),
            persisted=True,
            planner_messages=planner_messages,
            plan_snapshot=snapshot,
        )
        session.status = record.status  # type: ignore[assignment]
        session.turns = record.turns
        session.usage = Usage(
            **{k: int(v) for k, v in record.usage.items() if k in Usage.model_fields}
        )
        session.updated_at = record.updated_at
        return session

    async def _load_memory(self, store: SqliteStore, session_id: str, memory: str) -> list[Message]:
        messages, added = repair_transcript(await store.load_messages(session_id, memory))
        if added:
            await store.replace_all(session_id, memory, messages)
        return messages

    # -------------------------------------------------------------- adapters

    @property
    def root(self) -> Path:
        return workspace_root(self).resolve()

    def adapters(self) -> tuple[EditorWorkspace, DiagnosticsCoordinator]:
        if self._adapters is None:
            workspace = EditorWorkspace(self, self.root, self.mutations)
            analyzer = self.config.gates.analyzer
            coordinator = DiagnosticsCoordinator(
                EditorDiagnostics(self, workspace),
                quiet_ms=analyzer.quiet_period_ms,
                max_wait_ms=analyzer.max_wait_ms,
            )
            self.mutations.subscribe(coordinator.notify_mutation)
            self._adapters = (workspace, coordinator)
        return self._adapters

    # ---------------------------------------------------------------- events

    def send_event(self, payload: dict[str, Any]) -> None:
        """Send one ``rein/event`` notification. The payload is plain JSON
        data already, so it is framed here directly instead of going through
        pygls's generic (cattrs) serialisation, which cost two thirds of the
        time per event."""
        writer = self.protocol.writer
        if writer is None:
            return
        body = json.dumps(
            {"jsonrpc": "2.0", "method": "rein/event", "params": payload}, separators=(",", ":")
        ).encode("utf-8")
        try:
            result = writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        except (BrokenPipeError, ConnectionError):
            log.warning("the client is gone; dropping rein/event")
            return
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)

    def emit_to(self, session: Session, event: Any) -> None:
        session.stream(event)

    # -------------------------------------------------------------- sessions

    def _persistence(
        self, session_id: str, memory_key: str, title: str, mode: str, origin: str, persisted: bool
    ) -> StorePersistence | None:
        if self.store is None:
            return None
        return StorePersistence(
            self.store,
            session_id,
            memory_key,
            title=title[:80],
            mode=mode,
            origin=origin,
            created=persisted,
        )

    def new_session(
        self,
        *,
        mode: Mode = "agent",
        title: str = "",
        origin: str = "chat",
        harness: HarnessConfig | None = None,
        model: Model | None = None,
        session_id: str | None = None,
        messages: Sequence[Message] = (),
        waiting_for: str | None = None,
        persisted: bool = False,
        planner_messages: Sequence[Message] = (),
        plan_snapshot: PlanSnapshot | None = None,
    ) -> Session:
        workspace, coordinator = self.adapters()
        config = self.config
        session_id = session_id or new_session_id()
        settings = config.tool_settings()
        tools = default_tools(settings, read_only=mode == "explain")
        model = model or self.model_factory(config.model)
        env = ToolEnvironment(
            workspace=workspace,
            diagnostics=coordinator,
            approver=EditorApprover(self, session_id),
            user=EditorUserChannel(self, session_id),
            settings=settings,
        )
        if mode != "explain":
            env.subagents = SubagentSpawner(
                model,
                tools,
                env,
                config=config.harness,
                system_prompt=build_system_prompt(
                    list(READ_ONLY_TOOLS), tool_sections(tools), "explain", None
                ),
                default_tools=READ_ONLY_TOOLS,
                persistence_for=lambda child: self._persistence(
                    session_id, f"{child}:memory", title, mode, origin, True
                ),
            )
            tools.register(TaskTool())
        gates = None if mode == "explain" else self._gates(coordinator)
        executor_key = "executor:memory" if mode == "plan" else MAIN_MEMORY
        system = build_system_prompt(
            tools.names(), tool_sections(tools), mode, bootstrap.project_instructions(self.root)
        )
        agent = Agent(
            model,
            tools=tools,
            config=harness or config.harness,
            system_prompt=system,
            env=env,
            gates=None if mode == "plan" else gates,
            persistence=self._persistence(session_id, executor_key, title, mode, origin, persisted),
            messages=messages,
            waiting_for=waiting_for,
        )
        planner: Agent | None = None
        if mode == "plan":
            planner = Agent(
                model,
                config=harness or config.harness,
                system_prompt=planner_system_prompt(toolkit_overview(tools)),
                options=ModelOptions(tool_choice="required"),
                persistence=self._persistence(
                    session_id, PLANNER_MEMORY, title, mode, origin, persisted
                ),
                messages=planner_messages,
            )
        holder: list[Session] = []
        stream = EventStream(
            session_id, self.send_event, lambda: holder[0].current_run_id if holder else None
        )
        session = Session(
            id=session_id, agent=agent, stream=stream, title=title[:80], mode=mode, origin=origin
        )
        holder.append(session)
        session.closers.append(agent.subscribe(stream))
        if planner is not None:
            session.planner = planner
            session.closers.append(planner.subscribe(stream))
            store = self.store

            async def save(snapshot: PlanSnapshot) -> None:
                if store is not None:
                    await store.set_memory_state(session_id, PLANNER_MEMORY, snapshot.to_json())

            session.flow = PlanActFlow(
                planner, agent, stream, gates=gates, save_state=save, snapshot=plan_snapshot
            )
        self.sessions[session_id] = session
        return session

    def _gates(self, coordinator: DiagnosticsCoordinator) -> GatePipeline:
        config = self.config.gates
        runner = SubprocessRunner(str(self.root))
        gates: list[Gate] = []
        dependencies = None
        if config.dependencies.enabled and config.dependencies.commands:
            dependencies = DependencyCoordinator(
                runner,
                config.dependencies.commands,
                timeout_s=config.dependencies.timeout_ms / 1000,
            )
            gates.append(DependencyGate(dependencies))
        if config.analyzer.enabled:
            gates.append(AnalyzerGate(coordinator, config.analyzer.severity))
        gates.extend(self.preview.gates())
        if config.runtime.command:
            gates.append(
                CommandGate(
                    "runtime", config.runtime.command, runner, config.runtime.timeout_ms / 1000
                )
            )
        for custom in config.custom:
            gates.append(CommandGate(custom.name, custom.command, runner, custom.timeout_ms / 1000))
        return GatePipeline(gates, dependencies=dependencies)

    def messages_for(self, session: Session, text: str) -> list[UserMessage]:
        messages = []
        planner = session.planner
        fresh = not session.agent.messages and (planner is None or not planner.messages)
        if fresh and session.agent.waiting_for is None:
            messages.append(
                UserMessage(content=bootstrap.bootstrap_message(self.root), origin="bootstrap")
            )
        messages.append(UserMessage(content=text))
        return messages

    async def run_prompt(self, session: Session, text: str) -> RunResult:
        if not session.title:
            session.title = text.strip().splitlines()[0][:80] if text.strip() else "session"
        messages = self.messages_for(session, text)
        store = self.store
        if store is not None:
            persistence = session.agent.persistence
            if isinstance(persistence, StorePersistence):
                await persistence.ensure_session()
            await store.set_status(session.id, "running")
        flow = session.flow
        if flow is not None:
            task = "\n\n".join(m.content for m in messages)
            result = await session.run(lambda: flow.run(task))
        else:
            result = await session.run(lambda: session.agent.prompt_messages(messages))
        session.turns += result.turns
        session.usage = session.usage + result.usage
        if store is not None:
            await store.set_status(
                session.id, result.status, turns=result.turns, usage=result.usage.model_dump()
            )
            memory = "executor:memory" if session.flow is not None else MAIN_MEMORY
            await store.set_memory_state(session.id, memory, {"waiting_for": result.waiting_for})
            await store.record_run(
                result.run_id,
                session.id,
                result.status,
                result.error,
                result.turns,
                result.usage.model_dump(),
            )
        return result

    def active_runs(self) -> list[Session]:
        return [s for s in self.sessions.values() if s.busy]

    def report_auto_repair(self, session: Session | None, event: AutoRepair) -> None:
        if session is not None:
            session.stream(event)
        else:
            self.send_event(
                {"sessionId": None, "runId": None, "seq": 0, "event": event.model_dump(mode="json")}
            )
