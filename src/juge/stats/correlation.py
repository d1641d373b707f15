"""Correlation between two numeric score sequences (single-score judges vs people)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import rankdata

from juge.stats.estimate import Estimate


def _numeric_pair(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"x and y must be 1-d and of equal length, got shapes {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("x and y must not contain NaN or infinity: drop missing values first")
    return a, b


def pearson(x: ArrayLike, y: ArrayLike) -> float | None:
    """Pearson's product-moment correlation.

    ``r = sum (x - mean x)(y - mean y) / sqrt(sum (x - mean x)^2 * sum (y - mean y)^2)``
    (Pearson 1895; as ``scipy.stats.pearsonr``). Returns None when undefined:
    fewer than two points, or either input constant.
    """
    a, b = _numeric_pair(x, y)
    if a.size < 2:
        return None
    da, db = a - a.mean(), b - b.mean()
    scale = np.sqrt(np.sum(da * da) * np.sum(db * db))
    if scale == 0 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(np.clip(np.sum(da * db) / scale, -1.0, 1.0))


def spearman(x: ArrayLike, y: ArrayLike) -> float | None:
    """Spearman's rank correlation: Pearson's r of the ranks, ties given their average rank.

    (Spearman 1904; as ``scipy.stats.spearmanr``.) Returns None when undefined
    (fewer than two points, or either input constant).
    """
    a, b = _numeric_pair(x, y)
    return pearson(rankdata(a), rankdata(b))


def _clustered_rows(
    x: ArrayLike, y: ArrayLike, clusters: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The pairs and each pair's cluster code, codes in sorted cluster-id order (as statistic_estimate)."""
    a, b = _numeric_pair(x, y)
    if clusters is None:
        return a, b, np.arange(a.size), a.size
    ids = np.asarray(clusters)
    if ids.shape != a.shape:
        raise ValueError(f"clusters must have one id per pair ({a.size}), got shape {ids.shape}")
    _, codes = np.unique(ids, return_inverse=True)
    return a, b, codes.ravel(), int(codes.max()) + 1 if a.size else 0


def _spread(weights: np.ndarray, cluster_low: np.ndarray, cluster_high: np.ndarray) -> np.ndarray:
    """Whether the drawn clusters' values differ: the highest drawn value above the lowest."""
    drawn = weights > 0
    return np.where(drawn, cluster_high, -np.inf).max(axis=1) > np.where(drawn, cluster_low, np.inf).min(axis=1)


def _near_constant(n: np.ndarray, total: np.ndarray, squares: np.ndarray) -> np.ndarray:
    """Resamples whose sum of squared deviations is within rounding of zero (their values may all be equal)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = squares - total * total / np.where(n > 0, n, 1)
    return spread <= 1e-9 * np.maximum(squares, np.finfo(float).tiny)


def _pearson_of_sums(*sums: np.ndarray) -> np.ndarray:
    """Pearson's r from the sums (n, x, y, x^2, y^2, xy) over n pairs (NaN when n < 2)."""
    n, sx, sy, sxx, syy, sxy = sums
    with np.errstate(invalid="ignore", divide="ignore"):
        safe = np.where(n > 0, n, 1)
        cov, vx, vy = sxy - sx * sy / safe, sxx - sx * sx / safe, syy - sy * sy / safe
        r = np.clip(cov / np.sqrt(vx * vy), -1.0, 1.0)
    return np.where(n >= 2, r, np.nan)


def _correlation_estimate(
    kind: str,
    x: ArrayLike,
    y: ArrayLike,
    *,
    clusters: ArrayLike | None,
    n_resamples: int,
    seed: int,
    level: float,
) -> Estimate:
    from scipy import sparse

    from juge.stats.bootstrap import chunks, item_count_blocks, out_of_memory_named, percentile_interval, summed

    a, b, codes, n_clusters = _clustered_rows(x, y, clusters)
    value = (pearson if kind == "pearson" else spearman)(a, b) if a.size else None
    if not a.size:
        return Estimate(None, None, None, n=0, n_items=0)
    lows, highs = [], []
    for v in (a, b):  # each cluster's lowest and highest value, to tell a constant resample exactly
        lowest, highest = np.full(n_clusters, np.inf), np.full(n_clusters, -np.inf)
        np.minimum.at(lowest, codes, v)
        np.maximum.at(highest, codes, v)
        lows.append(lowest)
        highs.append(highest)
    resampled = []
    with out_of_memory_named(n_clusters, n_resamples):
        blocks = item_count_blocks(n_clusters, n_resamples, seed)
        if kind == "pearson":  # sums of x, y, x^2, y^2, xy per cluster; centred, so no sum is large
            xc, yc = a - a.mean(), b - b.mean()
            parts = [np.ones_like(xc), xc, yc, xc * xc, yc * yc, xc * yc]
            stats = np.column_stack([np.bincount(codes, weights=p, minlength=n_clusters) for p in parts])
            for chunk in chunks(blocks, max(n_clusters, 6)):
                sums = summed(chunk, stats).T
                r = _pearson_of_sums(*sums)
                # a constant side leaves only rounding in its variance: look at those resamples' values
                near = np.flatnonzero(_near_constant(sums[0], sums[1], sums[3]) | _near_constant(*sums[[0, 2, 4]]))
                if near.size:
                    drawn = chunk[near]
                    varies = _spread(drawn, lows[0], highs[0]) & _spread(drawn, lows[1], highs[1])
                    r[near] = np.where(varies, r[near], np.nan)
                resampled.append(r)
        else:  # ranks of each value in the resample from the counts of the values drawn
            xv, xcode = np.unique(a, return_inverse=True)
            yv, ycode = np.unique(b, return_inverse=True)
            ones = np.ones(a.size)
            x_counts = sparse.csr_array((ones, (codes, xcode.ravel())), shape=(n_clusters, xv.size))
            y_counts = sparse.csr_array((ones, (codes, ycode.ravel())), shape=(n_clusters, yv.size))
            for chunk in chunks(blocks, max(n_clusters, a.size, xv.size, yv.size)):
                mx, my = summed(chunk, x_counts), summed(chunk, y_counts)
                rx = np.cumsum(mx, axis=1) - (mx - 1) / 2  # average rank of each value's ties
                ry = np.cumsum(my, axis=1) - (my - 1) / 2
                n = mx.sum(axis=1)
                sxy = np.einsum("bp,bp->b", chunk[:, codes] * rx[:, xcode.ravel()], ry[:, ycode.ravel()])
                sx = n * (n + 1) / 2
                sxx = np.einsum("bv,bv->b", mx, rx * rx)
                syy = np.einsum("bv,bv->b", my, ry * ry)
                r = _pearson_of_sums(n, sx, sx, sxx, syy, sxy)
                varies = (np.count_nonzero(mx, axis=1) > 1) & (np.count_nonzero(my, axis=1) > 1)
                resampled.append(np.where(varies, r, np.nan))
    low, high = percentile_interval(np.concatenate(resampled), level=level)
    return Estimate(value, low, high, n=int(a.size), n_items=n_clusters)


def pearson_estimate(
    x: ArrayLike,
    y: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Estimate:
    """Pearson's r with a clustered bootstrap interval: the pairs of a cluster (an item) move together.

    The resamples are those of :func:`juge.stats.bootstrap.statistic_estimate` on the same clusters and
    seed, and each resample's r comes from sums over the drawn clusters (count, x, y, x^2, y^2, xy, all
    centred on the means), so no resample is rebuilt. A resample whose x or y is constant has no r (its
    drawn values are compared exactly), as :func:`pearson` has none.
    """
    return _correlation_estimate("pearson", x, y, clusters=clusters, n_resamples=n_resamples, seed=seed, level=level)


def spearman_estimate(
    x: ArrayLike,
    y: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Estimate:
    """Spearman's rank correlation with a clustered bootstrap interval (resamples as :func:`pearson_estimate`).

    A resample's ranks come from how often each distinct value was drawn: the value ``v_k`` drawn ``m_k``
    times ranks ``sum_{j <= k} m_j - (m_k - 1) / 2`` (the average rank of its ties, as ``rankdata``), so
    Pearson's r of the ranks needs one pass over the pairs and no sort per resample.
    """
    return _correlation_estimate("spearman", x, y, clusters=clusters, n_resamples=n_resamples, seed=seed, level=level)
