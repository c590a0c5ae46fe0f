"""What a host gives the session assembly (:class:`SessionPorts`) and what
one session is built for (:class:`SessionSpec`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from rein.bring.hook_trust import HookTrustPorts
    from rein.flows.plan_act import PlanSnapshot
    from rein.harness import HarnessConfig, Message
    from rein.harness.gating.gates import Gate
    from rein.harness.generations import MutationLog
    from rein.harness.navigation_ports import Navigator
    from rein.harness.ports import (
        ApprovalRuleBook,
        Approver,
        CommandExecutor,
        CommandRunner,
        DiagnosticsSource,
        Model,
        UserChannel,
        Workspace,
    )
    from rein.mcp.manager import McpManager
    from rein.process.kept import KeptSandbox
    from rein.providers.config import ModelConfig

__all__ = ["Mode", "SessionPorts", "SessionSpec"]

Mode = Literal["agent", "plan", "explain"]
MODES: tuple[Mode, ...] = ("agent", "plan", "explain")


@dataclass(slots=True)
class SessionPorts:
    """The host's side of a session. Every field is host-neutral: the
    language server passes its editor adapters, ``rein run`` the disk and
    its analyzer pool."""

    #: The workspace folder (bootstrap context, project instructions).
    root: Path
    #: Every change goes through it and lands in the mutation log.
    workspace: Workspace
    #: Settled diagnostics for a generation (the analyzer gate's source).
    diagnostics: DiagnosticsSource
    #: Runs the gates' commands (installs, the runtime command, custom gates).
    runner: CommandRunner
    #: The approver of one session (``rein/confirm``, a terminal); None:
    #: nobody can approve, "ask" calls are refused.
    approver: Callable[[str], Approver | None]
    #: The person's channel for one session (None: no one can answer).
    user: Callable[[str], UserChannel | None]
    #: The preview gates of a new session (empty when the preview is off).
    preview_gates: Callable[[], list[Gate]] = lambda: []
    #: Makes the model of a new session from the ``model`` configuration.
    model_factory: Callable[[ModelConfig], Model] | None = None
    #: The log of every workspace change (a run's record is fed from it).
    #: None: the workspace's own log when it is a TrackedWorkspace.
    changes: MutationLog | None = None
    #: Returns once every change written to disk before the call has been
    #: recorded (the disk watcher's probe); run_command awaits it after its
    #: process exits, so what the process wrote counts for the run.
    settle_changes: Callable[[], Awaitable[None]] | None = None
    #: The workspace's MCP servers (one :class:`rein.mcp.manager.McpManager`
    #: shared by the host's sessions); None: no MCP tools.
    mcp: McpManager | None = None
    #: Where ``run_command`` runs the commands of one session (``rein acp``:
    #: the client's terminal when it offers one); None: locally.
    commands: Callable[[str], CommandExecutor | None] = lambda session_id: None
    #: The approval rules of one session ("always allow": its own and the
    #: workspace's); None: no rules are kept, the person is always asked.
    approval_rules: Callable[[str], ApprovalRuleBook | None] = lambda session_id: None
    #: Hooks in Claude Code's format (:mod:`rein.bring.hooks_adapter`): how
    #: the person allows a workspace's hooks and where that is remembered;
    #: None: no such hook runs in this host's sessions.
    hooks: HookTrustPorts | None = None
    #: The person's home folder (``~/.claude/settings.json``); None: not read.
    home: Path | None = field(default_factory=Path.home)
    #: Answers the navigation tools (the editor's providers, the analyzer
    #: pool's servers); None: the tools are not offered.
    navigator: Navigator | None = None
    #: Runs the dependency installs (``sandbox.also: ["install"]`` gives
    #: them a sandbox of their own); None: :attr:`runner`.
    install_runner: CommandRunner | None = None
    #: Whether the gates' commands run in the OS sandbox now
    #: (``sandbox.also: ["gates"]`` and a sandbox that works; read at every
    #: run): the tests gate's runs then write only their shadow's folder.
    gates_sandboxed: Callable[[], bool] = lambda: False
    #: The gates' sandbox: the tests gate's warm pytest starts in it when
    #: the gates run in one (and again when that changes). None: never.
    gates_sandbox: KeptSandbox | None = None


@dataclass(slots=True)
class SessionSpec:
    """What one session is: its mode and identity, and for a stored session
    the transcripts it resumes from."""

    mode: Mode = "agent"
    title: str = ""
    origin: str = "chat"
    session_id: str | None = None
    #: Replaces the configuration's ``harness`` section (auto-repair budget).
    harness: HarnessConfig | None = None
    #: Replaces the model made from the configuration (tests, embedders).
    model: Model | None = None
    messages: Sequence[Message] = ()
    waiting_for: str | None = None
    #: True when the session is already in the store.
    persisted: bool = False
    planner_messages: Sequence[Message] = ()
    plan_snapshot: PlanSnapshot | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: Hosts this session's sandboxed commands may reach besides
    #: ``sandbox.network`` (``rein run --allow-host``, ``rein/newSession``'s
    #: ``allowHosts``); no other session sees them.
    allow_hosts: tuple[str, ...] = ()
