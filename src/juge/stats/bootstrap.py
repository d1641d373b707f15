"""Clustered percentile bootstrap over items, vectorised.

Every interval in juge resamples ITEMS with replacement and carries all of an
item's pairs or votes with it (a cluster bootstrap; Davison & Hinkley 1997,
"Bootstrap Methods and their Application", section 3.8). A resample is a row of
multinomial counts ``W[b, i]`` = how often item ``i`` was drawn, so any
statistic built from per-item sums is a matrix product ``W @ per_item`` -- one
product for all resamples, no Python loop over resamples or items.

The interval is the percentile interval (Efron & Tibshirani 1993, ch. 13):
the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the resampled
statistic. Resamples where the statistic is undefined (e.g. a resample that
drew only items without pairs) are left out of the quantiles.

The same ``seed`` and number of items give the same resamples in every
function here, so estimates made by separate calls on the same items (listed
in the same order) are paired. The counts are cached per
``(n_items, n_resamples, seed)``, so many figures on one item set cost one draw.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from juge.stats.agreement import KappaWeights, kappa_from_tables
from juge.stats.estimate import Estimate

N_RESAMPLES = 2000
LEVEL = 0.95


def resample_weights(n_items: int, *, n_resamples: int = N_RESAMPLES, seed: int = 0) -> np.ndarray:
    """Draw counts, shape ``(n_resamples, n_items)``; each row sums to ``n_items``.

    Row ``b`` is bootstrap resample ``b``: ``n_items`` items drawn uniformly with
    replacement, item ``i`` drawn ``W[b, i]`` times (so each row is
    Multinomial(n_items, 1/n_items)). Deterministic for a given
    ``(n_items, n_resamples, seed)``.
    """
    if n_items < 0 or n_resamples < 1:
        raise ValueError(f"need n_items >= 0 and n_resamples >= 1, got {n_items} and {n_resamples}")
    draws = np.random.default_rng(seed).integers(0, max(n_items, 1), size=(n_resamples, n_items))
    flat = draws + np.arange(n_resamples)[:, None] * n_items
    return np.bincount(flat.ravel(), minlength=n_resamples * n_items).reshape(n_resamples, n_items)


@lru_cache(maxsize=8)
def _float_weights(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """:func:`resample_weights` as floats for BLAS products, cached read-only.

    A study computes many estimates on the same items; drawing the counts once
    per ``(n_items, n_resamples, seed)`` keeps them identical and cheap.
    """
    w = resample_weights(n_items, n_resamples=n_resamples, seed=seed).astype(float)
    w.flags.writeable = False
    return w


def percentile_interval(resampled: ArrayLike, *, level: float = LEVEL) -> tuple[float | None, float | None]:
    """Percentile interval of the finite resampled values; ``(None, None)`` if there are none."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    values = np.asarray(resampled, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None, None
    low, high = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def _per_item(num: ArrayLike, den: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    n, d = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if n.ndim != 1 or n.shape != d.shape:
        raise ValueError(f"num and den must be 1-d per-item arrays of equal length, got {n.shape} and {d.shape}")
    if (d < 0).any():
        raise ValueError("den must be non-negative (it counts units per item)")
    return n, d


def _ratio(num_total: np.ndarray, den_total: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den_total > 0, num_total / np.where(den_total > 0, den_total, 1.0), np.nan)


def ratio_estimate(
    num: ArrayLike,
    den: ArrayLike,
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
) -> Estimate:
    """Pooled ratio ``sum(num) / sum(den)`` with a clustered bootstrap interval.

    ``num[i]`` and ``den[i]`` are item ``i``'s numerator and denominator, e.g.
    equal pairs and pairs on that item, so the value is the pooled agreement.
    Items with ``den == 0`` are allowed (they are resampled but add nothing).
    Resample ``b`` gives ``(W @ num)[b] / (W @ den)[b]``.

    ``n`` is the pooled number of units, ``sum(den)`` (pairs, votes);
    ``n_items`` is the number of items. The value is None when ``sum(den) == 0``.
    """
    n_arr, d_arr = _per_item(num, den)
    value = _ratio(n_arr.sum(), d_arr.sum())
    w = _float_weights(n_arr.size, n_resamples, seed)
    low, high = percentile_interval(_ratio(w @ n_arr, w @ d_arr), level=level)
    return Estimate(float(value), low, high, n=int(round(d_arr.sum())), n_items=n_arr.size)


def paired_ratio_difference(
    num_a: ArrayLike,
    den_a: ArrayLike,
    num_b: ArrayLike,
    den_b: ArrayLike,
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
) -> Estimate:
    """Difference of two pooled ratios on the same items, ``A - B``, with a paired interval.

    Both ratios are recomputed on the SAME resampled items in each resample
    (``W @ num_a / W @ den_a - W @ num_b / W @ den_b``), so item difficulty that
    affects both cancels out. All four arrays are per item, aligned.
    ``n`` is the smaller of the two pooled unit counts ``min(sum(den_a), sum(den_b))``;
    the value is None when either ratio is undefined.
    """
    na, da = _per_item(num_a, den_a)
    nb, db = _per_item(num_b, den_b)
    if na.shape != nb.shape:
        raise ValueError(f"A and B must cover the same items, got {na.size} and {nb.size}")
    value = _ratio(na.sum(), da.sum()) - _ratio(nb.sum(), db.sum())
    w = _float_weights(na.size, n_resamples, seed)
    resampled = _ratio(w @ na, w @ da) - _ratio(w @ nb, w @ db)
    low, high = percentile_interval(resampled, level=level)
    n = int(round(min(da.sum(), db.sum())))
    return Estimate(float(value), low, high, n=n, n_items=na.size)


def kappa_estimate(
    per_item_tables: ArrayLike,
    *,
    weights: KappaWeights = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
) -> Estimate:
    """Cohen's kappa of the pooled table with a clustered bootstrap interval.

    ``per_item_tables`` has shape ``(n_items, K, K)`` (see
    :func:`juge.stats.agreement.pair_tables`). The value is the kappa of the
    pooled table ``sum_i T_i``; resample ``b`` uses the pooled table
    ``sum_i W[b, i] T_i`` (one tensor product for all resamples).
    ``n`` is the number of pooled pairs; None value when there are none.
    """
    tables = np.asarray(per_item_tables, dtype=float)
    if tables.ndim != 3 or tables.shape[1] != tables.shape[2]:
        raise ValueError(f"per_item_tables must have shape (n_items, K, K), got {tables.shape}")
    pooled = tables.sum(axis=0)
    value = kappa_from_tables(pooled, weights=weights)
    n_items, k = tables.shape[0], tables.shape[1]
    w = _float_weights(n_items, n_resamples, seed)
    pooled_resamples = (w @ tables.reshape(n_items, k * k)).reshape(-1, k, k)
    resampled = kappa_from_tables(pooled_resamples, weights=weights)
    low, high = percentile_interval(resampled, level=level)
    return Estimate(float(value), low, high, n=int(round(pooled.sum())), n_items=tables.shape[0])


def _cluster_layout(codes: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows sorted by cluster, and each cluster's size and start in that order."""
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=n_clusters)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return order, sizes, starts


def _rows_for_counts(layout: tuple[np.ndarray, np.ndarray, np.ndarray], counts: np.ndarray) -> np.ndarray:
    order, sizes, starts = layout
    chosen = np.repeat(np.arange(counts.size), counts)
    lengths = sizes[chosen]
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return order[np.repeat(starts[chosen], lengths) + offsets]


def cluster_resample_indices(clusters: ArrayLike, counts: np.ndarray) -> np.ndarray:
    """Row indices of one resample: every row of cluster ``c`` repeated ``counts[c]`` times.

    ``clusters`` holds one cluster code (0..n_clusters-1) per row. Vectorised:
    no loop over clusters.
    """
    counts = np.asarray(counts)
    return _rows_for_counts(_cluster_layout(np.asarray(clusters), counts.size), counts)


def statistic_estimate(
    fn: Callable[..., float | None],
    *arrays: ArrayLike,
    clusters: ArrayLike | None = None,
    n: int | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
) -> Estimate:
    """Any statistic ``fn(*arrays)`` with a clustered bootstrap interval -- the SLOW path.

    Use it for statistics that are not sums of per-item parts (Pearson,
    Spearman, Krippendorff's alpha). The arrays are resampled along axis 0, row
    by row, with rows of the same cluster moving together; ``clusters`` gives a
    cluster id per row (default: each row is its own cluster). ``fn`` is called
    once per resample (a Python loop over resamples, not over items), and may
    return None when undefined. For Krippendorff's alpha pass items x raters
    data and ``fn=lambda d: krippendorff_alpha(d.T)``.

    Resamples use :func:`resample_weights` on the clusters, ordered by sorted
    cluster id, so with the same seed they match the fast ratio/kappa estimates
    on per-item arrays listed in that order.
    ``n`` defaults to the number of rows.
    """
    data = [np.asarray(a) for a in arrays]
    if not data:
        raise ValueError("statistic_estimate needs at least one array")
    n_rows = data[0].shape[0]
    if any(a.shape[0] != n_rows for a in data):
        raise ValueError(f"all arrays must have the same length along axis 0, got {[a.shape[0] for a in data]}")
    if clusters is None:
        codes = np.arange(n_rows)
    else:
        ids = np.asarray(clusters)
        if ids.shape != (n_rows,):
            raise ValueError(f"clusters must have one id per row ({n_rows}), got shape {ids.shape}")
        _, codes = np.unique(ids, return_inverse=True)
    n_clusters = int(codes.max()) + 1 if n_rows else 0
    value = fn(*data) if n_rows else None
    w = resample_weights(n_clusters, n_resamples=n_resamples, seed=seed)
    resampled = np.full(n_resamples, np.nan)
    layout = _cluster_layout(codes, n_clusters)
    for b in range(n_resamples if n_rows else 0):
        rows = _rows_for_counts(layout, w[b])
        result = fn(*(a[rows] for a in data))
        if result is not None:
            resampled[b] = result
    low, high = percentile_interval(resampled, level=level)
    return Estimate(value, low, high, n=n_rows if n is None else n, n_items=n_clusters)
