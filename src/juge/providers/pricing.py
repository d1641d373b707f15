"""Cost of a call from a price table (US$ per million tokens), which the eval file can extend.

Prices change; the built-in rows are a starting point with the date they were read.
A model with no row has cost None (unknown), never 0.

Batch APIs (OpenAI Batch, Anthropic Message Batches) charge half the list price; an eval's
``[prices]`` row may set its own ``batch_input`` and ``batch_output``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# model name prefix -> (input $/Mtok, output $/Mtok); list prices as published in 2025.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-5-sonnet": (3.00, 15.00),
}


def price_table(extra: Mapping[str, Mapping[Any, float]] | None = None) -> dict[str, tuple[float, float]]:
    table = dict(DEFAULT_PRICES)
    for model, row in (extra or {}).items():
        table[model] = (float(row["input"]), float(row["output"]))
    return table


BATCH_DISCOUNT = 0.5  # OpenAI and Anthropic both bill batch requests at half the list price


def batch_price_table(extra: Mapping[str, Mapping[Any, float]] | None = None) -> dict[str, tuple[float, float]]:
    """The prices of batch requests: half of each list price, or a row's own batch_input/batch_output."""
    table = {model: (p_in * BATCH_DISCOUNT, p_out * BATCH_DISCOUNT) for model, (p_in, p_out) in DEFAULT_PRICES.items()}
    for model, row in (extra or {}).items():
        p_in, p_out = float(row["input"]), float(row["output"])
        table[model] = (
            float(row.get("batch_input", p_in * BATCH_DISCOUNT)),
            float(row.get("batch_output", p_out * BATCH_DISCOUNT)),
        )
    return table


def call_cost(
    model: str, tokens_in: int | None, tokens_out: int | None, table: Mapping[str, tuple[float, float]]
) -> float | None:
    """Cost in US$, using the longest matching prefix of `model` in `table`."""
    if tokens_in is None or tokens_out is None:
        return None
    matches = [name for name in table if model.startswith(name)]
    if not matches:
        return None
    price_in, price_out = table[max(matches, key=len)]
    return (tokens_in * price_in + tokens_out * price_out) / 1_000_000
