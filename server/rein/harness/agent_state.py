"""What the Agent shows of itself: the read-only :class:`AgentState`
snapshot and the run's :class:`CancelToken`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import anyio

from rein.harness.messages import AssistantMessage, Message
from rein.harness.run_types import RunControl, RunResult

__all__ = ["AgentState", "CancelToken"]


@dataclass(frozen=True, slots=True)
class AgentState:
    """A read-only snapshot of the Agent (``Agent.state``)."""

    status: Literal["idle", "running", "waiting"]
    messages: tuple[Message, ...]
    #: The assistant message being streamed (partial), or None.
    streaming_message: AssistantMessage | None
    #: Ids of the tool calls of the current turn that have no result yet.
    pending_tool_calls: tuple[str, ...]
    queued_steering: int
    queued_follow_ups: int
    #: The ask_user call the next prompt answers, if any.
    waiting_for: str | None
    last_result: RunResult | None
    run_id: str | None


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
