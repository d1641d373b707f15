"""Clustered bootstrap: hand-worked cases, equality with a naive loop, coverage, seeding."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from juge.stats import (
    agreement,
    cluster_resample_indices,
    cohen_kappa,
    kappa_estimate,
    krippendorff_alpha,
    pair_tables,
    paired_ratio_difference,
    pearson,
    percentile_interval,
    ratio_estimate,
    resample_weights,
    statistic_estimate,
)

LABELS = ["A", "B", "tie"]


def pooled_pairs(seed, n_items=40):
    """Pairs of labels grouped in items (1-4 pairs per item), as the ceiling produces them."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, n_items)
    items = np.repeat(np.arange(n_items), sizes)
    names = np.array(LABELS)
    base = rng.integers(0, 3, n_items)[items]
    y1 = names[np.where(rng.random(items.size) < 0.7, base, rng.integers(0, 3, items.size))]
    y2 = names[np.where(rng.random(items.size) < 0.7, base, rng.integers(0, 3, items.size))]
    return y1, y2, items


def naive_items(w_row, items):
    """Pair indices of one resample, the slow obvious way."""
    return np.concatenate([np.flatnonzero(items == i) for i in np.repeat(np.arange(w_row.size), w_row)])


def test_resample_weights_shape_sums_and_seed():
    w = resample_weights(25, n_resamples=300, seed=4)
    assert w.shape == (300, 25)
    assert (w.sum(axis=1) == 25).all()
    assert (w == resample_weights(25, n_resamples=300, seed=4)).all()
    assert not (w == resample_weights(25, n_resamples=300, seed=5)).all()
    # each item is drawn Binomial(n, 1/n) times: mean 1, variance 1 - 1/n
    big = resample_weights(25, n_resamples=20000, seed=1)
    assert big.mean() == pytest.approx(1.0)
    assert big.var() == pytest.approx(1 - 1 / 25, rel=0.05)
    assert resample_weights(0, n_resamples=3).shape == (3, 0)


def test_ratio_estimate_hand_worked():
    # pooled ratio, not the mean of per-item ratios: (1 + 2 + 0) / (2 + 2 + 1) = 0.6 (mean of ratios: 0.5)
    est = ratio_estimate([1, 2, 0], [2, 2, 1], n_resamples=500)
    assert est.value == pytest.approx(0.6)
    assert est.n == 5 and est.n_items == 3
    # two items, one always agreeing (1/1) one never (0/1): each resample is 0, 1/2 or 1 with
    # probabilities 1/4, 1/2, 1/4, so the 95% percentile interval is [0, 1]
    est = ratio_estimate([1, 0], [1, 1])
    assert (est.value, est.low, est.high, est.n) == (0.5, 0.0, 1.0, 2)


def test_ratio_estimate_equals_naive_loop_over_pairs():
    y1, y2, items = pooled_pairs(0)
    n_items = items.max() + 1
    equal = np.bincount(items, weights=(y1 == y2), minlength=n_items)
    pairs = np.bincount(items, minlength=n_items)
    est = ratio_estimate(equal, pairs, n_resamples=400, seed=9)
    w = resample_weights(n_items, n_resamples=400, seed=9)
    naive = [agreement(y1[naive_items(row, items)], y2[naive_items(row, items)]) for row in w]
    low, high = np.quantile(naive, [0.025, 0.975])
    assert est.value == pytest.approx(agreement(y1, y2))
    assert (est.low, est.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert est.n == y1.size and est.n_items == n_items


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_kappa_estimate_equals_naive_loop_over_pairs(weights):
    y1, y2, items = pooled_pairs(1)
    n_items = items.max() + 1
    tables = pair_tables(y1, y2, items, LABELS, n_items=n_items)
    est = kappa_estimate(tables, weights=weights, n_resamples=300, seed=2)
    w = resample_weights(n_items, n_resamples=300, seed=2)
    naive = []
    for row in w:
        idx = naive_items(row, items)
        naive.append(cohen_kappa(y1[idx], y2[idx], labels=LABELS, weights=weights))
    assert est.value == pytest.approx(cohen_kappa(y1, y2, labels=LABELS, weights=weights))
    assert est.low == pytest.approx(np.quantile(naive, 0.025), abs=1e-12)
    assert est.high == pytest.approx(np.quantile(naive, 0.975), abs=1e-12)
    assert est.n == y1.size


def test_paired_difference_uses_the_same_items_for_both():
    rng = np.random.default_rng(3)
    den = rng.integers(1, 4, 60)
    difficulty = rng.random(60)
    num_a = rng.binomial(den, np.clip(difficulty + 0.1, 0, 1))
    num_b = rng.binomial(den, difficulty)
    same = paired_ratio_difference(num_a, den, num_a, den, n_resamples=300)
    assert (same.value, same.low, same.high) == (0.0, 0.0, 0.0)
    est = paired_ratio_difference(num_a, den, num_b, den, n_resamples=1000, seed=5)
    a = ratio_estimate(num_a, den, n_resamples=1000, seed=5)
    b = ratio_estimate(num_b, den, n_resamples=1000, seed=5)
    assert est.value == pytest.approx(a.value - b.value)
    # pairing removes the shared item difficulty: the paired interval is narrower than
    # the one implied by independent intervals
    assert est.high - est.low < np.hypot(a.high - a.low, b.high - b.low)
    w = resample_weights(60, n_resamples=1000, seed=5)
    naive = (w @ num_a) / (w @ den) - (w @ num_b) / (w @ den)
    assert est.low == pytest.approx(np.quantile(naive, 0.025))


def test_paired_difference_n_is_the_smaller_pool():
    est = paired_ratio_difference([1, 1], [2, 1], [1, 0], [1, 0], n_resamples=50)
    assert est.n == 1 and est.value == pytest.approx(2 / 3 - 1)


def test_items_without_units_are_allowed_and_empty_input_gives_none():
    est = ratio_estimate([0, 3, 0], [0, 4, 0], n_resamples=200)
    assert est.value == pytest.approx(0.75) and est.n == 4
    # resamples that drew only empty items are left out of the quantiles, not counted as 0
    assert est.low == pytest.approx(0.75) and est.high == pytest.approx(0.75)
    for empty in (ratio_estimate([], []), ratio_estimate([0, 0], [0, 0]), kappa_estimate(np.zeros((0, 3, 3)))):
        assert empty.value is None and empty.low is None and empty.n == 0
        assert empty.to_dict() == {"value": None, "low": None, "high": None, "n": 0}
    assert statistic_estimate(pearson, np.array([]), np.array([])).value is None


def test_seeded_reproducibility_and_seed_sensitivity():
    y1, y2, items = pooled_pairs(2)
    tables = pair_tables(y1, y2, items, LABELS)
    assert kappa_estimate(tables, seed=11) == kappa_estimate(tables, seed=11)
    assert kappa_estimate(tables, seed=11) != kappa_estimate(tables, seed=12)
    assert kappa_estimate(tables, seed=12).value == kappa_estimate(tables, seed=11).value


def test_level_changes_width():
    y1, y2, items = pooled_pairs(4)
    tables = pair_tables(y1, y2, items, LABELS)
    wide = kappa_estimate(tables, level=0.99, n_resamples=500)
    narrow = kappa_estimate(tables, level=0.80, n_resamples=500)
    assert wide.low < narrow.low < narrow.value < narrow.high < wide.high
    with pytest.raises(ValueError, match="level"):
        percentile_interval([1.0, 2.0], level=95)


def test_cluster_resample_indices_matches_naive():
    rng = np.random.default_rng(8)
    clusters = rng.integers(0, 7, 30)
    clusters[clusters == 3] = 0  # cluster 3 has no rows
    counts = rng.multinomial(7, np.full(7, 1 / 7))
    got = cluster_resample_indices(clusters, counts)
    assert sorted(got.tolist()) == sorted(naive_items(counts, clusters).tolist())


def test_statistic_estimate_matches_ratio_estimate_on_a_ratio():
    # the slow generic path and the fast path agree when given the same clusters and seed
    y1, y2, items = pooled_pairs(5)
    equal = (y1 == y2).astype(float)
    slow = statistic_estimate(lambda e: e.mean(), equal, clusters=items, n_resamples=200, seed=3)
    n_items = items.max() + 1
    fast = ratio_estimate(
        np.bincount(items, weights=equal, minlength=n_items),
        np.bincount(items, minlength=n_items),
        n_resamples=200,
        seed=3,
    )
    assert slow.value == pytest.approx(fast.value)
    assert (slow.low, slow.high) == (pytest.approx(fast.low), pytest.approx(fast.high))
    assert slow.n == fast.n and slow.n_items == fast.n_items


def test_statistic_estimate_for_pearson_and_krippendorff():
    rng = np.random.default_rng(6)
    x = rng.normal(size=50)
    y = x + rng.normal(size=50)
    est = statistic_estimate(pearson, x, y, n_resamples=300)
    assert est.value == pytest.approx(pearson(x, y))
    assert est.low < est.value < est.high and est.n == 50
    ratings = np.clip(rng.integers(1, 5, 40) + rng.integers(-1, 2, (3, 40)), 1, 4).astype(float)
    alpha = statistic_estimate(
        lambda d: krippendorff_alpha(d.T, level="ordinal"), ratings.T, n_resamples=200
    )
    assert alpha.value == pytest.approx(krippendorff_alpha(ratings, level="ordinal"))
    assert alpha.low < alpha.value < alpha.high and alpha.n == 40
    with pytest.raises(ValueError, match="same length"):
        statistic_estimate(pearson, x, y[:10])


def simulate_clustered_coverage(cluster_aware: bool, n_sims=300, n_items=60):
    """Share of 95% intervals that contain the true pooled proportion 0.7.

    Items have their own success probability (Beta(1.4, 0.6): strong within-item
    correlation) and 1-5 units each.
    """
    rng = np.random.default_rng(2026)
    hits = 0
    for sim in range(n_sims):
        sizes = rng.integers(1, 6, n_items)
        successes = rng.binomial(sizes, rng.beta(1.4, 0.6, n_items))
        if cluster_aware:
            est = ratio_estimate(successes, sizes, n_resamples=500, seed=sim)
        else:  # wrongly treat every unit as its own item
            units = np.concatenate([np.r_[np.ones(s), np.zeros(n - s)] for s, n in zip(successes, sizes)])
            est = ratio_estimate(units, np.ones_like(units), n_resamples=500, seed=sim)
        hits += est.low <= 0.7 <= est.high
    return hits / n_sims


def test_coverage_of_clustered_interval_is_near_nominal_and_beats_unclustered():
    clustered = simulate_clustered_coverage(True)
    unclustered = simulate_clustered_coverage(False)
    assert 0.90 <= clustered <= 0.99
    assert unclustered < 0.88 < clustered


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=25),
    st.integers(0, 2**31 - 1),
)
def test_ratio_estimate_equals_naive_loop_property(parts, seed):
    den = np.array([d for _, d in parts])
    num = np.array([min(n, d) for n, d in parts])  # num <= den, like equal pairs <= pairs
    est = ratio_estimate(num, den, n_resamples=100, seed=seed)
    w = resample_weights(den.size, n_resamples=100, seed=seed)
    naive = []
    for row in w:
        drawn = np.repeat(np.arange(den.size), row)
        total = den[drawn].sum()
        if total > 0:
            naive.append(num[drawn].sum() / total)
    if den.sum() == 0:
        assert est.value is None and est.n == 0
        return
    assert est.value == pytest.approx(num.sum() / den.sum())
    assert est.low == pytest.approx(np.quantile(naive, 0.025))
    assert est.high == pytest.approx(np.quantile(naive, 0.975))
    assert 0.0 <= est.low <= est.high <= 1.0


def test_object_arrays_of_labels_are_accepted():
    y1, y2, items = pooled_pairs(7)
    tables = pair_tables(y1.astype(object), y2.astype(object), items, LABELS)
    assert (tables == pair_tables(y1, y2, items, LABELS)).all()
    assert kappa_estimate(tables, n_resamples=50).value == pytest.approx(cohen_kappa(y1.astype(object), y2))
