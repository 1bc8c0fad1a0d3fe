"""Token usage per turn and per session, and an estimated cost in US dollars.

The prices are an ESTIMATE from the public price list (USD per million tokens) at the time of
writing; the bill is the authority. A model not in the table costs 0 and is flagged as unpriced,
so the UI can say "cost unknown" instead of showing a wrong number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from tools.records import datarecord

__all__ = ["PRICES", "CostEstimate", "Price", "SessionUsage", "Usage", "cost_usd", "estimate_cost"]


@datarecord(frozen=True, slots=True)
class Usage:
    """Tokens of one or more turns. ``input`` excludes cached tokens, as the API reports it."""

    input: int = 0
    output: int = 0
    cache_creation: int = 0
    cache_read: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_creation + other.cache_creation,
            self.cache_read + other.cache_read,
        )

    @property
    def total_input(self) -> int:
        """Everything the model read: fresh, cache-writing and cache-reading input."""
        return self.input + self.cache_creation + self.cache_read

    @classmethod
    def from_api(cls, usage: Mapping[str, Any] | Any) -> Usage:
        """From an API usage object or dict; missing or null fields count as 0."""

        def get(name: str) -> int:
            value = usage.get(name) if isinstance(usage, Mapping) else getattr(usage, name, None)
            return int(value) if isinstance(value, int) else 0

        return cls(
            get("input_tokens"),
            get("output_tokens"),
            get("cache_creation_input_tokens"),
            get("cache_read_input_tokens"),
        )


@datarecord(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float  # 5-minute ephemeral cache writes
    cache_read: float


# Keys are id prefixes; the longest matching prefix wins (dated ids like -20250929 match).
PRICES: dict[str, Price] = {
    "claude-opus-4-7": Price(5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-6": Price(5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-5": Price(5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-1": Price(15.0, 75.0, 18.75, 1.50),
    "claude-opus-4": Price(15.0, 75.0, 18.75, 1.50),
    "claude-sonnet-4-6": Price(3.0, 15.0, 3.75, 0.30),
    "claude-sonnet-4-5": Price(3.0, 15.0, 3.75, 0.30),
    "claude-sonnet-4": Price(3.0, 15.0, 3.75, 0.30),
    "claude-3-7-sonnet": Price(3.0, 15.0, 3.75, 0.30),
    "claude-haiku-4-5": Price(1.0, 5.0, 1.25, 0.10),
    "claude-3-5-haiku": Price(0.80, 4.0, 1.0, 0.08),
}


def price_for(model: str) -> Price | None:
    matches = [p for p in PRICES if model.startswith(p)]
    return PRICES[max(matches, key=len)] if matches else None


@datarecord(frozen=True, slots=True)
class CostEstimate:
    usd: float
    priced: bool  # False: the model is not in the table and usd is 0


def estimate_cost(model: str, usage: Usage) -> CostEstimate:
    """The estimated cost of ``usage`` on ``model``; unknown model: 0, ``priced=False``."""
    price = price_for(model)
    if price is None:
        return CostEstimate(0.0, False)
    usd = (
        usage.input * price.input
        + usage.output * price.output
        + usage.cache_creation * price.cache_write
        + usage.cache_read * price.cache_read
    ) / 1_000_000
    return CostEstimate(usd, True)


def cost_usd(model: str, usage: Usage) -> float:
    """Shorthand for ``estimate_cost(model, usage).usd`` (0 for an unknown model)."""
    return estimate_cost(model, usage).usd


@datarecord
class SessionUsage:
    """Usage and estimated cost accumulated over a session's turns (possibly several models)."""

    total: Usage = field(default_factory=Usage)
    by_model: dict[str, Usage] = field(default_factory=dict)
    turns: int = 0
    cost_usd: float = 0.0
    unpriced_models: set[str] = field(default_factory=set)

    def add(self, model: str, usage: Usage) -> None:
        self.turns += 1
        self.total = self.total + usage
        self.by_model[model] = self.by_model.get(model, Usage()) + usage
        estimate = estimate_cost(model, usage)
        self.cost_usd += estimate.usd
        if not estimate.priced:
            self.unpriced_models.add(model)

    @property
    def cost_is_complete(self) -> bool:
        """False when some turns ran on a model without a price: the cost is a lower bound."""
        return not self.unpriced_models
