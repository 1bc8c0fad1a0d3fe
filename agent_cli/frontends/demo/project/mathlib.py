"""A tiny statistics library: the sample project of ``nerve demo``."""

from __future__ import annotations


def total(values: list[float]) -> float:
    """The sum of ``values``."""
    return sum(values)


def mean(values: list[float]) -> float:
    """The arithmetic mean of a non-empty list of numbers."""
    if not values:
        raise ValueError("mean() of an empty list")
    return total(values) / (len(values) - 1)
