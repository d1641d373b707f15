"""Krippendorff's alpha for two or more raters with missing values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from juge.stats.bootstrap import statistic_estimate
from juge.stats.estimate import Estimate

Level = Literal["nominal", "ordinal", "interval"]


def coincidence_matrix(reliability_data: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Values and coincidence matrix ``o`` of raters x items data (``np.nan`` = missing).

    Only pairable values count (items with at least two values). With ``n_uc`` the
    number of raters giving value ``c`` to item ``u`` and ``m_u = sum_c n_uc``::

        o_ck = sum_u (n_uc * n_uk - [c == k] * n_uc) / (m_u - 1)

    Returns ``(values, o)`` with ``values`` sorted ascending.
    """
    values, counts = value_counts(reliability_data)
    return values, coincidences(counts)


def value_counts(reliability_data: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Values (sorted) and the items x values matrix ``n_uc`` of raters x items data (``np.nan`` = missing)."""
    data = np.asarray(reliability_data, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"reliability_data must be raters x items (2-d), got shape {data.shape}")
    present = ~np.isnan(data)
    values = np.unique(data[present])
    codes = np.searchsorted(values, np.where(present, data, values[0] if values.size else 0.0))
    n_items = data.shape[1]
    counts = np.zeros((n_items, values.size))
    item_of = np.broadcast_to(np.arange(n_items), data.shape)
    np.add.at(counts, (item_of[present], codes[present]), 1.0)
    return values, counts


def coincidences(counts: np.ndarray) -> np.ndarray:
    """The coincidence matrix ``o`` from an items x values count matrix (items with < 2 values add nothing)."""
    counts = np.asarray(counts, dtype=float)
    counts = counts[counts.sum(axis=1) >= 2]
    m = counts.sum(axis=1)
    return np.einsum("uc,uk,u->ck", counts, counts, 1.0 / (m - 1)) - np.diag((counts / (m - 1)[:, None]).sum(axis=0))


def _distance(values: np.ndarray, totals: np.ndarray, level: Level) -> np.ndarray:
    """Squared difference ``delta^2(c, k)`` between values at the given level of measurement."""
    if level == "nominal":
        return 1.0 - np.eye(values.size)
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    if level == "ordinal":
        cumulative = np.concatenate([[0.0], np.cumsum(totals)])
        lo = np.minimum.outer(np.arange(values.size), np.arange(values.size))
        hi = np.maximum.outer(np.arange(values.size), np.arange(values.size))
        between = cumulative[hi + 1] - cumulative[lo]
        return (between - (totals[:, None] + totals[None, :]) / 2) ** 2
    raise ValueError(f"level must be 'nominal', 'ordinal' or 'interval', got {level!r}")


def krippendorff_alpha(reliability_data: ArrayLike, *, level: Level = "nominal") -> float | None:
    """Krippendorff's alpha, ``alpha = 1 - D_o / D_e``.

    ``reliability_data`` is raters x items, numeric, with ``np.nan`` for a missing
    rating (map categorical labels to codes first). From the coincidence matrix
    ``o`` (see :func:`coincidence_matrix`), ``n_c = sum_k o_ck`` and ``n = sum_c n_c``::

        D_o = sum_ck o_ck delta^2(c, k) / n
        D_e = sum_ck n_c n_k delta^2(c, k) / (n (n - 1))

    with ``delta^2`` nominal ``[c != k]``, interval ``(c - k)^2``, ordinal
    ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2`` (Krippendorff 2011, "Computing
    Krippendorff's Alpha-Reliability", sections C-E). Returns None when undefined:
    no item with two ratings, or fewer than two distinct pairable values.
    """
    values, counts = value_counts(reliability_data)
    return alpha_from_counts(counts, values, level=level)


def alpha_from_counts(counts: ArrayLike, values: ArrayLike, *, level: Level = "nominal") -> float | None:
    """Krippendorff's alpha from an items x values matrix of how many raters gave each value to each item
    (the form a bootstrap over items resamples: rows move whole). `values` are the numeric values of the
    columns (only their order matters for ordinal, only equality for nominal)."""
    values = np.asarray(values, dtype=float)
    o = coincidences(np.asarray(counts, dtype=float))
    totals = o.sum(axis=1)
    n = totals.sum()
    if n < 2 or np.count_nonzero(totals) < 2:
        return None
    delta = _distance(values, totals, level)
    observed = np.sum(o * delta) / n
    expected = np.sum(np.outer(totals, totals) * delta) / (n * (n - 1))
    if expected == 0:
        return None
    return float(1.0 - observed / expected)


def alpha_estimate(
    per_item: Sequence[Sequence[Any]],
    *,
    level: Level = "nominal",
    order: Sequence[Any] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Krippendorff's alpha of the raters' values on each item, with a bootstrap interval over items.

    ``per_item`` lists each item's values (one per rater; labels such as ``"A"`` or numbers). Nominal
    values are coded by `order` (or first appearance); ordinal and interval values must be numbers. The
    counts matrix is resampled by item, so an item's votes move together; ``n`` is the number of values.
    """
    if level == "nominal":
        codes = {v: k for k, v in enumerate(order or dict.fromkeys(v for vs in per_item for v in vs))}
        values = np.arange(len(codes), dtype=float)
        column = codes
    else:
        values = np.array(sorted({float(v) for vs in per_item for v in vs}), dtype=float)
        column = {v: k for k, v in enumerate(values.tolist())}
    counts = np.zeros((len(per_item), max(len(values), 1)))
    for i, vs in enumerate(per_item):
        for v in vs:
            counts[i, column[v if level == "nominal" else float(v)]] += 1
    n = int(counts.sum())
    return statistic_estimate(
        lambda c: alpha_from_counts(c, values, level=level),
        counts,
        n=n,
        n_resamples=n_resamples,
        seed=seed,
        level=confidence,
    )
