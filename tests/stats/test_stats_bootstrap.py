"""Clustered bootstrap: hand-worked cases, equality with a naive item loop, coverage, seeding, memory."""

import itertools
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from juge.stats import (
    agreement,
    cluster_resample_indices,
    cohen_kappa,
    kappa_estimate,
    kappa_from_tables,
    krippendorff_alpha,
    pair_tables,
    paired_ratio_difference,
    pearson,
    percentile_interval,
    ratio_estimate,
    resample_weights,
    statistic_estimate,
)
from juge.stats.bootstrap import _patterns, resampled_totals

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


N_CHECK = 3000  # resamples on each side of a Monte-Carlo comparison


def item_draws(n_items, seed, n_resamples=N_CHECK):
    """Item indices of each resample, drawn the obvious way: n items uniformly with replacement."""
    rng = np.random.default_rng(seed)
    for _ in range(n_resamples):
        yield rng.integers(0, n_items, n_items)


def assert_same_bootstrap_distribution(ours, interval, naive):
    """Mean, spread and 2.5 / 97.5 % quantiles agree within Monte-Carlo error (about 5 standard errors).

    With B resamples on each side, the difference of means has SE sd * sqrt(2 / B), of standard
    deviations about sd / sqrt(B), of 2.5 % quantiles about 0.06 sd at B = 3000.
    """
    sd = naive.std()
    assert ours.size == naive.size == N_CHECK and sd > 0
    assert abs(ours.mean() - naive.mean()) < 5 * sd * np.sqrt(2 / N_CHECK)
    assert abs(ours.std() / sd - 1) < 5 / np.sqrt(N_CHECK)
    assert np.allclose(interval, np.quantile(ours, [0.025, 0.975]))
    assert np.allclose(interval, np.quantile(naive, [0.025, 0.975]), rtol=0, atol=0.3 * sd)


# A hand-made data set: (judge label, human votes, how many items are like that). 150 items
# in 8 kinds, so items share few patterns and the pattern draw is used.
HAND_MADE = [
    ("A", ["A", "A", "B"], 40),
    ("A", ["A", "A"], 30),
    ("B", ["B", "tie", "B", "B"], 25),
    ("tie", ["A", "B"], 20),
    ("B", ["A", "A", "A", "tie", "B"], 15),
    ("A", ["tie", "tie", "A", "B", "B", "A", "A"], 10),
    ("tie", ["tie", "tie", "tie"], 8),
    ("B", ["B", "B"], 2),
]


def hand_made_items():
    """Per item: its rater pairs (first, second labels) and its judge-vs-person rows (judge, vote)."""
    items = [(judge, votes) for judge, votes, count in HAND_MADE for _ in range(count)]
    pairs = [np.array(list(itertools.combinations(votes, 2))) for _, votes in items]
    judged = [np.array([(judge, vote) for vote in votes]) for judge, votes in items]
    return pairs, judged


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


def test_paired_difference_matches_a_naive_paired_item_loop():
    # 600 items sharing at most 29 (num_a, den, num_b) patterns: the pattern draw is used
    rng = np.random.default_rng(13)
    den = rng.integers(1, 4, 600)
    difficulty = rng.random(600)
    num_a = rng.binomial(den, np.clip(difficulty + 0.1, 0, 1))
    num_b = rng.binomial(den, difficulty)
    est = paired_ratio_difference(num_a, den, num_b, den, n_resamples=N_CHECK, seed=5)
    totals = resampled_totals(np.column_stack([num_a, den, num_b, den]), n_resamples=N_CHECK, seed=5)
    ours = totals[:, 0] / totals[:, 1] - totals[:, 2] / totals[:, 3]
    naive = []
    for drawn in item_draws(600, seed=99):
        naive.append(num_a[drawn].sum() / den[drawn].sum() - num_b[drawn].sum() / den[drawn].sum())
    assert_same_bootstrap_distribution(ours, (est.low, est.high), np.array(naive))


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


def test_statistic_estimate_equals_a_naive_loop_over_resample_weights():
    # the slow generic path resamples clusters with the rows of resample_weights, in sorted cluster order
    y1, y2, items = pooled_pairs(5)
    equal = (y1 == y2).astype(float)
    slow = statistic_estimate(lambda e: e.mean(), equal, clusters=items + 100, n_resamples=200, seed=3)
    naive = [
        equal[naive_items(row, items)].mean() for row in resample_weights(items.max() + 1, n_resamples=200, seed=3)
    ]
    assert slow.value == pytest.approx(equal.mean())
    assert (slow.low, slow.high) == (pytest.approx(np.quantile(naive, 0.025)), pytest.approx(np.quantile(naive, 0.975)))
    assert slow.n == equal.size and slow.n_items == items.max() + 1


def test_statistic_estimate_for_pearson_and_krippendorff():
    rng = np.random.default_rng(6)
    x = rng.normal(size=50)
    y = x + rng.normal(size=50)
    est = statistic_estimate(pearson, x, y, n_resamples=300)
    assert est.value == pytest.approx(pearson(x, y))
    assert est.low < est.value < est.high and est.n == 50
    ratings = np.clip(rng.integers(1, 5, 40) + rng.integers(-1, 2, (3, 40)), 1, 4).astype(float)
    alpha = statistic_estimate(lambda d: krippendorff_alpha(d.T, level="ordinal"), ratings.T, n_resamples=200)
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
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=40),
    st.integers(0, 2**31 - 1),
)
def test_ratio_estimate_interval_lies_between_the_item_ratios_property(parts, seed):
    # a pooled ratio over any multiset of items lies between the smallest and largest item ratio
    den = np.array([d for _, d in parts])
    num = np.array([min(n, d) for n, d in parts])  # num <= den, like equal pairs <= pairs
    est = ratio_estimate(num, den, n_resamples=100, seed=seed)
    if den.sum() == 0:
        assert est.value is None and est.n == 0 and est.low is None
        return
    item_ratios = num[den > 0] / den[den > 0]
    assert est.value == pytest.approx(num.sum() / den.sum())
    assert item_ratios.min() - 1e-12 <= est.low <= est.high <= item_ratios.max() + 1e-12
    assert est == ratio_estimate(num, den, n_resamples=100, seed=seed)


def test_object_arrays_of_labels_are_accepted():
    y1, y2, items = pooled_pairs(7)
    tables = pair_tables(y1.astype(object), y2.astype(object), items, LABELS)
    assert (tables == pair_tables(y1, y2, items, LABELS)).all()
    assert kappa_estimate(tables, n_resamples=50).value == pytest.approx(cohen_kappa(y1.astype(object), y2))


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_agreement_and_kappa_match_a_naive_item_loop_on_a_hand_made_set(weights):
    pairs, judged = hand_made_items()
    n_items = len(pairs)
    equal = np.array([np.sum(p[:, 0] == p[:, 1]) for p in pairs])
    n_pairs = np.array([len(p) for p in pairs])
    rows = np.concatenate(judged)
    tables = pair_tables(rows[:, 0], rows[:, 1], np.repeat(np.arange(n_items), [len(j) for j in judged]), LABELS)
    agree = ratio_estimate(equal, n_pairs, n_resamples=N_CHECK, seed=4)
    kappa = kappa_estimate(tables, weights=weights, n_resamples=N_CHECK, seed=4)
    agree_totals = resampled_totals(np.column_stack([equal, n_pairs]), n_resamples=N_CHECK, seed=4)
    table_totals = resampled_totals(tables.reshape(n_items, -1), n_resamples=N_CHECK, seed=4).reshape(-1, 3, 3)

    naive_agree, naive_kappa = [], []
    for drawn in item_draws(n_items, seed=2024):
        drawn_pairs = np.concatenate([pairs[i] for i in drawn])
        drawn_rows = np.concatenate([judged[i] for i in drawn])
        naive_agree.append(agreement(drawn_pairs[:, 0], drawn_pairs[:, 1]))
        naive_kappa.append(cohen_kappa(drawn_rows[:, 0], drawn_rows[:, 1], labels=LABELS, weights=weights))

    assert agree.value == pytest.approx(agreement(*np.concatenate(pairs).T))
    assert kappa.value == pytest.approx(cohen_kappa(rows[:, 0], rows[:, 1], labels=LABELS, weights=weights))
    assert_same_bootstrap_distribution(
        agree_totals[:, 0] / agree_totals[:, 1], (agree.low, agree.high), np.array(naive_agree)
    )
    assert_same_bootstrap_distribution(
        kappa_from_tables(table_totals, weights=weights), (kappa.low, kappa.high), np.array(naive_kappa)
    )


def test_patterns_are_the_distinct_rows_with_their_counts():
    rng = np.random.default_rng(21)
    few_values = np.array([-1.5, 0.0, 2.25, 7.0])[rng.integers(0, 4, (500, 3))]
    many_values = rng.integers(0, 300, (400, 8)).astype(float)  # 300**8 codes overflow int64: np.unique path
    for rows in (few_values, many_values, np.zeros((6, 0)), few_values[:1]):
        patterns, sizes = _patterns(rows)
        expected, expected_sizes = np.unique(rows, axis=0, return_counts=True)
        assert np.array_equal(patterns, expected) and np.array_equal(sizes, expected_sizes)


def test_pattern_counts_have_the_distribution_of_item_draws():
    # 200 items in 4 patterns; a one-hot row per item makes the totals the pattern counts.
    sizes = np.array([100, 60, 30, 10])
    pattern_of_item = np.repeat(np.arange(4), sizes)
    n_items, n_resamples = sizes.sum(), 20000
    counts = resampled_totals(np.eye(4)[pattern_of_item], n_resamples=n_resamples, seed=6)
    drawn = np.random.default_rng(7).integers(0, n_items, (n_resamples, n_items))
    naive = np.stack([np.bincount(pattern_of_item[row], minlength=4) for row in drawn])
    p = sizes / n_items
    # Multinomial(n, p): mean n p, variance n p (1 - p), covariance -n p_g p_h
    expected_cov = n_items * (np.diag(p) - np.outer(p, p))
    for sample in (counts, naive):
        assert (sample.sum(axis=1) == n_items).all() and (sample == np.round(sample)).all()
        assert np.allclose(sample.mean(axis=0), sizes, atol=5 * np.sqrt(np.diag(expected_cov) / n_resamples))
        assert np.allclose(np.cov(sample.T), expected_cov, rtol=0.06, atol=0.4)


def test_pattern_counts_match_the_binomial_pmf():
    # 16 items in 2 patterns of 12 and 4: the first pattern is drawn Binomial(16, 3/4) times
    from scipy import stats

    per_item = np.repeat([0.0, 1.0], [12, 4])
    first = 16 - resampled_totals(per_item, n_resamples=8000, seed=1)[:, 0]
    observed = np.bincount(first.astype(int), minlength=17)
    expected = 8000 * stats.binom.pmf(np.arange(17), 16, 0.75)
    keep = expected >= 5  # pool the rare tail so the chi-square approximation holds
    observed = np.r_[observed[keep], observed[~keep].sum()]
    expected = np.r_[expected[keep], expected[~keep].sum()]
    assert stats.chisquare(observed, expected).pvalue > 0.001


def test_distinct_items_use_the_resample_weights_draws():
    # every item its own pattern: the totals are exactly W @ x with W = resample_weights
    x = np.random.default_rng(2).normal(size=(50, 3))
    totals = resampled_totals(x, n_resamples=300, seed=8)
    assert np.allclose(totals, resample_weights(50, n_resamples=300, seed=8) @ x)


def peak_bytes(fn, *args, **kwargs):
    tracemalloc.start()
    try:
        fn(*args, **kwargs)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_many_items_never_hold_a_resamples_by_items_matrix():
    rng = np.random.default_rng(5)
    n_items = 100_000
    tables = np.zeros((n_items, 3, 3))
    tables[np.arange(n_items), rng.integers(0, 3, n_items)] = rng.multinomial(4, [0.5, 0.3, 0.2], n_items)
    bound = 64 * 2**20
    # 2,000 x 100k counts would take 1.6 GB as int64 or float
    assert peak_bytes(kappa_estimate, tables) < bound
    # distinct items (no pattern sharing), 200 resamples: a 200 x 100k matrix would be 160 MB
    continuous = rng.normal(size=n_items)
    assert peak_bytes(ratio_estimate, continuous, np.ones(n_items), n_resamples=200) < bound
    assert peak_bytes(statistic_estimate, np.mean, continuous, n_resamples=200) < bound
