"""`rein run`'s printed end of a run: tokens, context share and cost (when
known), and a budget stop."""

from __future__ import annotations

from rein.harness.events import BudgetExceeded, ContextShare, RunEnd
from rein.harness.messages import Usage
from tests.printed import printed


def test_the_run_end_line_says_tokens_context_and_cost() -> None:
    text = printed(
        RunEnd(
            run_id="r1",
            status="completed",
            turns=3,
            usage=Usage(input_tokens=12000, output_tokens=1100, cache_read_tokens=300),
            cost=0.0412,
            context=ContextShare(used=12300, window=100000, share=0.123),
        )
    )
    assert (
        "■ completed after 3 turn(s); 12.3k in (300 cached) / 1.1k out · 12% of context · $0.04"
        in text
    )


def test_no_cost_is_printed_when_the_price_is_unknown() -> None:
    text = printed(RunEnd(run_id="r1", status="completed", turns=1, usage=Usage(input_tokens=5)))
    assert text.rstrip().endswith("after 1 turn(s); 5 in / 0 out")


def test_a_budget_stop_is_printed() -> None:
    text = printed(BudgetExceeded(limit="tokens", spent=1220, allowed=1000))
    assert "budget: tokens 1220 over 1000" in text
