"""One closed union of the events a run emits.

Every event is a frozen pydantic model whose ``type`` field (snake_case) is the
discriminator. ``rein schema events`` prints the JSON Schema of :data:`Event`;
docs/architecture.md draws the events of a run as a tree. The gates'
events are :mod:`rein.harness.gate_events`, the features' around a run
:mod:`rein.harness.feature_events`: members of the union, imported from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from rein.harness._event_base import EVENT_CONFIG, _Event
from rein.harness.calls.display import DisplayKind
from rein.harness.feature_events import (
    CheckpointDropped,
    FilesRestored,
    HookActivity,
    McpBudgetWarning,
    McpServerState,
    PlanState,
    PlanStateName,
    PlanStep,
    PlanUpdated,
    PreviewError,
    PreviewOutput,
    PreviewReloaded,
    PreviewStarted,
    PreviewStateName,
    PreviewStopped,
    ReviewDecided,
    ReviewPending,
    SubagentActivity,
)
from rein.harness.gate_events import (
    Blocker,
    CarriedChanges,
    GateResult,
    GateStart,
    GateStatus,
    GateWaiting,
    RepairAttempt,
    Unverified,
)
from rein.harness.messages import Message, Usage

__all__ = [
    "AgentEnd",
    "AgentStart",
    "AutoRepair",
    "Blocker",
    "BudgetExceeded",
    "CarriedChanges",
    "CheckpointDropped",
    "Compaction",
    "ContextShare",
    "Emit",
    "ErrorEvent",
    "Event",
    "EventAdapter",
    "FilesRestored",
    "FollowUpStarted",
    "GateResult",
    "GateStart",
    "GateStatus",
    "GateWaiting",
    "HookActivity",
    "McpBudgetWarning",
    "McpServerState",
    "MessageDelta",
    "MessageEnd",
    "MessageStart",
    "ModelRequestEvent",
    "ModelRetry",
    "PlanState",
    "PlanStateName",
    "PlanStep",
    "PlanUpdated",
    "PreviewError",
    "PreviewOutput",
    "PreviewReloaded",
    "PreviewStarted",
    "PreviewStateName",
    "PreviewStopped",
    "RepairAttempt",
    "RetryPurpose",
    "ReviewDecided",
    "ReviewPending",
    "RunEnd",
    "RunStart",
    "RunStatus",
    "SteeringApplied",
    "SubagentActivity",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolCallUpdate",
    "ToolRetry",
    "TurnEnd",
    "TurnStart",
    "Unverified",
    "WatchdogPaused",
    "WatchdogResumed",
    "event_json_schema",
]

RunStatus = Literal["completed", "failed", "aborted", "waiting"]


class AgentStart(_Event):
    """The agent left idle: a prompt (or continue) started processing."""

    type: Literal["agent_start"] = "agent_start"


class AgentEnd(_Event):
    """The agent is idle again: no run active, no follow-up queued."""

    type: Literal["agent_end"] = "agent_end"
    status: RunStatus


class RunStart(_Event):
    type: Literal["run_start"] = "run_start"
    run_id: str
    prompt: str | None = None


class ContextShare(BaseModel):
    """How full the context window is: the tokens of the last model request
    (as the provider counted them; estimated when it reported none) of the
    ``window``."""

    model_config = EVENT_CONFIG

    used: int
    window: int
    #: ``used / window`` (0..1; above 1 only when a provider served more).
    share: float


class RunEnd(_Event):
    type: Literal["run_end"] = "run_end"
    run_id: str
    status: RunStatus
    reason: str | None = None
    turns: int = 0
    usage: Usage = Usage()
    #: USD of the run's tokens (``model.prices``); None when a model's price
    #: is unknown.
    cost: float | None = None
    #: The context window's fill at the run's last model request.
    context: ContextShare | None = None
    #: Gates that could not verify this run's changes (never reported as passed).
    unverified: list[Unverified] = Field(default_factory=list)


class TurnStart(_Event):
    type: Literal["turn_start"] = "turn_start"
    turn: int


class TurnEnd(_Event):
    """A model turn ended (its tool calls included). ``usage`` is this
    turn's alone, ``run_usage`` the run's so far: a counter adds ``usage``
    or shows ``run_usage``, never adds ``run_usage``. Both count the turn's
    subagents (a ``task`` call's child run is part of the turn that called
    it); a relief summary counts in the turn that needed it."""

    type: Literal["turn_end"] = "turn_end"
    turn: int
    tool_calls: int = 0
    #: The tokens of this turn: its model call, its subagents, its summaries.
    usage: Usage = Usage()
    #: The tokens of the run up to the end of this turn (the sum of its
    #: turns' ``usage``).
    run_usage: Usage = Usage()
    #: USD of this turn's ``usage`` and of the run's so far; None when a
    #: model's price is unknown (``model.prices``).
    cost: float | None = None
    run_cost: float | None = None
    #: The context window's fill at this turn's model request.
    context: ContextShare | None = None


class BudgetExceeded(_Event):
    """The run spent more than ``harness.maxTokensPerRun`` or
    ``harness.maxCostPerRun`` allow: it ends before its next turn (status
    "failed", reason "budget: ..."); a client may offer to continue."""

    type: Literal["budget_exceeded"] = "budget_exceeded"
    #: Which budget: "tokens" or "cost" (USD).
    limit: Literal["tokens", "cost"]
    #: What the run spent, and the setting's value.
    spent: float
    allowed: float


class MessageStart(_Event):
    type: Literal["message_start"] = "message_start"
    role: Literal["user", "assistant", "tool"]


class MessageDelta(_Event):
    """A streamed piece of the assistant message being produced."""

    type: Literal["message_delta"] = "message_delta"
    kind: Literal["text", "thinking", "tool_call"]
    delta: str
    #: For kind "tool_call": the call being streamed.
    tool_call_id: str | None = None
    tool_name: str | None = None


class ModelRequestEvent(_Event):
    """The outbound payload of the model request that follows (only with
    ``Agent(wire_dump=True)``; off by default). Redacted: no API keys, no
    Authorization header. ``format`` is the wire format ("openai",
    "anthropic") when the provider serialised it, "neutral" for Rein's own
    request shape. Hosts do not store it unless they choose to."""

    type: Literal["model_request"] = "model_request"
    turn: int
    model: str
    format: str = "neutral"
    payload: dict[str, Any] = Field(default_factory=dict)


#: What a retried model request is for (``model_retry``'s ``purpose``).
RetryPurpose = Literal["turn", "compaction"]


class ModelRetry(_Event):
    """The model's request failed before any reply (a 429, a 5xx, a refused
    connection, a stall) and is sent again after ``wait_s`` seconds: sent as
    the wait begins. Show it until the reply starts (``message_start``; for
    compaction's summary, its ``compaction`` event) or the next
    ``model_retry``; at most ``rein.model.maxRetries`` per request."""

    type: Literal["model_retry"] = "model_retry"
    #: The provider and its endpoint (``openai (https://api.openai.com/v1)``).
    provider: str
    #: What failed, as the error says it (never a key or a header's value).
    reason: str
    #: This retry's number: 1 for the second attempt.
    attempt: int
    #: The retries the request may get (``rein.model.maxRetries``).
    max_attempts: int
    #: The wait before this retry, in seconds (a ``Retry-After``, or the backoff).
    wait_s: float
    #: What the request is for: the turn's reply, or compaction's summary of
    #: the oldest turns (then no ``message_start`` follows it).
    purpose: RetryPurpose = "turn"


class MessageEnd(_Event):
    type: Literal["message_end"] = "message_end"
    message: Message


class ToolCallStart(_Event):
    """A tool call starts. ``details`` says more about the tool: an MCP
    server's tool carries ``{"mcpServer": ..., "mcpTool": <its own name>}``."""

    type: Literal["tool_call_start"] = "tool_call_start"
    tool_call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)


class ToolCallUpdate(_Event):
    """Progress of a running tool: streamed output or a liveness heartbeat;
    ``terminal``: the command runs in the ACP client's terminal, ``text``
    is its id (``rein acp`` shows the terminal in the tool call)."""

    type: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    name: str
    kind: Literal["output", "heartbeat", "status", "terminal"] = "output"
    text: str = ""


class ToolRetry(_Event):
    """A tool call failed transiently (a ``TransientToolError``; a refused
    connection; a timeout or network error of a read tool) and runs again:
    one event before each retry, at most ``harness.toolRetries`` per call."""

    type: Literal["tool_retry"] = "tool_retry"
    tool_call_id: str
    name: str
    #: This retry's number: 1 for the second execution of the call.
    attempt: int
    #: The retries this call may get (``harness.toolRetries``).
    max_attempts: int
    #: Why the last execution failed (the error, as the model would read it).
    reason: str
    #: The pause before this retry.
    delay_ms: int = 0


class ToolCallEnd(_Event):
    """A tool call ended with ``content``, the text the model reads.
    ``display`` says how to show it: the tool's display kind ("markdown",
    "diff", "table": a markdown pipe table, "json", "locations": places in
    files, a path line then one line per place, two spaces and ``L:C: text``:
    1-based line and column, the column in UTF-16 code units as LSP and VS
    Code count it; a place may be followed by its lines, four spaces and
    ``N| text`` each (a definition's body), which are not places; as
    ``rein.harness.calls.display.parse_locations`` reads them), "text" for a
    failed call or a tool that declares none."""

    type: Literal["tool_call_end"] = "tool_call_end"
    tool_call_id: str
    name: str
    is_error: bool
    content: str
    duration_ms: float = 0.0
    details: dict[str, Any] = Field(default_factory=dict)
    display: DisplayKind = "text"


class SteeringApplied(_Event):
    type: Literal["steering_applied"] = "steering_applied"
    texts: list[str]
    #: Queued before this run's prompt began (after an earlier run's last
    #: boundary): delivered now, late, never silently.
    late: bool = False


class FollowUpStarted(_Event):
    type: Literal["follow_up_started"] = "follow_up_started"
    text: str


class Compaction(_Event):
    """The context was brought under the window: oldest tool results elided
    ("elide") or oldest turns summarised ("summarize")."""

    type: Literal["compaction"] = "compaction"
    kind: Literal["elide", "summarize"]
    tokens_before: int
    tokens_after: int
    messages_affected: int
    detail: str = ""

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after


class WatchdogPaused(_Event):
    """The run's idle watchdog stops counting: a gate, an install or a
    compaction is working (that time is activity, not idleness)."""

    type: Literal["watchdog_paused"] = "watchdog_paused"
    reason: str


class WatchdogResumed(_Event):
    type: Literal["watchdog_resumed"] = "watchdog_resumed"
    reason: str


class AutoRepair(_Event):
    """Diagnostics-driven auto-repair: a start and an outcome per attempt."""

    type: Literal["auto_repair"] = "auto_repair"
    phase: Literal["started", "finished", "cancelled", "skipped"]
    uri: str
    status: RunStatus | None = None
    reason: str | None = None


class ErrorEvent(_Event):
    """Something went wrong that the run survived (a hook raised, ...) or did not."""

    type: Literal["error"] = "error"
    message: str
    where: str = "agent"
    fatal: bool = False


Event = Annotated[
    AgentStart
    | AgentEnd
    | RunStart
    | RunEnd
    | TurnStart
    | TurnEnd
    | MessageStart
    | MessageDelta
    | MessageEnd
    | ModelRequestEvent
    | ModelRetry
    | ToolCallStart
    | ToolCallUpdate
    | ToolRetry
    | ToolCallEnd
    | SteeringApplied
    | FollowUpStarted
    | Compaction
    | GateStart
    | GateResult
    | GateWaiting
    | CarriedChanges
    | WatchdogPaused
    | WatchdogResumed
    | RepairAttempt
    | AutoRepair
    | PlanState
    | PlanUpdated
    | SubagentActivity
    | PreviewStarted
    | PreviewReloaded
    | PreviewOutput
    | PreviewError
    | PreviewStopped
    | ReviewPending
    | ReviewDecided
    | FilesRestored
    | CheckpointDropped
    | McpServerState
    | McpBudgetWarning
    | HookActivity
    | BudgetExceeded
    | ErrorEvent,
    Field(discriminator="type"),
]
EventAdapter: TypeAdapter[Event] = TypeAdapter(Event)

#: Where a run, a gate, a flow or the preview sends its events.
Emit = Callable[[Event], None]


def event_json_schema() -> dict[str, Any]:
    schema: dict[str, Any] = EventAdapter.json_schema(mode="serialization")
    schema["title"] = "ReinEvent"
    return schema
