"""Cost and context in the events and the result, and the per-run budgets
(``harness.maxTokensPerRun``, ``harness.maxCostPerRun``)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from rein.harness import Agent, HarnessConfig
from rein.harness.cost.pricing import BUILTIN_PRICES, ModelPrice, PriceTable, usage_cost
from rein.harness.messages import Usage
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog, assert_well_formed
from tests.fakes.tools import EchoTool

#: $1 per million input tokens, $10 per million output, reads $0.5, writes $2.
PRICE = ModelPrice(input=1.0, output=10.0, cache_read=0.5, cache_write=2.0)


def echo_turn(i: int, o: int) -> dict[str, Any]:
    return {
        "tool_calls": [{"name": "echo", "arguments": {"text": "x"}}],
        "usage": {"input_tokens": i, "output_tokens": o},
    }


def answer(i: int, o: int) -> dict[str, Any]:
    return {"text": "done", "usage": {"input_tokens": i, "output_tokens": o}}


def agent_for(
    script: list[dict[str, Any]],
    *,
    name: str = "priced",
    prices: PriceTable | None = None,
    **cfg: Any,
) -> tuple[Agent, EventLog]:
    agent = Agent(
        ReplayModel(script, name=name),
        tools=[EchoTool()],
        config=HarnessConfig(max_context_tokens=10_000, **cfg),
    )
    agent.prices = prices if prices is not None else PriceTable({"priced": PRICE})
    log = EventLog()
    agent.subscribe(log)
    return agent, log


# ----------------------------------------------------------------- prices


def test_a_price_is_per_million_tokens_of_each_kind() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=100_000,
        cache_read_tokens=2_000_000,
        cache_write_tokens=500_000,
    )
    assert usage_cost(PRICE, usage) == pytest.approx(1.0 + 1.0 + 1.0 + 1.0)


def test_cache_prices_not_given_are_the_input_price() -> None:
    price = ModelPrice(input=2.0, output=4.0)
    usage = Usage(cache_read_tokens=1_000_000, cache_write_tokens=1_000_000)
    assert usage_cost(price, usage) == pytest.approx(4.0)


@pytest.mark.parametrize(
    ("name", "known"),
    [
        pytest.param("gpt-4o", "gpt-4o", id="exact"),
        pytest.param("gpt-4o-2024-08-06", "gpt-4o", id="dated-release"),
        pytest.param("claude-sonnet-4-20250514", "claude-sonnet-4", id="compact-date"),
        pytest.param("gpt-4o-mini", "gpt-4o-mini", id="longer-entry-exact"),
    ],
)
def test_the_built_in_table_knows_well_known_models(name: str, known: str) -> None:
    assert PriceTable().price(name) == BUILTIN_PRICES[known]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("gpt-4o-audio-preview", id="a-variant-is-not-its-base"),
        pytest.param("llama3:8b", id="unknown"),
        pytest.param("", id="empty"),
    ],
)
def test_an_unknown_model_has_no_price_never_a_guess(name: str) -> None:
    assert PriceTable().price(name) is None
    assert PriceTable().cost(name, Usage(input_tokens=10)) is None


def test_the_configuration_overrides_and_adds_prices() -> None:
    table = PriceTable({"gpt-4o": ModelPrice(input=0.0, output=0.0), "local": PRICE})
    assert table.cost("gpt-4o", Usage(input_tokens=1000)) == 0.0
    assert table.price("local") == PRICE


def test_a_price_from_the_wire_is_camel_case_and_not_negative() -> None:
    price = ModelPrice.model_validate({"input": 1, "output": 2, "cacheRead": 0.1})
    assert price.cache_read == 0.1
    with pytest.raises(ValidationError):
        ModelPrice.model_validate({"input": -1, "output": 2})


# ----------------------------------------------------------- in the events


async def test_turn_end_and_run_end_carry_the_cost_and_the_context_share() -> None:
    agent, log = agent_for([echo_turn(1000, 100), answer(3000, 200)])
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    first, second = log.of("turn_end")
    assert first.cost == pytest.approx(0.002)  # 1000 * $1/M + 100 * $10/M
    assert second.cost == pytest.approx(0.005)
    assert second.run_cost == pytest.approx(0.007)
    assert first.context.used == 1000
    assert second.context.used == 3000
    assert second.context.window == 10_000
    assert second.context.share == pytest.approx(0.3)
    (run_end,) = log.of("run_end")
    assert run_end.cost == pytest.approx(0.007) == result.cost
    assert run_end.context == second.context == result.context


async def test_the_context_counts_cached_input_too() -> None:
    turn = {"text": "ok", "usage": {"input_tokens": 100, "cache_read_tokens": 900}}
    agent, log = agent_for([turn])
    await agent.prompt("go")
    (end,) = log.of("turn_end")
    assert end.context.used == 1000
    assert end.cost == pytest.approx((100 * 1.0 + 900 * 0.5) / 1_000_000)


async def test_a_provider_without_input_usage_gets_an_estimated_context_share() -> None:
    agent, log = agent_for([{"text": "ok", "usage": {"output_tokens": 5}}])
    await agent.prompt("hello there, please answer")
    (end,) = log.of("turn_end")
    assert end.context.used > 0  # the request's estimate
    # The cost is of the reported tokens only: an estimate is never priced.
    assert end.cost == pytest.approx(5 * 10.0 / 1_000_000)


async def test_an_unknown_models_cost_is_none() -> None:
    agent, log = agent_for([echo_turn(10, 1), answer(20, 2)], name="mystery")
    result = await agent.prompt("go")
    assert [e.cost for e in log.of("turn_end")] == [None, None]
    assert log.of("run_end")[0].cost is None and result.cost is None
    assert result.context is not None  # the context share is known without a price


@pytest.mark.parametrize(
    ("name", "cost"),
    [pytest.param("priced", 0.0, id="known-price"), pytest.param("mystery", None, id="unknown")],
)
async def test_a_run_that_spent_nothing_costs_nothing_only_with_a_known_price(
    name: str, cost: float | None
) -> None:
    agent, log = agent_for([], name=name)  # the script is empty: the first call fails
    result = await agent.prompt("go")
    assert result.status == "failed"
    assert result.cost == cost and log.of("run_end")[0].cost == cost


# ---------------------------------------------------------------- budgets


async def test_a_token_budget_ends_the_run_before_the_next_turn() -> None:
    agent, log = agent_for(
        [echo_turn(600, 10), echo_turn(600, 10), answer(10, 1)], max_tokens_per_run=1000
    )
    result = await agent.prompt("go")
    assert result.status == "failed"
    assert result.error is not None and result.error.startswith("budget: ")
    assert "harness.maxTokensPerRun (1,000)" in result.error
    assert result.turns == 2  # the third turn never started
    (exceeded,) = log.of("budget_exceeded")
    assert (exceeded.limit, exceeded.spent, exceeded.allowed) == ("tokens", 1220, 1000)
    assert_well_formed(log.types())
    # Every tool call has its result: the run can be continued.
    assert agent.messages[-1].role == "tool"
    follow = await agent.prompt("continue")
    assert follow.status == "completed", follow.error


async def test_a_run_under_its_token_budget_is_not_stopped() -> None:
    agent, log = agent_for([echo_turn(400, 10), answer(400, 10)], max_tokens_per_run=1000)
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    assert log.of("budget_exceeded") == []


async def test_a_cost_budget_ends_the_run_with_a_clear_reason() -> None:
    # 0.002 per turn; the budget is crossed after the second.
    agent, log = agent_for(
        [echo_turn(1000, 100), echo_turn(1000, 100), answer(1, 1)], max_cost_per_run=0.003
    )
    result = await agent.prompt("go")
    assert result.status == "failed"
    assert result.error == (
        "budget: the run cost $0.0040, more than harness.maxCostPerRun ($0.0030); continue to go on"
    )
    (exceeded,) = log.of("budget_exceeded")
    assert exceeded.limit == "cost" and exceeded.spent == pytest.approx(0.004)


async def test_a_cost_budget_without_a_price_is_said_once_and_not_applied() -> None:
    agent, log = agent_for(
        [echo_turn(1000, 100), echo_turn(1000, 100), answer(1, 1)],
        name="mystery",
        max_cost_per_run=0.0001,
    )
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    warnings = [e for e in log.of("error") if e.where == "budget"]
    assert len(warnings) == 1
    assert "'mystery'" in warnings[0].message and "model.prices" in warnings[0].message


def test_budgets_are_off_by_default_and_positive_when_set() -> None:
    config = HarnessConfig()
    assert config.max_tokens_per_run is None and config.max_cost_per_run is None
    parsed = HarnessConfig.model_validate({"maxTokensPerRun": 5000, "maxCostPerRun": 0.5})
    assert parsed.max_tokens_per_run == 5000 and parsed.max_cost_per_run == 0.5
    with pytest.raises(ValidationError):
        HarnessConfig.model_validate({"maxCostPerRun": 0})
    with pytest.raises(ValidationError):
        HarnessConfig.model_validate({"maxTokensPerRun": 0})
