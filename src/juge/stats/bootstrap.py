"""Clustered percentile bootstrap over items, vectorised and compressed.

Every interval in juge resamples ITEMS with replacement and carries all of an
item's pairs or votes with it (a cluster bootstrap; Davison & Hinkley 1997,
"Bootstrap Methods and their Application", section 3.8). A resample draws
``n`` of the ``n`` items uniformly with replacement; item ``i`` is drawn
``W[b, i]`` times, so each row of ``W`` is Multinomial(n, 1/n).

Every fast statistic here (pooled ratio, pooled kappa table) is a function of
the resampled TOTALS ``sum_i W[b, i] x_i`` of a per-item vector ``x_i``.
Items with identical vectors are interchangeable, so only how often each
distinct vector (a *pattern*) is drawn matters. With ``G`` patterns holding
``c_1..c_G`` items, the pattern counts of a resample are exactly
Multinomial(n, c_g / n) -- the same distribution as drawing item indices and
counting them by pattern -- and cost ``O(G)`` per resample instead of
``O(n)``. With categorical labels ``G`` is small (a few hundred for 2-7 votes
on 3 labels) whatever ``n`` is. When ``G`` is not much smaller than ``n``
(e.g. continuous per-item values), item indices are drawn instead, a block of
resamples at a time, so no ``n_resamples x n`` array is ever held.

The interval is the percentile interval (Efron & Tibshirani 1993, ch. 13):
the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the resampled
statistic. Resamples where the statistic is undefined (e.g. a resample that
drew only items without pairs) are left out of the quantiles.

Pairing: within one call, every statistic is recomputed on the same resampled
items. Functions that compare two figures (:func:`paired_ratio_difference`)
compress the JOINT per-item vector of both, so the pairing is exact. Separate
calls with the same seed are reproducible but are not paired with each other
(their resamples depend on their data's patterns); compare two figures with a
paired function, never by combining two intervals. The item-level draws
(:func:`resample_weights`, :func:`statistic_estimate`) are one seeded stream
for a given ``(n_items, seed)``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from juge.errors import Fault
from juge.stats.agreement import KappaWeights, kappa_weight_matrix, label_codes, label_order
from juge.stats.estimate import Estimate

N_RESAMPLES = 2000
LEVEL = 0.95
# Most entries held at once by a block of item-level draws (int64: 8 MiB).
BLOCK_ENTRIES = 1 << 20
# Most item counts kept between calls on the same items (one byte each while no count reaches 256).
KEPT_ENTRIES = 1 << 25
# One category of a multinomial draw costs about as much as drawing, counting and
# summing 3 (at 1k items) to 12 (at 100k) item indices (numpy 2.4, this machine), so
# patterns are drawn directly when there are at least 8 items per pattern.
ITEMS_PER_PATTERN_FOR_MULTINOMIAL = 8


def _drawn_item_counts(n_items: int, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    rng = np.random.default_rng(seed)
    block = max(1, BLOCK_ENTRIES // max(n_items, 1))
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        draws = rng.integers(0, max(n_items, 1), size=(rows, n_items))
        flat = draws + np.arange(rows)[:, None] * n_items
        yield np.bincount(flat.ravel(), minlength=rows * n_items).reshape(rows, n_items)


@functools.lru_cache(maxsize=1)
def _kept_item_counts(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """Every resample's item counts in the smallest unsigned type that holds them (read-only): a study
    draws the same items for each of its figures, so they are drawn once."""
    blocks = []
    for counts in _drawn_item_counts(n_items, n_resamples, seed):
        top = int(counts.max()) if counts.size else 0
        blocks.append(counts.astype(np.uint8 if top < 2**8 else np.uint16 if top < 2**16 else np.uint32))
    kept = np.concatenate(blocks) if len(blocks) > 1 else blocks[0]
    kept.flags.writeable = False
    return kept


def item_count_blocks(n_items: int, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Item counts for consecutive blocks of resamples, each block at most ``BLOCK_ENTRIES`` draws.

    The blocks stacked are :func:`resample_weights`: numpy's generator draws
    the same stream whatever the block size. Up to ``KEPT_ENTRIES`` counts are
    kept (one byte each, mostly) for the next call with the same arguments.
    """
    if n_items < 0 or n_resamples < 1:
        raise ValueError(f"need n_items >= 0 and n_resamples >= 1, got {n_items} and {n_resamples}")
    if n_items * n_resamples > KEPT_ENTRIES:
        yield from _drawn_item_counts(n_items, n_resamples, seed)
        return
    kept = _kept_item_counts(n_items, n_resamples, seed)
    block = max(1, BLOCK_ENTRIES // max(n_items, 1))
    for start in range(0, n_resamples, block):
        yield kept[start : start + block]


def resample_weights(n_items: int, *, n_resamples: int = N_RESAMPLES, seed: int = 0) -> np.ndarray:
    """Draw counts, shape ``(n_resamples, n_items)``; each row sums to ``n_items``.

    Row ``b`` is bootstrap resample ``b``: ``n_items`` items drawn uniformly with
    replacement, item ``i`` drawn ``W[b, i]`` times (so each row is
    Multinomial(n_items, 1/n_items)). Deterministic for a given
    ``(n_items, n_resamples, seed)``. This holds the whole matrix: for many
    items use :func:`resampled_totals`, which never does.
    """
    return np.concatenate(list(item_count_blocks(n_items, n_resamples, seed))).astype(np.int64)


def _pattern_groups(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows (patterns) in lexicographic order: the first item holding each, the pattern of each
    item, and how many items hold each.

    Each column is coded by the rank of its value among the column's distinct
    values, and a row by the mixed-radix number of its column codes, so
    sorting one integer per item finds the distinct rows (a plain sort, several
    times faster than ``np.unique(axis=0)``, which is kept for when the codes
    would not fit in int64). Both orders are the lexicographic order of the rows.
    """
    columns = [np.unique(column) for column in rows.T]
    if int(np.prod([values.size for values in columns], dtype=object)) >= 2**62:
        _, first, group, sizes = np.unique(rows, axis=0, return_index=True, return_inverse=True, return_counts=True)
        return first, group.ravel(), sizes
    codes = np.zeros(rows.shape[0], dtype=np.int64)
    for column, values in zip(rows.T, columns):
        codes = codes * values.size + np.searchsorted(values, column)
    _, first, group, sizes = np.unique(codes, return_index=True, return_inverse=True, return_counts=True)
    return first, group.ravel(), sizes


def _patterns(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows (patterns), in lexicographic order, and how many items hold each."""
    first, _, sizes = _pattern_groups(rows)
    return rows[first].astype(float), sizes


def _draws_patterns(n_items: int, n_patterns: int) -> bool:
    """Whether resamples draw pattern counts (many items per pattern) rather than item indices."""
    return n_items > 0 and n_patterns * ITEMS_PER_PATTERN_FOR_MULTINOMIAL <= n_items


def _pattern_count_blocks(sizes: np.ndarray, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Pattern counts for consecutive blocks of resamples: rows ~ Multinomial(n, sizes / n)."""
    rng = np.random.default_rng(seed)
    n_items = int(sizes.sum())
    block = max(1, BLOCK_ENTRIES // sizes.size)
    for start in range(0, n_resamples, block):
        yield rng.multinomial(n_items, sizes / n_items, size=min(block, n_resamples - start))


def resampled_totals(per_item: ArrayLike, *, n_resamples: int = N_RESAMPLES, seed: int = 0) -> np.ndarray:
    """Totals of a per-item vector over each bootstrap resample of the items, shape ``(n_resamples, d)``.

    ``per_item`` has one row ``x_i`` per item (shape ``(n_items,)`` or
    ``(n_items, d)``); row ``b`` of the result is ``sum_i W[b, i] x_i`` for
    item counts ``W[b]`` ~ Multinomial(n, 1/n). Computed exactly in
    distribution as ``M[b] @ patterns`` with pattern counts
    ``M[b]`` ~ Multinomial(n, c_g / n) when there are at least
    ``ITEMS_PER_PATTERN_FOR_MULTINOMIAL`` items per pattern, else as
    ``W[b] @ x`` from item draws (then ``W`` is :func:`resample_weights`).
    Either way resamples are drawn in blocks of at most ``BLOCK_ENTRIES``
    counts. Deterministic for given data, ``n_resamples`` and ``seed``.
    """
    if n_resamples < 1:
        raise ValueError(f"need n_resamples >= 1, got {n_resamples}")
    x = np.asarray(per_item, dtype=float)
    rows = x.reshape(x.shape[0], int(np.prod(x.shape[1:])))
    n_items = rows.shape[0]
    patterns, sizes = _patterns(rows)
    blocks: Iterator[np.ndarray]
    if _draws_patterns(n_items, sizes.size):
        blocks = (m @ patterns for m in _pattern_count_blocks(sizes, n_resamples, seed))
    else:
        blocks = _item_draw_totals(rows, n_resamples, seed)
    return np.concatenate(list(blocks))


def _item_draw_totals(rows: np.ndarray, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """``W @ rows`` for consecutive blocks of resamples, from the item draws of :func:`resample_weights`
    (the same stream), summed by gathering each column at the drawn items: several times faster than
    counting the draws into ``W`` and multiplying (the counts matrix is never made)."""
    n_items = rows.shape[0]
    rng = np.random.default_rng(seed)
    columns = [np.ascontiguousarray(rows[:, j]) for j in range(rows.shape[1])]
    block = max(1, BLOCK_ENTRIES // max(n_items, 1))
    for start in range(0, n_resamples, block):
        count = min(block, n_resamples - start)
        if n_items == 0:
            yield np.zeros((count, rows.shape[1]))
            continue
        draws = rng.integers(0, n_items, size=(count, n_items))
        yield np.stack([np.take(column, draws).sum(axis=1) for column in columns], axis=1)


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
    item_weights: ArrayLike | None = None,
) -> Estimate:
    """Pooled ratio ``sum(num) / sum(den)`` with a clustered bootstrap interval.

    ``num[i]`` and ``den[i]`` are item ``i``'s numerator and denominator, e.g.
    equal pairs and pairs on that item, so the value is the pooled agreement.
    Items with ``den == 0`` are allowed (they are resampled but add nothing).
    Resample ``b`` gives ``(W @ num)[b] / (W @ den)[b]`` (see :func:`resampled_totals`).

    ``item_weights``: items drawn with unequal chances ``pi_i`` count ``w_i = 1 / pi_i`` each, the Hajek ratio
    ``sum(w num) / sum(w den)`` (Sarndal, Swensson & Wretman, *Model Assisted Survey Sampling*, 1992, §5.7); a
    resample draws items with their weights.

    ``n`` is the pooled number of units, ``sum(den)`` (pairs, votes), unweighted;
    ``n_items`` is the number of items. The value is None when ``sum(den) == 0``.
    """
    n_arr, d_arr = _per_item(num, den)
    units = int(round(d_arr.sum()))
    if item_weights is not None:
        w = _item_weights(item_weights, n_arr.size)
        n_arr, d_arr = n_arr * w, d_arr * w
    value = _ratio(n_arr.sum(), d_arr.sum())
    totals = resampled_totals(np.column_stack([n_arr, d_arr]), n_resamples=n_resamples, seed=seed)
    low, high = percentile_interval(_ratio(totals[:, 0], totals[:, 1]), level=level)
    return Estimate(float(value), low, high, n=units, n_items=n_arr.size)


def _item_weights(weights: ArrayLike, n_items: int) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    if w.shape != (n_items,) or not np.isfinite(w).all() or (w <= 0).any():
        raise ValueError(f"item_weights must be {n_items} positive finite numbers, one per item, got shape {w.shape}")
    return w


def paired_ratio_difference(
    num_a: ArrayLike,
    den_a: ArrayLike,
    num_b: ArrayLike,
    den_b: ArrayLike,
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
    item_weights: ArrayLike | None = None,
) -> Estimate:
    """Difference of two pooled ratios on the same items, ``A - B``, with a paired interval.

    Both ratios are recomputed on the SAME resampled items in each resample
    (``W @ num_a / W @ den_a - W @ num_b / W @ den_b``), so item difficulty that
    affects both cancels out: the four per-item values are resampled as one
    vector (one pattern per distinct 4-tuple). All four arrays are per item, aligned.
    ``n`` is the smaller of the two pooled unit counts ``min(sum(den_a), sum(den_b))``;
    the value is None when either ratio is undefined. ``item_weights``: as :func:`ratio_estimate` (Hajek ratios).
    """
    na, da = _per_item(num_a, den_a)
    nb, db = _per_item(num_b, den_b)
    if na.shape != nb.shape:
        raise ValueError(f"A and B must cover the same items, got {na.size} and {nb.size}")
    n = int(round(min(da.sum(), db.sum())))
    if item_weights is not None:
        w = _item_weights(item_weights, na.size)
        na, da, nb, db = na * w, da * w, nb * w, db * w
    value = _ratio(na.sum(), da.sum()) - _ratio(nb.sum(), db.sum())
    totals = resampled_totals(np.column_stack([na, da, nb, db]), n_resamples=n_resamples, seed=seed)
    resampled = _ratio(totals[:, 0], totals[:, 1]) - _ratio(totals[:, 2], totals[:, 3])
    low, high = percentile_interval(resampled, level=level)
    return Estimate(float(value), low, high, n=n, n_items=na.size)


def draw_blocks(keys: np.ndarray, n_resamples: int, seed: int) -> tuple[np.ndarray, Iterator[np.ndarray]]:
    """How :func:`resampled_totals` draws resamples of items whose rows of ``keys`` tell which are alike.

    Returns ``(members, blocks)``: each block holds, for consecutive resamples, how often each member was
    drawn, so the totals of a per-item statistic ``s`` are ``block @ s[members]``. With many items per
    distinct key row (pattern) the members are one item of each pattern in lexicographic order and the
    counts are Multinomial(n, c_g / n); otherwise the members are the items and the counts those of
    :func:`resample_weights`. The keys only decide which items are interchangeable, so a statistic may be
    summed over fewer columns than the keys have (a kappa's margins instead of its whole table) and still
    draw exactly the resamples the whole table would.
    """
    if n_resamples < 1:
        raise ValueError(f"need n_resamples >= 1, got {n_resamples}")
    n_items = keys.shape[0]
    if n_items:
        first, _, sizes = _pattern_groups(keys.reshape(n_items, -1))
        if _draws_patterns(n_items, sizes.size):
            return first, _pattern_count_blocks(sizes, n_resamples, seed)
    return np.arange(n_items), item_count_blocks(n_items, n_resamples, seed)


def chunks(blocks: Iterator[np.ndarray], width: int) -> Iterator[np.ndarray]:
    """The rows of ``blocks`` again, cut so that a chunk's rows times ``width`` stays near ``BLOCK_ENTRIES``
    (what one chunk's totals of ``width`` statistics hold)."""
    rows = max(1, BLOCK_ENTRIES // max(width, 1))
    for block in blocks:
        for start in range(0, block.shape[0], rows):
            yield block[start : start + rows]


def summed(counts: np.ndarray, stats: Any) -> np.ndarray:
    """``counts @ stats`` as a dense float array (``stats`` dense, or sparse when it is mostly zeros)."""
    return np.asarray(counts.astype(float) @ stats, dtype=float)


def _pair_keys(items: np.ndarray, flat: np.ndarray, n_items: int, n_cells: int) -> np.ndarray:
    """Per item, a short key whose lexicographic order is that of the item's flattened table.

    An item's table is ``n_cells`` counts; its key lists its non-zero cells in order as (-cell, count),
    padded with (-n_cells, 0). Comparing two keys compares the tables at their first differing cell: the
    table with a count where the other has none is larger, and so is its key (its -cell is the larger).
    """
    cells, counts = np.unique(items * n_cells + flat, return_counts=True)
    item_of, cell_of = np.divmod(cells, n_cells)
    starts = np.searchsorted(item_of, np.arange(n_items))
    position = np.arange(cells.size) - starts[item_of]
    width = int(position.max()) + 1 if cells.size else 1
    keys = np.zeros((n_items, 2 * width), dtype=np.int64)
    keys[:, 0::2] = -n_cells
    keys[item_of, 2 * position] = -cell_of
    keys[item_of, 2 * position + 1] = counts
    return keys


def _expected_disagreement(rows: np.ndarray, cols: np.ndarray, weights: KappaWeights) -> np.ndarray:
    """``sum_ij w_ij r_i c_j`` per resample from the margins' counts (shape ``(B, K)``), in O(K) each."""
    total = rows.sum(axis=1)
    if weights is None:
        return total * cols.sum(axis=1) - np.einsum("bi,bi->b", rows, cols)
    if weights == "linear":  # |i - j| = how many cuts t (i <= t < j or j <= t < i) fall between them
        below_r, below_c = np.cumsum(rows, axis=1)[:, :-1], np.cumsum(cols, axis=1)[:, :-1]
        return np.einsum("bt,bt->b", below_r, cols.sum(axis=1)[:, None] - below_c) + np.einsum(
            "bt,bt->b", total[:, None] - below_r, below_c
        )
    if weights == "quadratic":  # (i - j)^2 expanded into moments, positions centred to keep them small
        position = np.arange(rows.shape[1]) - (rows.shape[1] - 1) / 2
        m1r, m1c = rows @ position, cols @ position
        return (rows @ position**2) * cols.sum(axis=1) + total * (cols @ position**2) - 2 * m1r * m1c
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def _kappa_from_margins(total: np.ndarray, observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Kappa ``1 - (O / T) / (E / T^2)`` with :func:`kappa_from_tables`'s conventions (O, E raw counts)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = 1.0 - observed * total / expected
    kappa = np.where(expected == 0, np.where(observed == 0, 1.0, 0.0), kappa)
    return np.where(total > 0, kappa, np.nan)


def _pair_disagreement(a: np.ndarray, b: np.ndarray, weights: KappaWeights) -> np.ndarray:
    """Each pair's disagreement weight ``w[a, b]`` (:func:`kappa_weight_matrix` at positions a, b)."""
    if weights is None:
        return (a != b).astype(float)
    if weights == "linear":
        return np.abs(a - b).astype(float)
    if weights == "quadratic":
        return ((a - b) ** 2).astype(float)
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def _kappas(
    keys: np.ndarray,
    stats: Any,
    n_labels: int,
    weights: Sequence[KappaWeights],
    *,
    n_resamples: int,
    seed: int,
    level: float,
) -> list[tuple[float, float | None, float | None]]:
    """Value and interval of each weighting's kappa from per-item statistics: columns pairs, one observed
    disagreement per weighting, then the ``n_labels`` row and column margins (dense or sparse)."""
    k, w = n_labels, len(weights)

    def kappas(totals: np.ndarray) -> list[np.ndarray]:
        rows, cols = totals[:, 1 + w : 1 + w + k], totals[:, 1 + w + k :]
        return [
            _kappa_from_margins(totals[:, 0], totals[:, 1 + j], _expected_disagreement(rows, cols, weighting))
            for j, weighting in enumerate(weights)
        ]

    with out_of_memory_named(keys.shape[0], n_resamples):
        values = kappas(np.asarray(stats.sum(axis=0), dtype=float).reshape(1, -1))
        members, blocks = draw_blocks(keys, n_resamples, seed)
        member_stats = stats[members]
        resampled = [kappas(summed(chunk, member_stats)) for chunk in chunks(blocks, stats.shape[1])]
    out = []
    for j in range(w):
        draws = np.concatenate([r[j] for r in resampled]) if resampled else np.array([])
        out.append((float(values[j][0]), *percentile_interval(draws, level=level)))
    return out


def kappa_estimate(
    per_item_tables: ArrayLike,
    *,
    weights: KappaWeights = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
    item_weights: ArrayLike | None = None,
) -> Estimate:
    """Cohen's kappa of the pooled table with a clustered bootstrap interval.

    ``per_item_tables`` has shape ``(n_items, K, K)`` (see
    :func:`juge.stats.agreement.pair_tables`). The value is the kappa of the
    pooled table ``sum_i T_i``; resample ``b`` uses the pooled table
    ``sum_i W[b, i] T_i``, drawn as :func:`resampled_totals` draws the flattened
    tables. Kappa needs only the pooled table's count, weighted disagreement and
    margins, so those are what is summed (``2K + 2`` numbers per item, not ``K^2``).
    For many labels and items, :func:`pair_kappa_estimates` takes the pairs instead of tables.
    ``n`` is the number of pooled pairs; None value when there are none. ``item_weights`` (``1 / pi_i`` of items
    drawn with unequal chances): the pooled table is ``sum_i w_i T_i``, a Hajek estimate of the population's
    table, so kappa (a function of its shares) is estimated consistently.
    """
    tables = np.asarray(per_item_tables, dtype=float)
    if tables.ndim != 3 or tables.shape[1] != tables.shape[2]:
        raise ValueError(f"per_item_tables must have shape (n_items, K, K), got {tables.shape}")
    n_items, k = tables.shape[0], tables.shape[1]
    pairs = int(round(tables.sum()))
    if item_weights is not None:
        tables = tables * _item_weights(item_weights, n_items)[:, None, None]
    w = kappa_weight_matrix(k, weights)
    stats = np.column_stack(
        [tables.sum(axis=(1, 2)), np.einsum("ijk,jk->i", tables, w), tables.sum(axis=2), tables.sum(axis=1)]
    )
    ((value, low, high),) = _kappas(
        tables.reshape(n_items, k * k), stats, k, [weights], n_resamples=n_resamples, seed=seed, level=level
    )
    return Estimate(value, low, high, n=pairs, n_items=n_items)


def pair_kappa_estimates(
    y1: ArrayLike,
    y2: ArrayLike,
    item_index: ArrayLike,
    labels: Sequence[Any],
    *,
    n_items: int,
    weights: Sequence[KappaWeights] = (None,),
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
    item_weights: ArrayLike | None = None,
) -> list[Estimate]:
    """Cohen's kappa of pooled pairs, one estimate per weighting, without building a table per item.

    Pair ``p`` compares ``y1[p]`` (row) with ``y2[p]`` (column) on item ``item_index[p]`` (positions in
    ``[0, n_items)``), labels ordered by ``labels``. The figures equal :func:`kappa_estimate` of
    :func:`juge.stats.agreement.pair_tables` on the same seed, resample for resample: items with equal
    tables are found from their non-zero cells, so the draws are the same, and each item contributes its
    pairs, its weighted disagreements and its margins (sparse), so memory grows with the pairs, not with
    ``n_items * K^2``. ``item_weights``: as :func:`kappa_estimate` (each item's pairs count ``w_i``).
    """
    from scipy import sparse

    a, b = np.asarray(y1), np.asarray(y2)
    items = np.asarray(item_index, dtype=np.int64)
    if a.ndim != 1 or a.shape != b.shape or items.shape != a.shape:
        raise ValueError(f"y1, y2 and item_index must be 1-d of equal length, got {a.shape}, {b.shape}, {items.shape}")
    if items.size and (items.min() < 0 or items.max() >= n_items):
        raise ValueError(f"item_index must lie in [0, {n_items}), got range [{items.min()}, {items.max()}]")
    order = label_order(a, b, labels)
    k = len(order)
    ca, cb = label_codes(a, order), label_codes(b, order)
    keys = _pair_keys(items, ca * k + cb, n_items, k * k)
    ones = np.ones(items.size)
    columns = [ones] + [_pair_disagreement(ca, cb, weighting) for weighting in weights]
    front = sparse.csr_array(
        (np.concatenate(columns), (np.tile(items, len(columns)), np.repeat(np.arange(len(columns)), items.size))),
        shape=(n_items, len(columns)),
    )
    rows = sparse.csr_array((ones, (items, ca)), shape=(n_items, k))
    cols = sparse.csr_array((ones, (items, cb)), shape=(n_items, k))
    stats = sparse.hstack([front, rows, cols], format="csr")
    if item_weights is not None:
        stats = sparse.csr_array(stats.multiply(_item_weights(item_weights, n_items)[:, None]))
    figures = _kappas(keys, stats, k, list(weights), n_resamples=n_resamples, seed=seed, level=level)
    return [Estimate(value, low, high, n=int(items.size), n_items=n_items) for value, low, high in figures]


@contextmanager
def out_of_memory_named(n_items: int, n_resamples: int) -> Iterator[None]:
    """A MemoryError inside becomes a Fault (exit 3) saying what to reduce, not a traceback."""
    try:
        yield
    except MemoryError:
        raise Fault(
            f"out of memory in the bootstrap ({n_resamples:,} resamples over {n_items:,} items): "
            "use fewer resamples (--resamples) or fewer items"
        ) from None


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


def _statistic_or_nan(fn: Callable[..., float | None], data: list[np.ndarray], rows: np.ndarray) -> float:
    result = fn(*(a[rows] for a in data))
    return np.nan if result is None else result


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

    Resamples are the rows of :func:`resample_weights` on the clusters,
    ordered by sorted cluster id, drawn a block at a time (memory stays
    bounded for many clusters).
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
    layout = _cluster_layout(codes, n_clusters)
    blocks = item_count_blocks(n_clusters, n_resamples, seed) if n_rows else ()
    resampled = [_statistic_or_nan(fn, data, _rows_for_counts(layout, counts)) for block in blocks for counts in block]
    low, high = percentile_interval(resampled, level=level)
    return Estimate(value, low, high, n=n_rows if n is None else n, n_items=n_clusters)
