"""The loop's inputs and outputs: what a run works on (:class:`LoopContext`),
what a caller sets for one run (:class:`RunOptions`), how it is aborted
(:class:`RunControl`) and what it reports (:class:`RunResult`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final, Protocol, runtime_checkable

import anyio

from rein.harness.config import StuckToolConfig, ToolMisuseBreakerConfig
from rein.harness.conversation.context import ContextBudget
from rein.harness.conversation.relief import DEFAULT_RELIEF, OverWindowRelief
from rein.harness.cost.pricing import PriceTable
from rein.harness.events import Blocker, ContextShare, ModelRetry, RunStatus, Unverified
from rein.harness.gating.gates import GatePipeline
from rein.harness.hooks import Hooks
from rein.harness.messages import Message, Usage
from rein.harness.ports import ModelOptions
from rein.harness.run.run_record import RunMutation
from rein.harness.run.steering import Steering
from rein.harness.tools import (
    Tool,
    ToolCallExecutor,
    ToolContext,
    ToolEnvironment,
    ToolRegistry,
    ToolResult,
    execute_tool_call,
)

__all__ = [
    "AGENT_DEFAULT",
    "FROM_CONFIG",
    "AgentDefault",
    "ChildResumer",
    "FromConfig",
    "LoopContext",
    "ResumeCall",
    "RunControl",
    "RunOptions",
    "RunResult",
]


class AgentDefault(Enum):
    """The type of :data:`AGENT_DEFAULT`."""

    AGENT_DEFAULT = "the agent's own"


#: A :class:`RunOptions` field left at this uses the Agent's own setting.
AGENT_DEFAULT: Final = AgentDefault.AGENT_DEFAULT


class FromConfig(Enum):
    """The type of :data:`FROM_CONFIG`."""

    FROM_CONFIG = "the HarnessConfig's"


#: A policy left at this is built from the run's :class:`HarnessConfig`.
FROM_CONFIG: Final = FromConfig.FROM_CONFIG


@dataclass(frozen=True, slots=True)
class ResumeCall:
    """A tool call that waited for the person and goes on with the answer
    (a subagent's question): the run first awaits ``resume`` and its result
    replaces the call's placeholder result in the transcript."""

    tool_call_id: str
    tool_name: str
    resume: Callable[[ToolContext], Awaitable[ToolResult]]


@runtime_checkable
class ChildResumer(Protocol):
    """What the Agent asks of its ``env.subagents`` (a
    :class:`~rein.flows.subagents.SubagentSpawner`) when the person answers
    while it waits: the call that resumes a child waiting on the person
    under ``tool_call_id`` (None: no child waits there). The ``subagents``
    of a :class:`~rein.harness.tools.ToolEnvironment` that is not one never
    has a child to resume."""

    def resumer(self, tool_call_id: str, answer: str) -> ResumeCall | None: ...


@dataclass(frozen=True, slots=True)
class RunOptions:
    """Settings for the runs of one ``Agent.prompt`` call, instead of
    changing the Agent: fields left at their default use the Agent's own.

    A flow (plan-act) passes these per step; the Agent is the same after.
    """

    #: The gates of these runs (None: no gates).
    gates: GatePipeline | AgentDefault | None = AGENT_DEFAULT
    #: An output tool the model must call to answer (None: none).
    required_output: str | AgentDefault | None = AGENT_DEFAULT
    #: The model options (None: the Agent's).
    options: ModelOptions | None = None
    #: Tools these runs may call besides the Agent's (names must not clash).
    extra_tools: Sequence[Tool[Any]] = ()
    #: Changes of earlier runs the first run's gates validate too.
    carried: Sequence[RunMutation] = ()
    #: The waiting call the first run resumes before its first turn.
    resume: ResumeCall | None = None
    #: The system prompt of these runs (None: the Agent's).
    system_prompt: str | None = None


@dataclass(slots=True)
class RunResult:
    """What one run did and how it ended."""

    run_id: str
    status: RunStatus
    #: Why the run did not complete; for a completed run, why it has no
    #: answer text (an empty reply accepted after harness.maxEmptyRetries),
    #: else None.
    error: str | None = None
    #: The final answer (or the last text the model wrote).
    text: str = ""
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    repair_attempts: int = 0
    #: Generations of the changes the agent applied in this run.
    generations: list[int] = field(default_factory=list)
    #: What the gates still found when the run failed on its repair budget.
    blockers: list[Blocker] = field(default_factory=list)
    #: For "waiting": the ask_user call whose result the next message becomes.
    waiting_for: str | None = None
    #: The changes this run caused (its tools', its commands', its subagents').
    mutations: list[RunMutation] = field(default_factory=list)
    #: The details of the output tool call that gave the answer, if any.
    output: dict[str, Any] | None = None
    #: Names of the tools executed in this run, in order.
    tools_used: list[str] = field(default_factory=list)
    #: Names of the tools whose result was not an error, in order.
    tools_succeeded: list[str] = field(default_factory=list)
    #: Gates that could not verify this run's changes (a completed run whose
    #: changes are not validated says so here; never reported as passed).
    unverified: list[Unverified] = field(default_factory=list)
    #: USD of the run's tokens; None when a model's price is unknown.
    cost: float | None = None
    #: The context window's fill at the run's last model request.
    context: ContextShare | None = None
    #: The retries of the run's model requests, as announced (``model_retry``).
    model_retries: list[ModelRetry] = field(default_factory=list)


class RunControl:
    """Abort handle for one run: ``abort(reason)`` cancels the run's scope."""

    __slots__ = ("_scope", "reason")

    def __init__(self) -> None:
        self._scope: anyio.CancelScope | None = None
        self.reason: str | None = None

    def abort(self, reason: str = "aborted") -> None:
        if self.reason is None:
            self.reason = reason
        if self._scope is not None:
            self._scope.cancel()

    @property
    def aborted(self) -> bool:
        return self.reason is not None


@dataclass(slots=True)
class LoopContext:
    run_id: str
    #: The transcript; the loop appends to it in place.
    messages: list[Message]
    tools: ToolRegistry
    system: str = ""
    options: ModelOptions = field(default_factory=ModelOptions)
    env: ToolEnvironment = field(default_factory=ToolEnvironment)
    hooks: Hooks = field(default_factory=Hooks)
    #: The Agent's steering: its queue, external source and arrival signal.
    steering: Steering = field(default_factory=Steering)
    #: Called with every message appended to the transcript (persistence).
    on_message: Callable[[Message], None] | None = None
    #: Awaited before every model call and tool execution (flush the store).
    checkpoint: Callable[[], Awaitable[None]] | None = None
    #: Keeps the context under the window (None: no budget).
    budget: ContextBudget | None = None
    #: Validation gates run on a final answer with unvalidated mutations.
    gates: GatePipeline | None = None
    #: An output tool the model must call to answer (structured output).
    required_output: str | None = None
    #: Changes of earlier runs this run's gates validate too (plan-act steps).
    carried: Sequence[RunMutation] = ()
    #: Makes room in an over-window request (None: the guard fails the run).
    over_window_relief: OverWindowRelief | None = DEFAULT_RELIEF
    #: The misuse breaker's thresholds (None: off).
    tool_misuse_breaker: ToolMisuseBreakerConfig | FromConfig | None = FROM_CONFIG
    #: Heartbeats and the stuck-call policy (None: unsupervised).
    stuck_tool: StuckToolConfig | FromConfig | None = FROM_CONFIG
    #: Executes one validated tool call (the ``tool_executor`` port).
    tool_executor: ToolCallExecutor = execute_tool_call
    #: Emit a ``model_request`` event (the redacted payload) before every
    #: model request.
    wire_dump: bool = False
    #: Called when the message at an index was replaced (persistence).
    on_replace: Callable[[int, Message], None] | None = None
    #: The waiting call this run resumes before its first turn.
    resume: ResumeCall | None = None
    #: Prices the run's tokens (None: no cost is known).
    prices: PriceTable | None = None
