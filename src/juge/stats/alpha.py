"""Krippendorff's alpha for two or more raters with missing values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from juge.stats.bootstrap import chunks, item_count_blocks, out_of_memory_named, percentile_interval, summed
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
    values are coded by `order` (or first appearance); ordinal and interval values must be numbers. Items
    are resampled whole (an item's votes move together), drawn as :func:`juge.stats.bootstrap.statistic_estimate`
    draws them; ``n`` is the number of values.

    Each resample's alpha is computed from sums over the drawn items, not from a rebuilt coincidence matrix:
    with ``n_uc`` the raters giving value ``c`` to item ``u`` (``m_u`` of them, pairable when ``m_u >= 2``),
    the coincidences are ``o = sum_u (n_u n_u^T - diag(n_u)) / (m_u - 1)``, so for a distance
    ``(p_c - p_k)^2`` the observed disagreement ``sum o_ck (p_c - p_k)^2`` is
    ``2 sum_c n_c p_c^2 - 2 sum_u ((n_u . p)^2 - n_u . p^2) / (m_u - 1)``, and the expected one is
    ``2 n sum_c n_c p_c^2 - 2 (sum_c n_c p_c)^2``. Interval: ``p`` the values; ordinal: ``p`` the values'
    mid-ranks in the resample, ``p_c = sum_{g <= c} n_g - n_c / 2`` (Krippendorff's ordinal distance is the
    squared difference of mid-ranks); nominal: ``sum_u (m_u - sum_c (n_uc^2 - n_uc) / (m_u - 1))`` observed
    and ``n^2 - sum_c n_c^2`` expected.
    """
    from scipy import sparse

    if level == "nominal":
        codes = {v: k for k, v in enumerate(order or dict.fromkeys(v for vs in per_item for v in vs))}
        values = np.arange(len(codes), dtype=float)
        column = [codes[v] for vs in per_item for v in vs]
    else:
        values = np.array(sorted({float(v) for vs in per_item for v in vs}), dtype=float)
        index = {v: k for k, v in enumerate(values.tolist())}
        column = [index[float(v)] for vs in per_item for v in vs]
    n_items = len(per_item)
    item_of = np.repeat(np.arange(n_items), [len(vs) for vs in per_item])
    counts = sparse.csr_array(
        (np.ones(item_of.size), (item_of, np.asarray(column, dtype=np.int64))), shape=(n_items, max(values.size, 1))
    )
    n = int(item_of.size)
    if n_items == 0:
        return Estimate(None, None, None, n=n, n_items=0)
    with out_of_memory_named(n_items, n_resamples):
        parts = _AlphaParts(counts, values, level)
        value = parts.alphas(np.ones((1, n_items)))[0]
        blocks = item_count_blocks(n_items, n_resamples, seed)
        resampled = [parts.alphas(chunk) for chunk in chunks(blocks, max(n_items, values.size))]
    low, high = percentile_interval(np.concatenate(resampled), level=confidence)
    return Estimate(float(value), low, high, n=n, n_items=n_items)


class _AlphaParts:
    """Per-item parts of Krippendorff's alpha (see :func:`alpha_estimate`), summed over resampled items."""

    def __init__(self, counts: Any, values: np.ndarray, level: Level) -> None:
        from scipy import sparse

        if level not in ("nominal", "ordinal", "interval"):
            raise ValueError(f"level must be 'nominal', 'ordinal' or 'interval', got {level!r}")
        m = np.asarray(counts.sum(axis=1), dtype=float).ravel()
        pairable = m >= 2
        self.level = level
        self.inverse = np.where(pairable, 1.0 / np.where(pairable, m - 1, 1.0), 0.0)
        self.counts = sparse.csr_array(sparse.diags_array(pairable.astype(float)) @ counts)  # pairable only
        squares = np.asarray(self.counts.multiply(self.counts).sum(axis=1), dtype=float).ravel()
        if level == "nominal":  # observed disagreement of each item: fixed
            self.observed = np.where(pairable, m - (squares - m) * self.inverse, 0.0)
        elif level == "interval":
            present = np.asarray(self.counts.sum(axis=0), dtype=float).ravel()
            centre = float(present @ values / present.sum()) if present.sum() else 0.0
            self.position = values - centre  # distances are differences: centring keeps the sums small
            self.observed = self._observed(self.position[None, :])[:, 0] if counts.shape[0] else np.zeros(0)
        self.observed_by_item = self.observed if level != "ordinal" else None

    def _observed(self, positions: np.ndarray) -> np.ndarray:
        """Per item and position row: ``2 n_u . p^2 - 2 ((n_u . p)^2 - n_u . p^2) / (m_u - 1)``, (items, rows)."""
        linear = self.counts @ positions.T
        square = self.counts @ (positions**2).T
        return 2 * square - 2 * (linear**2 - square) * self.inverse[:, None]

    def alphas(self, weights: np.ndarray) -> np.ndarray:
        """Alpha of each row of item weights (draw counts), NaN where undefined."""
        totals = summed(weights, self.counts)  # n_c per resample
        n = totals.sum(axis=1)
        if self.level == "nominal":
            observed = weights @ self.observed
            expected = n**2 - np.einsum("bc,bc->b", totals, totals)
        else:
            if self.level == "ordinal":
                positions = np.cumsum(totals, axis=1) - totals / 2  # mid-ranks of the values
                square = np.einsum("bc,bc->b", totals, positions**2)
                linear = self.counts @ positions.T
                quadratic = self.counts @ (positions**2).T
                spread = np.einsum("bu,ub->b", weights, (linear**2 - quadratic) * self.inverse[:, None])
                observed = 2 * square - 2 * spread
            else:
                positions = np.broadcast_to(self.position, totals.shape)
                square = totals @ self.position**2
                observed = weights @ self.observed
            expected = 2 * n * square - 2 * np.einsum("bc,bc->b", totals, positions) ** 2
        defined = (n >= 2) & (np.count_nonzero(totals, axis=1) >= 2) & (expected != 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(defined, 1.0 - (n - 1) * observed / np.where(defined, expected, 1.0), np.nan)
