"""What a model's tokens cost: a price per million tokens per model name,
from a small built-in table overridable by the configuration
(``model.prices``).

A model whose price is not known has no cost (None), never a guess: a name
matches a table entry exactly, or an entry followed by a release suffix only
(``-2024-08-06``, ``-20250514``, ``-latest``), so ``gpt-4.1-nano`` is not
priced as ``gpt-4.1``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from rein.harness.messages import Usage

__all__ = ["BUILTIN_PRICES", "ModelPrice", "PriceTable", "usage_cost"]


class ModelPrice(BaseModel):
    """USD per million tokens. Cache reads and writes not given cost what
    input tokens cost."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(None, ge=0)
    cache_write: float | None = Field(None, ge=0)


def _p(i: float, o: float, read: float, write: float | None = None) -> ModelPrice:
    return ModelPrice(input=i, output=o, cache_read=read, cache_write=write)


#: Public list prices (USD per million tokens) of well-known models, as the
#: providers publish them; ``model.prices`` overrides or adds entries.
BUILTIN_PRICES: Mapping[str, ModelPrice] = {
    "gpt-4o": _p(2.5, 10.0, 1.25),
    "gpt-4o-mini": _p(0.15, 0.6, 0.075),
    "gpt-4.1": _p(2.0, 8.0, 0.5),
    "gpt-4.1-mini": _p(0.4, 1.6, 0.1),
    "gpt-4.1-nano": _p(0.1, 0.4, 0.025),
    "o3-mini": _p(1.1, 4.4, 0.55),
    "o4-mini": _p(1.1, 4.4, 0.275),
    "claude-opus-4": _p(15.0, 75.0, 1.5, 18.75),
    "claude-sonnet-4": _p(3.0, 15.0, 0.3, 3.75),
    "claude-3-7-sonnet": _p(3.0, 15.0, 0.3, 3.75),
    "claude-3-5-sonnet": _p(3.0, 15.0, 0.3, 3.75),
    "claude-3-5-haiku": _p(0.8, 4.0, 0.08, 1.0),
}

#: What may follow a table entry in a model name: a release date or "latest".
_RELEASE = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


class PriceTable:
    """The built-in prices with ``overrides`` (``model.prices``) on top."""

    def __init__(self, overrides: Mapping[str, ModelPrice] | None = None) -> None:
        self._prices = {**BUILTIN_PRICES, **(overrides or {})}

    def price(self, model: str) -> ModelPrice | None:
        """The price of ``model`` (a name or a name with a release suffix);
        None when it is not known."""
        found = self._prices.get(model)
        if found is not None:
            return found
        release = _RELEASE.search(model)
        if release is None:
            return None
        return self._prices.get(model[: release.start()])

    def cost(self, model: str, usage: Usage) -> float | None:
        """USD of ``usage`` spent by ``model``; None when its price is unknown."""
        price = self.price(model)
        return None if price is None else usage_cost(price, usage)


def usage_cost(price: ModelPrice, usage: Usage) -> float:
    read = price.input if price.cache_read is None else price.cache_read
    write = price.input if price.cache_write is None else price.cache_write
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * read
        + usage.cache_write_tokens * write
    ) / 1_000_000
