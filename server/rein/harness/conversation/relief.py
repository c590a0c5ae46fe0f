"""Over-window relief: what the loop does when a request does not fit.

Before every model call the loop estimates the request it is about to send:
the system prompt, the tool schemas and the messages ``transform_context``
produced (the check runs on those, not on the stored transcript). Over the
window it hands a :class:`ReliefRequest` to the run's
:class:`OverWindowRelief`, then builds the request again and checks it once
more; still over, the run fails with the overflow error. The same happens,
with a tighter target, when the provider refuses a request as too long
(:class:`~rein.harness.errors.ContextLengthError`): relief, then one retry.

The default relief, :class:`ElideThenSummarise`, is the context budget's
fit: elide the oldest tool results, then summarise the oldest turns. An
Agent whose ``over_window_relief`` is None has no relief: an over-window
request fails the run verbatim, nothing is compacted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from rein.harness.conversation.context import ContextBudget, FitReport, Summarize
from rein.harness.messages import Message

__all__ = [
    "DEFAULT_RELIEF",
    "ElideThenSummarise",
    "OverWindowRelief",
    "ReliefReason",
    "ReliefRequest",
]

#: Why relief is asked for: the estimate is over the window, or the provider
#: refused the request as longer than the model's window.
ReliefReason = Literal["over_window", "provider_rejected"]


@dataclass(frozen=True, slots=True)
class ReliefRequest:
    """What a relief works on."""

    #: The messages to shrink, changed in place: the stored transcript (a
    #: compaction persists), or this request's messages when
    #: ``prepare_next_turn`` replaced them for this request.
    messages: list[Message]
    #: Tokens of the request outside ``messages``: system prompt, tool
    #: schemas, and what ``transform_context`` and the breaker's note add.
    overhead: int
    #: Bring ``messages`` + ``overhead`` under this many tokens.
    window: int
    reason: ReliefReason
    #: The incremental estimate of ``messages`` (its ``window`` is the
    #: effective window; ``window`` above may be tighter).
    budget: ContextBudget
    #: Asks the run's model for a summary of a rendered transcript.
    summarize: Summarize


@runtime_checkable
class OverWindowRelief(Protocol):
    """Makes room in an over-window request. Returns what it did (reported
    as ``compaction`` events); raises
    :class:`~rein.harness.conversation.context.ContextOverflowError` when it cannot.
    Runs with the idle watchdog paused."""

    async def relieve(self, request: ReliefRequest) -> list[FitReport]: ...


class ElideThenSummarise:
    """The default relief: :meth:`ContextBudget.fit` (elide the oldest tool
    results down to the low-water mark, then summarise the oldest turns)."""

    async def relieve(self, request: ReliefRequest) -> list[FitReport]:
        return await request.budget.fit(
            request.messages, request.overhead, request.summarize, window=request.window
        )


#: The relief an Agent has unless told otherwise.
DEFAULT_RELIEF: OverWindowRelief = ElideThenSummarise()
