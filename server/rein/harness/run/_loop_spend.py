"""What a run spends: the tokens of the open turn and of the run, the turn's
end with its usage and cost, the token and cost budgets checked before a
turn, and the summary the over-window relief asks for (its usage, its
retries announced)."""

from __future__ import annotations

from collections.abc import Callable

from rein.harness.conversation.context import summarize
from rein.harness.cost.spend import RunSpend, budget_reason
from rein.harness.events import ErrorEvent, Event, RunStatus, TurnEnd
from rein.harness.messages import Usage
from rein.harness.ports import Model, RetryWait
from rein.harness.retries import retry_event
from rein.harness.run.run_record import RunRecord
from rein.harness.run.run_types import RunResult
from rein.harness.run.streaming import TurnStream

__all__ = ["RunSpending"]


class RunSpending:
    """Mixed into the loop's run state (:mod:`rein.harness.run.loop`)."""

    turn: int
    turn_open: bool
    turn_model: Model
    stream: TurnStream
    usage: Usage
    turn_usage: Usage
    record: RunRecord
    spend: RunSpend
    emit: Callable[[Event], None]
    finish: Callable[[RunStatus, str | None], RunResult]

    async def summarize(self, text: str) -> str:
        """The summary the over-window relief asked for, by the run's model."""
        summary, usage = await summarize(self.turn_model, text, self.announce_compaction_retry)
        self.count_usage(usage)
        return summary

    def announce_compaction_retry(self, wait: RetryWait) -> None:
        """A retry of the summary request, announced as the turn's are
        (``model_retry``, for "compaction") and kept with the run's."""
        retry = retry_event(wait, "compaction")
        self.stream.retries.append(retry)
        self.emit(retry)

    def count_usage(self, usage: Usage) -> None:
        """Tokens spent by this run: the open turn's and the run's."""
        self.turn_usage = self.turn_usage + usage
        self.usage = self.usage + usage
        self.spend.count(self.turn_model.name, usage)

    def over_budget(self) -> RunResult | None:
        """Before a turn: the failed result when the run went over
        ``harness.maxTokensPerRun`` or ``harness.maxCostPerRun``."""
        if self.spend.cost_budget_unknown():
            self.emit(
                ErrorEvent(
                    message=f"harness.maxCostPerRun is not applied: the price of model "
                    f"{self.turn_model.name!r} is unknown (model.prices)",
                    where="budget",
                )
            )
        exceeded = self.spend.exceeded(self.usage)
        if exceeded is None:
            return None
        self.emit(exceeded)
        return self.finish("failed", budget_reason(exceeded))

    def end_turn(self, tool_calls: int) -> None:
        """Close the open turn: its usage (with its subagents') and the run's."""
        self.count_usage(self.record.take_subagent_usage())
        if self.turn_open:
            self.turn_open = False
            turn_usage, self.turn_usage = self.turn_usage, Usage()
            self.emit(
                TurnEnd(
                    turn=self.turn,
                    tool_calls=tool_calls,
                    usage=turn_usage,
                    run_usage=self.usage,
                    cost=self.spend.take_turn_cost(),
                    run_cost=self.spend.run_cost,
                    context=self.spend.context,
                )
            )
