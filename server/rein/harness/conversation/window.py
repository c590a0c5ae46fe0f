"""The over-window guard: build a request's messages and keep them under the
window.

A request's messages are, in order: the stored transcript (or, for this
request only, the messages ``prepare_next_turn`` returned), the breaker's
corrective notes (this request only: they are never stored), then whatever
``transform_context`` makes of that. The guard estimates *that* list (plus
the system prompt and tool schemas) against the effective window, and over
it asks the run's :class:`~rein.harness.conversation.relief.OverWindowRelief` for room,
builds the messages again and checks once more.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from rein.harness.conversation.context import (
    ContextBudget,
    ContextOverflowError,
    FitReport,
    estimate_schema_tokens,
)
from rein.harness.conversation.relief import OverWindowRelief, ReliefReason, ReliefRequest
from rein.harness.conversation.tokens import estimate_message_tokens
from rein.harness.errors import ModelError
from rein.harness.events import Compaction, Emit
from rein.harness.hooks import call_hook
from rein.harness.messages import Message, UserMessage
from rein.harness.run.run_types import LoopContext
from rein.harness.run.watchdog import Activity

__all__ = ["WindowGuard"]

log = logging.getLogger(__name__)

#: After the provider refused a request as too long, relief aims this far
#: under the request's estimate (the estimate was evidently low).
_REJECTED_SHARE = 0.75


class WindowGuard:
    """The request builder and window check of one run."""

    def __init__(
        self,
        ctx: LoopContext,
        emit: Emit,
        activity: Activity,
        summarize: Callable[[str], Awaitable[str]],
    ) -> None:
        self.ctx = ctx
        self.emit = emit
        self.activity = activity
        self.summarize = summarize
        self._overhead: tuple[int, int] | None = None

    def overhead(self) -> int:
        """Tokens of the system prompt and tool schemas (cached while they
        stay the same)."""
        schemas = self.ctx.tools.schemas()
        key = hash((id(schemas), len(self.ctx.system)))
        if self._overhead is None or self._overhead[0] != key:
            self._overhead = (key, estimate_schema_tokens(self.ctx.system, schemas))
        return self._overhead[1]

    async def build(
        self, base: Sequence[Message] | None, notes: Sequence[str]
    ) -> Sequence[Message]:
        """The request's messages: ``base`` (None: the transcript), the
        notes, then ``transform_context``."""
        ctx = self.ctx
        messages: Sequence[Message] = ctx.messages if base is None else base
        if notes:
            messages = [*messages, *(UserMessage(content=n, origin="nudge") for n in notes)]
        if ctx.hooks.transform_context is not None:
            transformed = await call_hook(
                self.emit, "transform_context", ctx.hooks.transform_context, messages
            )
            if transformed is not None:
                messages = transformed
        return messages

    def size(self, messages: Sequence[Message], budget: ContextBudget) -> int:
        """The request's estimate; incremental when it is the transcript."""
        if messages is self.ctx.messages:
            return budget.estimate(messages, self.overhead())
        return sum(estimate_message_tokens(m) for m in messages) + self.overhead()

    async def fit(
        self,
        base: Sequence[Message] | None,
        notes: Sequence[str],
        rejected: int | None = None,
    ) -> tuple[Sequence[Message], Sequence[Message] | None]:
        """The request's messages, under the window; and ``base`` (changed
        when relief worked on this request's own messages). ``rejected``:
        the estimate of a request the provider refused as too long.

        Raises :class:`ContextOverflowError` when the request does not fit
        (or relief is off), :class:`ModelError` when the summariser fails.
        """
        budget = self.ctx.budget
        messages = await self.build(base, notes)
        if budget is None:
            return messages, base
        size = self.size(messages, budget)
        target = (
            budget.window
            if rejected is None
            else min(budget.window, int(rejected * _REJECTED_SHARE))
        )
        if rejected is None and size <= target:
            return messages, base
        relief = self.ctx.over_window_relief
        if relief is None:
            raise ContextOverflowError(
                f"the request (~{size} tokens) exceeds the window ({budget.window} tokens) "
                "and over-window relief is off"
                if rejected is None
                else "the provider refused the request as longer than the model's window "
                "and over-window relief is off"
            )
        own = list(base) if base is not None else self.ctx.messages
        # What the notes and transform_context add to (or take from) ``own``.
        own_budget = budget if base is None else ContextBudget(budget.window)
        extra = size - own_budget.estimate(own, self.overhead())
        reason: ReliefReason = "over_window" if rejected is None else "provider_rejected"
        request = ReliefRequest(
            messages=own,
            overhead=self.overhead() + extra,
            window=target,
            reason=reason,
            budget=own_budget,
            summarize=self.summarize,
        )
        with self.activity.paused("compaction"):
            reports = await self._relieve(relief, request)
        for r in reports:
            self.emit(
                Compaction(
                    kind=r.kind,
                    tokens_before=r.tokens_before,
                    tokens_after=r.tokens_after,
                    messages_affected=r.messages_affected,
                    detail=r.detail,
                )
            )
        base = own if base is not None else None
        messages = await self.build(base, notes)
        after = self.size(messages, budget)
        if after > budget.window:
            raise ContextOverflowError(
                f"the request is still ~{after} tokens after over-window relief, over the "
                f"window of {budget.window} tokens (harness.maxContextTokens / contextWindowCap)"
            )
        return messages, base

    async def _relieve(self, relief: OverWindowRelief, request: ReliefRequest) -> list[FitReport]:
        try:
            return await relief.relieve(request)
        except (ContextOverflowError, ModelError):
            raise
        except Exception as exc:
            log.exception("over-window relief raised")
            raise ContextOverflowError(
                f"the over-window relief raised {type(exc).__name__}: {exc}"
            ) from exc
