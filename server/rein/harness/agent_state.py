"""``Agent.state``: one read-only snapshot of the agent; and
``Agent.cancel_token``: the run's cancellation, to link secondary work to.

:class:`AgentState` is frozen and owns its sequences (tuples), so a host can
keep it, compare it with a later one, or read it from another task while the
run goes on. :class:`RunTracker` follows the events the Agent emits to know
what no other part of the Agent keeps: the assistant message being streamed
and the tool calls still waiting for their results.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import anyio

from rein.harness.events import (
    Event,
    MessageDelta,
    MessageEnd,
    MessageStart,
    RunEnd,
    RunStart,
    ToolCallEnd,
)
from rein.harness.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ThinkingPart,
    ToolCall,
)

if TYPE_CHECKING:
    from rein.harness.run.run_types import RunControl, RunResult

__all__ = ["AgentState", "AgentStatus", "CancelToken", "RunTracker"]

#: ``running``: a run (or its follow-ups) is active; ``waiting``: idle, and
#: the last run ended on an ask_user question the next prompt answers;
#: ``idle``: anything else.
AgentStatus = Literal["idle", "running", "waiting"]


@dataclass(frozen=True, slots=True)
class AgentState:
    """What the agent is doing, as of the moment ``Agent.state`` was read."""

    status: AgentStatus
    #: The transcript (a copy).
    messages: tuple[Message, ...]
    #: The assistant message being streamed, as far as it got (its tool
    #: calls with the arguments parsed once their JSON is complete); None
    #: when no model reply is streaming.
    streaming_message: AssistantMessage | None
    #: Calls of the current assistant turn that have no result yet.
    pending_tool_calls: tuple[ToolCall, ...]
    queued_steering: int
    queued_follow_ups: int
    #: The ask_user call whose result the next prompt becomes.
    waiting_for: str | None
    #: How the last run ended (None before the first).
    last_result: RunResult | None
    #: The active run's id (None when idle).
    run_id: str | None = None

    @property
    def is_streaming(self) -> bool:
        return self.streaming_message is not None

    @property
    def error(self) -> str | None:
        """Why the last run did not complete (None when it did, or none ran)."""
        return self.last_result.error if self.last_result is not None else None


class _StreamingCall:
    __slots__ = ("arguments", "id", "name")

    def __init__(self, ident: str, name: str) -> None:
        self.id = ident
        self.name = name
        self.arguments: list[str] = []

    def to_call(self) -> ToolCall:
        raw = "".join(self.arguments)
        try:
            parsed = json.loads(raw) if raw.strip() else {}
        except ValueError:
            parsed = {}  # still streaming
        return ToolCall(
            id=self.id, name=self.name, arguments=parsed if isinstance(parsed, dict) else {}
        )


#: The event types that change what the tracker follows.
_OBSERVED = frozenset(
    {"message_delta", "message_start", "message_end", "tool_call_end", "run_start", "run_end"}
)


class RunTracker:
    """Follows a run's events: the streamed assistant message and the
    pending tool calls. Cheap per event; the snapshot is built on demand."""

    __slots__ = ("_calls", "_order", "_pending", "_streaming", "_text", "_thinking")

    def __init__(self) -> None:
        self._streaming = False
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._calls: dict[str, _StreamingCall] = {}
        self._order: list[str] = []
        self._pending: dict[str, ToolCall] = {}

    def observe(self, event: Event) -> None:
        kind = event.type
        if kind not in _OBSERVED:
            return
        if isinstance(event, MessageDelta):
            if event.kind == "text":
                self._text.append(event.delta)
            elif event.kind == "thinking":
                self._thinking.append(event.delta)
            else:
                self._tool_call_delta(event.tool_call_id, event.tool_name, event.delta)
        elif isinstance(event, MessageStart):
            if event.role == "assistant":
                self._clear_stream()
                self._streaming = True
        elif isinstance(event, MessageEnd):
            if isinstance(event.message, AssistantMessage):
                self._clear_stream()
                self._pending = {c.id: c for c in event.message.tool_calls}
        elif isinstance(event, ToolCallEnd):
            self._pending.pop(event.tool_call_id, None)
        elif isinstance(event, RunStart | RunEnd):
            self._clear_stream()
            self._pending = {}

    def _tool_call_delta(self, ident: str | None, name: str | None, delta: str) -> None:
        key = ident or name or ""
        call = self._calls.get(key)
        if call is None:
            call = self._calls[key] = _StreamingCall(ident or "", name or "")
            self._order.append(key)
        call.arguments.append(delta)

    def _clear_stream(self) -> None:
        self._streaming = False
        self._text = []
        self._thinking = []
        self._calls = {}
        self._order = []

    def streaming_message(self) -> AssistantMessage | None:
        if not self._streaming:
            return None
        parts: list[TextPart | ThinkingPart | ToolCall] = []
        if self._thinking:
            parts.append(ThinkingPart(thinking="".join(self._thinking)))
        if self._text:
            parts.append(TextPart(text="".join(self._text)))
        parts.extend(self._calls[key].to_call() for key in self._order)
        return AssistantMessage(content=tuple(parts))

    def pending_tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(self._pending.values())


class CancelToken:
    """The active run's cancellation (``Agent.cancel_token``): secondary
    work a host starts for the run (a compaction request, a side query) is
    linked to it, so an abort reaches it too."""

    __slots__ = ("_control", "_linked")

    def __init__(self, control: RunControl) -> None:
        self._control = control
        self._linked: list[anyio.CancelScope] = []

    @property
    def cancelled(self) -> bool:
        return self._control.aborted

    @property
    def reason(self) -> str | None:
        return self._control.reason

    def link(self, scope: anyio.CancelScope) -> Callable[[], None]:
        """Cancel ``scope`` when the run is aborted (at once if it was).
        Returns a function that unlinks it."""
        if self._control.aborted:
            scope.cancel()
        self._linked.append(scope)

        def unlink() -> None:
            if scope in self._linked:
                self._linked.remove(scope)

        return unlink

    def linked(self) -> anyio.CancelScope:
        """A new cancel scope linked to the run: ``with token.linked(): ...``."""
        scope = anyio.CancelScope()
        self.link(scope)
        return scope

    def _cancel(self) -> None:
        for scope in self._linked:
            scope.cancel()
        self._linked.clear()
