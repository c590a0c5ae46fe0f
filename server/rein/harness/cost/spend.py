"""What a run spends: the cost of its tokens, the context window's fill,
and the per-run budgets (``harness.maxTokensPerRun``,
``harness.maxCostPerRun``).

The loop tells :class:`RunSpend` every usage it counts (with the name of
the model that spent it) and the size of every model request; the turn's
and the run's cost and the context share go on ``turn_end`` and
``run_end``. The budgets are checked before each turn, so a run that went
over ends cleanly at a turn boundary: every tool call answered.
"""

from __future__ import annotations

from collections.abc import Callable

from rein.harness.config import HarnessConfig
from rein.harness.cost.pricing import PriceTable
from rein.harness.events import BudgetExceeded, ContextShare
from rein.harness.messages import Usage

__all__ = ["RunSpend", "budget_reason", "format_cost", "processed_tokens", "spend_line"]


def processed_tokens(usage: Usage) -> int:
    """Every token the model processed: input, output, cache reads and writes."""
    return (
        usage.input_tokens
        + usage.output_tokens
        + usage.cache_read_tokens
        + usage.cache_write_tokens
    )


def _round(cost: float | None) -> float | None:
    return None if cost is None else round(cost, 6)


class RunSpend:
    """The cost and context accounting of one run of ``model`` (the name of
    the run's first model). ``prices`` None: no cost is known (every cost is
    None)."""

    def __init__(
        self, prices: PriceTable | None, config: HarnessConfig, window: int, model: str
    ) -> None:
        self.prices = prices
        self.config = config
        self.window = window
        known = prices is not None and prices.price(model) is not None
        #: The run's cost so far; None while the model's price is unknown
        #: and once any usage had no known price.
        self._run: float | None = 0.0 if known else None
        self._turn: float | None = self._run
        self.context: ContextShare | None = None
        #: A cost budget that cannot be applied (no price) is said once.
        self.cost_budget_unknown_said = False

    def count(self, model: str, usage: Usage) -> None:
        """``usage`` spent by ``model`` (a model call, a summary, subagents)."""
        cost = self.prices.cost(model, usage) if self.prices is not None else None
        self._turn = None if cost is None or self._turn is None else self._turn + cost
        self._run = None if cost is None or self._run is None else self._run + cost

    def request(self, usage: Usage, estimate: Callable[[], int]) -> None:
        """A model request was answered: its size as the provider counted it
        (``estimate()`` only when the provider reported no input tokens)."""
        used = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        used = used or estimate()
        share = used / self.window if self.window > 0 else 0.0
        self.context = ContextShare(used=used, window=self.window, share=round(share, 4))

    def take_turn_cost(self) -> float | None:
        """The open turn's cost; the next turn starts at zero."""
        cost, self._turn = self._turn, (None if self._run is None else 0.0)
        return _round(cost)

    @property
    def run_cost(self) -> float | None:
        return _round(self._run)

    def exceeded(self, usage: Usage) -> BudgetExceeded | None:
        """The budget the run's ``usage`` (and cost) went over, if any."""
        max_tokens = self.config.max_tokens_per_run
        tokens = processed_tokens(usage)
        if max_tokens is not None and tokens > max_tokens:
            return BudgetExceeded(limit="tokens", spent=tokens, allowed=max_tokens)
        max_cost = self.config.max_cost_per_run
        if max_cost is not None and self._run is not None and self._run > max_cost:
            return BudgetExceeded(limit="cost", spent=round(self._run, 6), allowed=max_cost)
        return None

    def cost_budget_unknown(self) -> bool:
        """``harness.maxCostPerRun`` is set and cannot be applied (a model's
        price is unknown): True the first time only, to say it once."""
        if (
            self.config.max_cost_per_run is None
            or self._run is not None
            or self.cost_budget_unknown_said
        ):
            return False
        self.cost_budget_unknown_said = True
        return True


def budget_reason(event: BudgetExceeded) -> str:
    """The run's failure reason for an exceeded budget."""
    if event.limit == "tokens":
        return (
            f"budget: the run processed {int(event.spent):,} tokens, more than "
            f"harness.maxTokensPerRun ({int(event.allowed):,}); continue to go on"
        )
    return (
        f"budget: the run cost ${event.spent:.4f}, more than harness.maxCostPerRun "
        f"(${event.allowed:.4f}); continue to go on"
    )


def _tokens(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def format_cost(cost: float) -> str:
    """USD, with cents, or four decimals below a cent."""
    return f"${cost:.2f}" if cost >= 0.01 or cost == 0 else f"${cost:.4f}"


def spend_line(usage: Usage, context: ContextShare | None, cost: float | None) -> str:
    """``12.3k in (4.1k cached) / 1.1k out · 34% of context · $0.04``: the
    input counts cache reads and writes (the cached part said when there is
    one); the context share when known; the cost only when known."""
    tokens_in = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    cached = f" ({_tokens(usage.cache_read_tokens)} cached)" if usage.cache_read_tokens else ""
    parts = [f"{_tokens(tokens_in)} in{cached} / {_tokens(usage.output_tokens)} out"]
    if context is not None:
        parts.append(f"{round(context.share * 100)}% of context")
    if cost is not None:
        parts.append(format_cost(cost))
    return " · ".join(parts)
