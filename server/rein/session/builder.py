"""Build one session from a configuration and the host's ports.

The only place agents, the planner, the plan-act flow, the gates, the tools
and the system prompts are put together: the language server and ``rein
run`` both call :func:`build_session`, so a session has the same tools,
gates and prompts whichever host runs it.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from rein.analysis.gate import AnalyzerGate
from rein.bring.hook_session import attach_hooks
from rein.bring.skills import person_texts
from rein.checkpoints.capture import CheckpointCapture
from rein.checkpoints.model import CheckpointStore
from rein.checkpoints.review import Reviewer
from rein.config import ReinConfig
from rein.flows.plan_act import PlanActFlow, PlanSnapshot
from rein.flows.plan_tools import complete_step_tool, planner_system_prompt, toolkit_overview
from rein.flows.subagents import SubagentSpawner
from rein.harness import Agent, UserMessage
from rein.harness.config import GatesConfig, TestsGateConfig
from rein.harness.cost.pricing import PriceTable
from rein.harness.errors import ConfigError
from rein.harness.events import McpServerState
from rein.harness.gating.dependencies import DependencyCoordinator
from rein.harness.gating.gate_types import InstallState, PriorTexts
from rein.harness.gating.gates import CommandGate, DependencyGate, Gate, GatePipeline
from rein.harness.generations import MutationLog, RecordingWorkspace, TrackedWorkspace
from rein.harness.hooks import TurnInfo, TurnOverrides
from rein.harness.navigation_ports import Navigator
from rein.harness.ports import (
    AnnouncingWorkspace,
    CommandRunner,
    DiagnosticsSource,
    ModelOptions,
    MultiFileWorkspace,
    Persistence,
)
from rein.harness.prompts import Role, build_system_prompt
from rein.harness.tools import Tool, ToolEnvironment, ToolRegistry
from rein.mcp.manager import McpManager, ServerStatus
from rein.mcp.offer import McpOffer
from rein.process.installers import install_detector, python_environment
from rein.process.kept import KeptProcessLauncher, KeptSandbox
from rein.sandboxing import command_sandbox
from rein.session.ports import SessionPorts, SessionSpec
from rein.session.session import Session, new_session_id
from rein.session.setup_files import agent_kinds, skill_tool, user_home
from rein.store.memory_keys import EXECUTOR_MEMORY, MAIN_MEMORY, PLANNER_MEMORY, memory_key
from rein.testgate.detect import finds_pytest_tests, has_xdist
from rein.testgate.gate import TestGate
from rein.tools import bootstrap
from rein.tools.registry import (
    NAVIGATION_READ_TOOLS,
    READ_ONLY_TOOLS,
    default_tools,
    navigation_tools,
)
from rein.tools.settings import DEFAULT_DENY_GLOBS, DEFAULT_INSTRUCTION_FILES, DEFAULT_TOOL_SETTINGS
from rein.tools.task import TaskTool
from rein.tools.toolkit import TOOLKITS_KEY

__all__ = [
    "EXECUTOR_MEMORY",
    "MAIN_MEMORY",
    "PLANNER_MEMORY",
    "PersistenceFor",
    "announcing",
    "attach_checkpoints",
    "attach_mcp",
    "bootstrap_messages",
    "build_gates",
    "build_session",
    "memory_key",
    "tests_gate",
]

#: The persistence of one memory of a session: (memory key, already stored?).
PersistenceFor = Callable[[str, bool], Persistence | None]

#: The role of a session's agent in each mode (plan mode's is the executor).
ROLE_OF_MODE: dict[str, Role] = {"agent": "agent", "plan": "executor", "explain": "explainer"}


def _offered(tools: ToolRegistry, mode: str) -> list[Tool[Any]]:
    """Every tool the agent's model receives: the session's, and in plan
    mode the executor's ``complete_step``."""
    offered = tools.tools()
    return [*offered, complete_step_tool()] if mode == "plan" else offered


def build_gates(
    config: GatesConfig,
    diagnostics: DiagnosticsSource,
    runner: CommandRunner,
    preview_gates: list[Gate],
    root: Path | None = None,
    *,
    install_runner: CommandRunner | None = None,
    gates_sandboxed: Callable[[], bool] = lambda: False,
    gates_sandbox: KeptSandbox | None = None,
) -> GatePipeline:
    """The gates in their order: dependencies, analyzer, tests, the
    preview's, the runtime command, then the custom command gates. Installs run for the
    configured commands, else (given the workspace's ``root``) with the
    project's own tooling (:func:`rein.process.installers.detect_install_command`),
    through ``install_runner`` when given. ``gates_sandboxed`` says whether
    the gates' commands run in the OS sandbox now; the tests gate's warm
    pytest starts in ``gates_sandbox`` then (its forks run in it)."""
    gates: list[Gate] = []
    dependencies = None
    if config.dependencies.enabled and (config.dependencies.commands or root is not None):
        dependencies = DependencyCoordinator(
            install_runner or runner,
            config.dependencies.commands,
            timeout_s=config.dependencies.timeout_ms / 1000,
            detect=install_detector(root) if root is not None else None,
        )
        gates.append(DependencyGate(dependencies, only_when_owed=not config.dependencies.commands))
    if config.analyzer.enabled:
        gates.append(
            AnalyzerGate(
                diagnostics,
                config.analyzer.severity,
                dependencies=dependencies,
                settle_timeout_s=config.analyzer.settle_timeout_ms / 1000,
            )
        )
    tests = tests_gate(
        config.tests,
        diagnostics,
        runner,
        root,
        gates_sandboxed=gates_sandboxed,
        gates_sandbox=gates_sandbox,
        installs=dependencies,
    )
    if tests is not None:
        gates.append(tests)
    gates.extend(preview_gates)
    if config.runtime.command:
        gates.append(
            CommandGate("runtime", config.runtime.command, runner, config.runtime.timeout_ms / 1000)
        )
    for custom in config.custom:
        gates.append(CommandGate(custom.name, custom.command, runner, custom.timeout_ms / 1000))
    return GatePipeline(gates, dependencies=dependencies)


def tests_gate(
    config: TestsGateConfig,
    diagnostics: DiagnosticsSource,
    runner: CommandRunner,
    root: Path | None,
    *,
    gates_sandboxed: Callable[[], bool] = lambda: False,
    gates_sandbox: KeptSandbox | None = None,
    installs: InstallState | None = None,
) -> TestGate | None:
    """The tests gate when it is on: ``enabled: true``, or "auto" and the
    project has pytest tests (a custom ``command`` counts as tests). Its
    pytest is the project's environment's (``.venv``, ``venv``, the active
    one), else the interpreter running Rein. ``installs``: the dependency
    installs (no judgement ahead is taken across one)."""
    if root is None or config.enabled is False:
        return None
    if config.enabled == "auto" and config.command is None and not finds_pytest_tests(root):
        return None
    environment = python_environment(root)
    python = str(environment) if environment is not None else sys.executable
    return TestGate(
        root,
        runner,
        config,
        python=python,
        prior_texts=diagnostics if isinstance(diagnostics, PriorTexts) else None,
        xdist=has_xdist(python),
        launcher=KeptProcessLauncher(str(root), gates_sandbox),
        sandboxed=gates_sandboxed,
        installs=installs,
    )


def build_session(
    config: ReinConfig,
    ports: SessionPorts,
    spec: SessionSpec,
    *,
    persistence_for: PersistenceFor | None = None,
    save_plan: Callable[[str, PlanSnapshot], object] | None = None,
    checkpoints: CheckpointStore | None = None,
    on_checkpoint_error: Callable[[str], None] | None = None,
    navigator: Navigator | None = None,
) -> Session:
    """One session: tools (with ``task`` outside explain mode), gates
    (none in explain mode; in plan mode they run after the last step),
    the agent, and in plan mode the planner and the flow. With a
    ``checkpoints`` store (and ``checkpoints.enabled``) its runs' changes are
    captured there (:func:`attach_checkpoints`). With a ``navigator`` (else
    the host's, ``ports.navigator``) the navigation tools are offered
    (``rename_symbol`` outside explain mode), and subagents read with them."""
    ports = announcing(ports)
    mode = spec.mode
    session_id = spec.session_id or new_session_id()
    persist: PersistenceFor = persistence_for or (lambda key, stored: None)
    settings = config.tool_settings()
    tools = default_tools(settings, read_only=mode == "explain")
    skills = skill_tool(config, ports.root)
    if skills is not None:
        if skills.name in tools:
            raise ConfigError(
                f"{TOOLKITS_KEY}: a toolkit has a tool named {skills.name!r}, which the skills "
                "of this workspace need (turn them off with setup.skills: false)",
                TOOLKITS_KEY,
            )
        tools.register(skills)
    navigator = navigator if navigator is not None else ports.navigator
    if navigator is not None:
        for tool in navigation_tools(read_only=mode == "explain"):
            tools.register(tool)
    if spec.model is not None:
        model = spec.model
    elif ports.model_factory is not None:
        model = ports.model_factory(config.model)
    else:
        raise ValueError("build_session needs spec.model or ports.model_factory")
    harness = spec.harness or config.harness
    env = ToolEnvironment(
        workspace=ports.workspace,
        diagnostics=ports.diagnostics,
        approver=ports.approver(session_id),
        approval_rules=ports.approval_rules(session_id),
        user=ports.user(session_id),
        settings=settings,
        changes=ports.changes,
        settle_changes=ports.settle_changes,
        commands=ports.commands(session_id),
        sandbox=command_sandbox(str(ports.root), config.sandbox_settings(), spec.allow_hosts),
        navigator=navigator,
    )
    instructions = bootstrap.project_instructions(
        ports.root,
        settings.deny_globs,
        settings.instruction_files,
        user_home(config),
        settings.secret_files,
    )
    if (
        mode != "explain"
        and "task" not in settings.disabled_tools
        and harness.subagent_max_depth > 0
    ):
        env.subagents = SubagentSpawner(
            model,
            tools,
            env,
            config=harness,
            # Built from the tools each child is offered.
            system_prompt=lambda offered: build_system_prompt(
                offered.tools(), "subagent", instructions
            ),
            default_tools=(
                READ_ONLY_TOOLS if navigator is None else (*READ_ONLY_TOOLS, *NAVIGATION_READ_TOOLS)
            ),
            persistence_for=lambda child: persist(f"{child}:memory", True),
        )
        kinds = agent_kinds(config, ports.root, tools.names(), ports.model_factory)
        env.subagents.kinds = {kind.name: kind for kind in kinds}
        tools.register(TaskTool(kinds))
    gates = (
        None
        if mode == "explain"
        else build_gates(
            config.gates,
            ports.diagnostics,
            ports.runner,
            ports.preview_gates(),
            ports.root,
            install_runner=ports.install_runner,
            gates_sandboxed=ports.gates_sandboxed,
            gates_sandbox=ports.gates_sandbox,
        )
    )
    system = build_system_prompt(_offered(tools, mode), ROLE_OF_MODE[mode], instructions)
    agent = Agent(
        model,
        tools=tools,
        config=harness,
        system_prompt=system,
        env=env,
        gates=None if mode == "plan" else gates,
        persistence=persist(memory_key(mode), spec.persisted),
        messages=spec.messages,
        waiting_for=spec.waiting_for,
    )
    agent.prices = PriceTable(config.model.prices)
    if skills is not None:
        # A skill only the person starts is served once their message started it.
        skills.person_texts = lambda: person_texts(agent.messages)
    if isinstance(env.subagents, SubagentSpawner):
        # A child takes the agent's model when it starts: a model picked for
        # the session (rein/setModel, ACP's model select) reaches later children.
        env.subagents.model_source = lambda: agent.model
    session = Session(
        id=session_id,
        agent=agent,
        title=spec.title[:80],
        mode=mode,
        origin=spec.origin,
        tools=tools,
        gates=gates,
        system_prompt=system,
    )
    if mode == "plan":
        session.planner_prompt = planner_system_prompt(toolkit_overview(tools), instructions)
        planner = Agent(
            model,
            config=harness,
            system_prompt=session.planner_prompt,
            options=ModelOptions(tool_choice="required"),
            persistence=persist(PLANNER_MEMORY, spec.persisted),
            messages=spec.planner_messages,
        )
        planner.prices = agent.prices
        session.planner = planner

        async def save(snapshot: PlanSnapshot) -> None:
            if save_plan is not None:
                await save_plan(session_id, snapshot)  # type: ignore[misc]

        session.flow = PlanActFlow(
            planner,
            agent,
            session.emit_flow,
            gates=gates,
            save_state=save,
            snapshot=spec.plan_snapshot,
            project_instructions=instructions,
        )
    if checkpoints is not None and config.checkpoints.enabled:
        attach_checkpoints(session, ports, checkpoints, config, on_checkpoint_error)
    # Explain mode is read-only: an MCP tool may change anything, so none is offered.
    if ports.mcp is not None and ports.mcp.configured and mode != "explain":
        attach_mcp(session, ports.mcp, config, harness.context_window, instructions)
    if ports.hooks is not None:
        attach_hooks(session, ports.root, config, ports.hooks, ports.home)
    return session


def attach_mcp(
    session: Session,
    manager: McpManager,
    config: ReinConfig,
    window: int,
    instructions: str | None,
) -> McpOffer:
    """Offer the MCP servers' tools in ``session``: the servers start before
    its first run, its tool set follows their lists (before each run and
    each turn), the system prompt is rebuilt to name what is offered, and
    the servers' state changes are the session's ``mcp_server_state``
    events."""
    agent = session.agent
    role = ROLE_OF_MODE[session.mode]

    def rebuild_prompt() -> None:
        system = build_system_prompt(_offered(agent.tools, session.mode), role, instructions)
        agent.system_prompt = session.system_prompt = system
        if session.planner is not None:
            # The planner plans with what the executor has, MCP tools included.
            overview = toolkit_overview(agent.tools)
            planner_prompt = planner_system_prompt(overview, instructions)
            session.planner.system_prompt = session.planner_prompt = planner_prompt

    offer = McpOffer(
        manager,
        agent.tools,
        window=window,
        max_share=config.mcp.max_tool_share,
        lazy=config.mcp.lazy_tools,
        emit=session.emit_flow,
        on_change=rebuild_prompt,
    )
    session.before_run.append(offer.before_run)
    previous = agent.hooks.prepare_next_turn

    async def before_turn(info: TurnInfo) -> TurnOverrides | None:
        changed = await offer.before_turn(info)
        result = previous(info) if previous is not None else None
        overrides = await result if inspect.isawaitable(result) else result
        if not changed:
            return overrides
        # The tools changed mid-run: the prompt that names them changes too.
        return replace(overrides or TurnOverrides(), system=agent.system_prompt)

    agent.prepare_next_turn = before_turn

    def on_state(status: ServerStatus) -> None:
        session.emit_flow(
            McpServerState(
                server=status.spec.name,
                state=status.state,
                tools=len(status.tools),
                error=status.error,
                source=status.spec.source,
            )
        )

    session.closers.append(manager.subscribe(on_state))
    session.mcp = offer
    return offer


def announcing(ports: SessionPorts) -> SessionPorts:
    """``ports`` whose workspace announces every change (its change hooks)
    and records it in the mutation log: a workspace that does not
    (a :class:`~rein.harness.ports.Workspace` of one's own) goes through a
    :class:`~rein.harness.generations.TrackedWorkspace`, over ``changes``
    or a log of its own, so no checkpoint or gate misses its changes."""
    workspace, changes = _tracked(ports)
    if workspace is ports.workspace and changes is ports.changes:
        return ports
    return replace(ports, workspace=workspace, changes=changes)


def _tracked(ports: SessionPorts) -> tuple[AnnouncingWorkspace, MutationLog]:
    workspace = ports.workspace
    if isinstance(workspace, RecordingWorkspace) and isinstance(workspace, MultiFileWorkspace):
        return workspace, ports.changes if ports.changes is not None else workspace.mutations
    changes = ports.changes if ports.changes is not None else MutationLog()
    return TrackedWorkspace(workspace, changes), changes


def attach_checkpoints(
    session: Session,
    ports: SessionPorts,
    store: CheckpointStore,
    config: ReinConfig,
    on_error: Callable[[str], None] | None = None,
) -> CheckpointCapture:
    """Capture ``session``'s runs' changes into ``store``: hooked to the
    host's workspace and mutation log, fed the session's events, undone by
    :meth:`Session.close`."""
    workspace, changes = _tracked(ports)
    secrets = config.tool_settings().secret_files
    capture = CheckpointCapture(
        store,
        workspace,
        session.id,
        mutations=changes,
        max_file_bytes=config.checkpoints.max_file_kb * 1024,
        title=lambda: session.title,
        on_error=on_error,
        emit=session.emit_flow,
        secret=lambda path: secrets.matched_by(path) is not None,
    )
    session.closers.append(capture.attach())
    session.closers.append(session.subscribe(capture.on_event))
    session.checkpoints = store
    session.capture = capture
    session.reviewer = Reviewer(store, workspace, session.id, emit=session.emit_flow)
    session.review_edits = config.tool_settings().approval.review
    return capture


def bootstrap_messages(session: Session, root: object, text: str) -> list[UserMessage]:
    """The messages a prompt adds: the bootstrap context first in a fresh
    session (not when the text answers a waiting question), then the text."""
    messages: list[UserMessage] = []
    if session.fresh and session.agent.waiting_for is None:
        messages.append(
            UserMessage(
                content=bootstrap.bootstrap_message(
                    root,  # type: ignore[arg-type]
                    deny_globs=_deny_globs(session),
                    files=_instruction_files(session),
                    secret_files=(session.agent.env.settings or DEFAULT_TOOL_SETTINGS).secret_files,
                ),
                origin="bootstrap",
            )
        )
    messages.append(UserMessage(content=text))
    return messages


def _instruction_files(session: Session) -> tuple[str, ...]:
    settings = session.agent.env.settings
    return tuple(settings.instruction_files) if settings is not None else DEFAULT_INSTRUCTION_FILES


def _deny_globs(session: Session) -> tuple[str, ...]:
    settings = session.agent.env.settings
    return tuple(settings.deny_globs) if settings is not None else DEFAULT_DENY_GLOBS
