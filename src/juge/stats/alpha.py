"""Krippendorff's alpha for two or more raters with missing values."""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

Level = Literal["nominal", "ordinal", "interval"]


def coincidence_matrix(reliability_data: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Values and coincidence matrix ``o`` of raters x items data (``np.nan`` = missing).

    Only pairable values count (items with at least two values). With ``n_uc`` the
    number of raters giving value ``c`` to item ``u`` and ``m_u = sum_c n_uc``::

        o_ck = sum_u (n_uc * n_uk - [c == k] * n_uc) / (m_u - 1)

    Returns ``(values, o)`` with ``values`` sorted ascending.
    """
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
    pairable = counts.sum(axis=1) >= 2
    counts = counts[pairable]
    m = counts.sum(axis=1)
    o = np.einsum("uc,uk,u->ck", counts, counts, 1.0 / (m - 1)) - np.diag((counts / (m - 1)[:, None]).sum(axis=0))
    return values, o


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
    values, o = coincidence_matrix(reliability_data)
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
