"""Agreement between two label sequences: raw agreement and Cohen's kappa.

Signatures follow scikit-learn's metrics: ``fn(y1, y2, *, ...)``. Labels may be
strings or numbers; missing values must be removed by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

KappaWeights = Literal["linear", "quadratic"] | None


def _paired(y1: ArrayLike, y2: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(y1), np.asarray(y2)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"y1 and y2 must be 1-d and of equal length, got shapes {a.shape} and {b.shape}")
    return a, b


def agreement(y1: ArrayLike, y2: ArrayLike) -> float | None:
    """Share of positions where the two labels are equal: ``mean(y1 == y2)``.

    Returns None for empty input (undefined, never a division by zero).
    """
    a, b = _paired(y1, y2)
    if a.size == 0:
        return None
    return float(np.mean(a == b))


def kappa_weight_matrix(n_labels: int, weights: KappaWeights = None) -> np.ndarray:
    """Disagreement weights ``w[i, j]`` over label positions ``i, j`` (0-based, in label order).

    None: ``w = 1 - [i == j]``; "linear": ``|i - j|``; "quadratic": ``(i - j)**2``.
    As in scikit-learn, weighted kappa uses the positions of the labels in the
    (sorted or given) label order, not their numeric values.
    """
    idx = np.arange(n_labels)
    diff = idx[:, None] - idx[None, :]
    if weights is None:
        return (diff != 0).astype(float)
    if weights == "linear":
        return np.abs(diff).astype(float)
    if weights == "quadratic":
        return (diff**2).astype(float)
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def kappa_from_tables(tables: ArrayLike, *, weights: KappaWeights = None) -> np.ndarray:
    """Cohen's kappa for every confusion table in ``tables`` of shape ``(..., K, K)``.

    Rows are the first rater's labels, columns the second's, in label order.
    With observed proportions ``p_ij``, marginals ``r_i = sum_j p_ij``,
    ``c_j = sum_i p_ij`` and disagreement weights ``w_ij``
    (see :func:`kappa_weight_matrix`)::

        kappa = 1 - sum_ij w_ij p_ij / sum_ij w_ij r_i c_j

    (Cohen 1960, "A coefficient of agreement for nominal scales"; weighted form
    Cohen 1968). This is the formula of ``sklearn.metrics.cohen_kappa_score``.

    Conventions: when the expected disagreement is 0 (both raters used one and
    the same label throughout, so chance agreement is 1) kappa is 1.0 if the
    observed disagreement is 0, else 0.0 (scikit-learn returns NaN there).
    An empty table (total 0) gives NaN: callers turn it into None.
    """
    t = np.asarray(tables, dtype=float)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError(f"tables must have shape (..., K, K), got {t.shape}")
    w = kappa_weight_matrix(t.shape[-1], weights)
    total = t.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = t / total[..., None, None]
        rows, cols = p.sum(axis=-1), p.sum(axis=-2)
        observed = np.einsum("...ij,ij->...", p, w)
        expected = np.einsum("...i,...j,ij->...", rows, cols, w)
        kappa = 1.0 - observed / expected
    degenerate = expected == 0
    kappa = np.where(degenerate, np.where(observed == 0, 1.0, 0.0), kappa)
    return np.where(total > 0, kappa, np.nan)


def label_order(y1: np.ndarray, y2: np.ndarray, labels: Sequence | None) -> np.ndarray:
    """The label order: ``labels`` as given, else the sorted union of observed labels.

    Raises ValueError if a value is not in ``labels`` (scikit-learn silently drops
    such pairs; here that would hide a data error).
    """
    if labels is None:
        return np.unique(np.concatenate([y1, y2]))
    order = np.asarray(labels)
    if len(np.unique(order)) != len(order):
        raise ValueError(f"labels contain duplicates: {list(labels)}")
    unknown = np.setdiff1d(np.unique(np.concatenate([y1, y2])), order)
    if unknown.size:
        raise ValueError(f"values {unknown.tolist()} are not in labels {list(labels)}")
    return order


def label_codes(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Position of each value in ``order`` (all values must be present)."""
    sorter = np.argsort(order)
    return sorter[np.searchsorted(order, values, sorter=sorter)]


def confusion_table(y1: ArrayLike, y2: ArrayLike, *, labels: Sequence | None = None) -> np.ndarray:
    """``K x K`` counts: ``table[i, j]`` = number of positions with ``y1 = labels[i]`` and ``y2 = labels[j]``."""
    a, b = _paired(y1, y2)
    order = label_order(a, b, labels)
    k = len(order)
    if a.size == 0:
        return np.zeros((k, k), dtype=np.int64)
    flat = label_codes(a, order) * k + label_codes(b, order)
    return np.bincount(flat, minlength=k * k).reshape(k, k)


def cohen_kappa(
    y1: ArrayLike,
    y2: ArrayLike,
    *,
    labels: Sequence | None = None,
    weights: KappaWeights = None,
) -> float | None:
    """Cohen's kappa between two raters, optionally linear- or quadratic-weighted.

    ``kappa = (p_o - p_e) / (1 - p_e)`` in the unweighted case; the general
    (weighted) formula and the conventions are in :func:`kappa_from_tables`.
    ``labels`` fixes the label order (needed for weighted kappa on ordinal labels
    that are not sorted naturally); by default the sorted union of observed
    labels is used, so numeric ordinal labels are ordered numerically.
    Matches ``sklearn.metrics.cohen_kappa_score`` (Cohen 1960; 1968).
    Returns None for empty input.
    """
    table = confusion_table(y1, y2, labels=labels)
    if table.sum() == 0:
        return None
    return float(kappa_from_tables(table, weights=weights))


def pair_tables(
    y1: ArrayLike,
    y2: ArrayLike,
    item_index: ArrayLike,
    labels: Sequence,
    *,
    n_items: int | None = None,
) -> np.ndarray:
    """Per-item confusion tables ``(n_items, K, K)`` from pooled pairs.

    Pair ``p`` compares ``y1[p]`` (row) with ``y2[p]`` (column) on item
    ``item_index[p]``. With ``n_items`` given, ``item_index`` must be integer
    positions in ``[0, n_items)`` (items without pairs get an all-zero table, so
    they still take part in resampling). Without it, ``item_index`` may hold any
    item ids; rows follow ``np.unique(item_index)`` (sorted ids).
    Summing the result over items gives :func:`confusion_table` of the pooled pairs.
    """
    a, b = _paired(y1, y2)
    items = np.asarray(item_index)
    if items.shape != a.shape:
        raise ValueError(f"item_index must have one entry per pair, got {items.shape} for {a.shape} pairs")
    order = label_order(a, b, labels)
    k = len(order)
    if n_items is None:
        _, positions = np.unique(items, return_inverse=True)
        n_items = int(positions.max()) + 1 if items.size else 0
    else:
        if items.size and not np.issubdtype(items.dtype, np.integer):
            raise ValueError("item_index must be integer positions when n_items is given")
        if items.size and (items.min() < 0 or items.max() >= n_items):
            raise ValueError(f"item_index must lie in [0, {n_items}), got range [{items.min()}, {items.max()}]")
        positions = items.astype(np.int64)
    if a.size == 0:
        return np.zeros((n_items, k, k), dtype=np.int64)
    flat = (positions * k + label_codes(a, order)) * k + label_codes(b, order)
    return np.bincount(flat, minlength=n_items * k * k).reshape(n_items, k, k)
