"""One assistant turn streamed from the model, as message events.

:class:`TurnStream` turns the model's deltas into ``message_start`` /
``message_delta`` events and returns the final message; when the run is
aborted or the model fails mid-stream, :meth:`TurnStream.close` gives the
partial message (what was said so far) so the transcript keeps it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import anyio

from rein.harness.calls.arguments import bounded_tool_calls
from rein.harness.config import EmptyAnswerWithChanges
from rein.harness.errors import ModelError
from rein.harness.events import Emit, MessageDelta, MessageStart, ModelRetry
from rein.harness.messages import AssistantMessage, TextPart, ThinkingPart
from rein.harness.ports import (
    Model,
    ModelDelta,
    ModelRequest,
    RetryWait,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    TurnDone,
)
from rein.harness.retries import closing_stream, retry_event
from rein.harness.run.steering import Steering

__all__ = ["CUT_EMPTY_NUDGE", "DegenerateReplies", "DegenerateStep", "TurnStream"]


class TurnStream:
    """Streams assistant turns for one run, one at a time."""

    def __init__(self, emit: Emit, steering: Steering | None = None) -> None:
        self.emit = emit
        #: Whose arrival ends a retry's wait (None: only an abort does).
        self.steering = steering
        #: The run's model retries so far, as announced.
        self.retries: list[ModelRetry] = []
        #: A steer ended the current request's retry wait.
        self.steered = False
        #: True between the turn's message_start and its end.
        self.open = False
        self._text: list[str] = []
        self._thinking: list[str] = []

    async def stream(self, model: Model, request: ModelRequest) -> AssistantMessage | None:
        """The turn's final message; None when a steer arrived while the
        request waited to be retried (the wait ends at once, the request is
        dropped with nothing of the reply come, and the loop goes back to its
        boundary, where the steer is delivered and a new request sent; a
        model that keeps a server's Retry-After makes that request wait out
        its rest, announced as a retry).
        Raises ModelError when the model fails or ends its stream without a
        message (then :meth:`close` it)."""
        self.open = False
        self.steered = False
        self._text = []
        self._thinking = []
        done: AssistantMessage | None = None
        tool_names: dict[int, tuple[str | None, str | None]] = {}
        async with closing_stream(model.stream(request)) as stream:
            waiting = False
            while (delta := await self._next(stream, waiting)) is not None:
                waiting = isinstance(delta, RetryWait)
                if isinstance(delta, RetryWait):
                    retry = retry_event(delta, "turn")
                    self.retries.append(retry)
                    self.emit(retry)
                    continue
                if not self.open:
                    self.open = True
                    self.emit(MessageStart(role="assistant"))
                if isinstance(delta, TextDelta):
                    self._text.append(delta.text)
                    self.emit(MessageDelta(kind="text", delta=delta.text))
                elif isinstance(delta, ThinkingDelta):
                    self._thinking.append(delta.text)
                    self.emit(MessageDelta(kind="thinking", delta=delta.text))
                elif isinstance(delta, ToolCallDelta):
                    known = tool_names.get(delta.index, (None, None))
                    ident = delta.id or known[0]
                    name = delta.name or known[1]
                    tool_names[delta.index] = (ident, name)
                    self.emit(
                        MessageDelta(
                            kind="tool_call",
                            delta=delta.arguments_delta,
                            tool_call_id=ident,
                            tool_name=name,
                        )
                    )
                elif isinstance(delta, TurnDone):
                    done = delta.message
        if self.steered:
            return None
        if done is None:
            raise ModelError(f"model {model.name!r} ended its stream without a final message")
        if not self.open:
            self.emit(MessageStart(role="assistant"))
        self.open = False
        return bounded_tool_calls(done)

    async def _next(self, stream: AsyncIterator[ModelDelta], waiting: bool) -> ModelDelta | None:
        """The stream's next delta (None at its end). While the model waits
        to retry (``waiting``), a steer ends the wait at once: None, and
        :attr:`steered` set (an abort cancels the run's scope)."""
        if not waiting or self.steering is None:
            return await anext(stream, None)
        steering = self.steering
        if not steering.arrived:
            with anyio.CancelScope() as scope:
                unsubscribe = steering.on_arrival(scope.cancel)
                try:
                    return await anext(stream, None)
                finally:
                    unsubscribe()
        self.steered = True
        return None

    def close(self, stop_reason: str) -> AssistantMessage | None:
        """The partial message of a turn cut short (None when no turn was
        being streamed): what was said so far, stopped as "aborted" or
        "error". The caller appends it and emits its message_end."""
        if not self.open:
            return None
        self.open = False
        parts: list[TextPart | ThinkingPart] = []
        if self._thinking:
            parts.append(ThinkingPart(thinking="".join(self._thinking)))
        if self._text:
            parts.append(TextPart(text="".join(self._text)))
        return AssistantMessage(
            content=tuple(parts),
            stop_reason="aborted" if stop_reason == "aborted" else "error",
        )


CUT_EMPTY_NUDGE = (
    "Your previous reply was cut off at the output token limit before it contained any "
    "text or tool call. Continue, and keep this reply short: one tool call, or a brief "
    "answer."
)


@dataclass(frozen=True, slots=True)
class DegenerateStep:
    """What to do about a reply with no text and no tool call."""

    #: True: the run fails with ``message``; False: the turn is retried.
    fail: bool
    message: str
    #: A note appended before the retry (None: retry as is).
    nudge: str | None = None
    #: The retries are spent: the empty reply is the turn's answer (the run
    #: goes on to validation and says why it has no text).
    accept: bool = False


class DegenerateReplies:
    """Counts a run's degenerate replies: an empty reply is retried up to
    ``max_empty_retries`` times; one cut at the token limit (``stop_reason``
    "length") before it said anything is retried once with a note asking for
    a shorter reply; past that the run fails, never completes with no text.
    Any other empty reply is retried ``max_empty_retries`` times, then
    accepted as the turn's answer, and the run's end says so."""

    def __init__(
        self, max_empty_retries: int, with_changes: EmptyAnswerWithChanges = "fail"
    ) -> None:
        self.max_empty_retries = max_empty_retries
        self.with_changes = with_changes
        self.empty = 0
        self.cut = 0

    def judge(self, assistant: AssistantMessage) -> DegenerateStep:
        if assistant.stop_reason == "length":
            if self.cut < 1:
                self.cut += 1
                return DegenerateStep(
                    False,
                    "the model's reply was cut at the token limit before it said anything; "
                    "retrying once",
                    CUT_EMPTY_NUDGE,
                )
            return DegenerateStep(
                True,
                "the model's reply was cut at the token limit (stop_reason length) with no "
                "text and no tool call, twice; raise model.maxTokens or shorten the task",
            )
        limit = self.max_empty_retries
        if self.empty < limit:
            self.empty += 1
            return DegenerateStep(
                False, f"the model returned an empty reply; retrying ({self.empty} of {limit})"
            )
        return DegenerateStep(
            False,
            f"the model returned an empty reply {self.empty + 1} times; its empty reply is "
            "taken as the turn's answer (harness.maxEmptyRetries)",
            accept=True,
        )

    def unanswered_changes(self, paths: Sequence[str]) -> str | None:
        """The run's final answer is empty (an accepted empty reply) and the
        run changed ``paths``: why it fails (None: the policy accepts it,
        or nothing changed, and the run completes)."""
        if self.with_changes != "fail" or not paths:
            return None
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        return (
            f"the model's final answer was empty after {self.max_empty_retries} "
            f"{'retry' if self.max_empty_retries == 1 else 'retries'}, but the run changed "
            f"files ({shown}): nothing says what was done or whether it is finished; review "
            "the changes, then continue or ask again (harness.emptyAnswerWithChanges)"
        )
