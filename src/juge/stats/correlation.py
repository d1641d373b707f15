"""Correlation between two numeric score sequences (single-score judges vs people)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import rankdata


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
