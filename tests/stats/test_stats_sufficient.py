"""The bootstrap from per-item sums (kappa from margins, alpha and correlations from sums over the drawn items)
gives the intervals of the straightforward reference, resample for resample, on the same seed; the point
figures stay those of scikit-learn, scipy and the krippendorff package."""

import tracemalloc

import krippendorff
import numpy as np
import pytest
from scipy import stats as scipy_stats
from sklearn.metrics import cohen_kappa_score

from juge.errors import Fault
from juge.stats import kappa_from_tables, pair_tables, pearson, percentile_interval, spearman, statistic_estimate
from juge.stats.alpha import alpha_estimate, alpha_from_counts
from juge.stats.bootstrap import kappa_estimate, pair_kappa_estimates, resampled_totals
from juge.stats.correlation import pearson_estimate, spearman_estimate

WEIGHTS = (None, "linear", "quadratic")


def rated(seed, n_items, n_values, n_raters=3, decimals=None):
    """Items x raters: a true value per item plus rater noise, on `n_values` points (or continuous)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n_values, n_items)
    data = np.clip(truth[:, None] + rng.integers(-2, 3, (n_items, n_raters)), 0, n_values - 1).astype(float)
    if decimals is not None:
        data = np.round(rng.uniform(0, 20, n_items)[:, None] + rng.normal(0, 2, (n_items, n_raters)), decimals)
    data[rng.random(data.shape) < 0.1] = np.nan
    return data


def rater_pairs(data):
    """Every pair of distinct raters' values on each item, as the ceiling pools them."""
    a, b, item = [], [], []
    for i, row in enumerate(data):
        present = row[~np.isnan(row)]
        for j in range(present.size):
            for k in range(j + 1, present.size):
                a.append(present[j])
                b.append(present[k])
                item.append(i)
    return np.array(a), np.array(b), np.array(item, dtype=np.int64)


def reference_kappa(tables, weights, n_resamples, seed):
    """The old path: every resample's pooled K x K table, then its kappa."""
    n_items, k = tables.shape[0], tables.shape[1]
    totals = resampled_totals(tables.reshape(n_items, k * k), n_resamples=n_resamples, seed=seed)
    value = float(kappa_from_tables(tables.sum(axis=0), weights=weights))
    return value, *percentile_interval(kappa_from_tables(totals.reshape(-1, k, k), weights=weights))


# (items, scale points): few points and many items draw pattern counts, many points draw items
@pytest.mark.parametrize("n_items,n_values", [(400, 3), (120, 5), (150, 40), (40, 120)])
def test_kappa_from_pairs_equals_the_table_bootstrap(n_items, n_values):
    data = rated(n_items, n_items, n_values)
    a, b, item = rater_pairs(data)
    labels = sorted(set(a) | set(b))
    tables = pair_tables(a, b, item, labels, n_items=n_items)
    fast = pair_kappa_estimates(a, b, item, labels, n_items=n_items, weights=WEIGHTS, n_resamples=500, seed=3)
    for weights, estimate in zip(WEIGHTS, fast):
        value, low, high = reference_kappa(tables, weights, 500, 3)
        assert estimate.value == pytest.approx(value, abs=1e-12)
        assert (estimate.low, estimate.high) == pytest.approx((low, high), abs=1e-12)
        dense = kappa_estimate(tables, weights=weights, n_resamples=500, seed=3)
        assert (dense.value, dense.low, dense.high) == pytest.approx((value, low, high), abs=1e-12)
        expected = cohen_kappa_score(a, b, labels=labels, weights=weights)
        assert estimate.value == pytest.approx(expected, abs=1e-12)
        assert estimate.n == a.size and estimate.n_items == n_items


def test_kappa_from_pairs_with_no_pairs_and_items_without_pairs():
    (empty,) = pair_kappa_estimates([], [], [], ["A", "B"], n_items=3, n_resamples=50)
    assert empty.value is None and empty.low is None and empty.n == 0
    (one,) = pair_kappa_estimates(["A", "B"], ["A", "B"], [0, 2], ["A", "B"], n_items=3, n_resamples=50)
    tables = pair_tables(np.array(["A", "B"]), np.array(["A", "B"]), np.array([0, 2]), ["A", "B"], n_items=3)
    assert (one.value, one.low, one.high) == pytest.approx(reference_kappa(tables, None, 50, 0))


def reference_alpha(per_item, level):
    """The old path: rebuild the items x values counts of each resample and compute alpha from them."""
    values = np.array(sorted({v for vs in per_item for v in vs}))
    counts = np.zeros((len(per_item), values.size))
    for i, vs in enumerate(per_item):
        for v in vs:
            counts[i, np.searchsorted(values, v)] += 1
    fn = lambda c: alpha_from_counts(c, values, level=level)  # noqa: E731
    return statistic_estimate(fn, counts, n=int(counts.sum()), n_resamples=400, seed=5)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("n_items,n_values,decimals", [(80, 4, None), (150, 30, None), (60, 0, 1)])
def test_alpha_from_sums_equals_the_rebuilt_bootstrap(level, n_items, n_values, decimals):
    data = rated(7 + n_items, n_items, n_values or 2, decimals=decimals)
    per_item = [[float(v) for v in row if not np.isnan(v)] for row in data]
    fast = alpha_estimate(per_item, level=level, n_resamples=400, seed=5)
    reference = reference_alpha(per_item, level)
    assert (fast.value, fast.low, fast.high) == pytest.approx((reference.value, reference.low, reference.high))
    assert fast.value == pytest.approx(krippendorff.alpha(reliability_data=data.T, level_of_measurement=level))
    assert fast.n == reference.n and fast.n_items == n_items


def test_alpha_undefined_and_empty():
    assert alpha_estimate([], level="ordinal").value is None
    same = alpha_estimate([[2.0, 2.0], [2.0, 2.0, 2.0]], level="interval", n_resamples=20)
    assert same.value is None and same.low is None


@pytest.mark.parametrize("pairs_per_item,decimals", [(1, 0), (3, 1), (2, 0)])
def test_correlations_from_sums_equal_the_rebuilt_bootstrap(pairs_per_item, decimals):
    rng = np.random.default_rng(pairs_per_item)
    n_items = 150
    clusters = np.repeat(np.arange(n_items), pairs_per_item)
    x = np.round(rng.normal(10, 3, clusters.size), decimals)
    y = np.round(x + rng.normal(0, 3, clusters.size), decimals)
    for fast_fn, fn, scipy_fn in (
        (pearson_estimate, pearson, scipy_stats.pearsonr),
        (spearman_estimate, spearman, scipy_stats.spearmanr),
    ):
        fast = fast_fn(x, y, clusters=clusters, n_resamples=500, seed=2)
        reference = statistic_estimate(fn, x, y, clusters=clusters, n_resamples=500, seed=2)
        assert (fast.value, fast.low, fast.high) == pytest.approx((reference.value, reference.low, reference.high))
        assert fast.value == pytest.approx(scipy_fn(x, y)[0])
        assert (fast.n, fast.n_items) == (clusters.size, n_items)


def test_correlations_leave_out_resamples_with_a_constant_side():
    # most resamples of 4 items draw x constant at least once in the quantiles' reach
    x, y = np.array([1.0, 1.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0, 5.0])
    for fast_fn, fn in ((pearson_estimate, pearson), (spearman_estimate, spearman)):
        fast = fast_fn(x, y, n_resamples=300, seed=1)
        reference = statistic_estimate(fn, x, y, n_resamples=300, seed=1)
        assert (fast.value, fast.low, fast.high) == pytest.approx((reference.value, reference.low, reference.high))


def peak_bytes(fn, *args, **kwargs):
    tracemalloc.start()
    try:
        fn(*args, **kwargs)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_many_values_hold_no_table_per_item():
    # 3,000 items x 3 raters on 201 values: a 201 x 201 table per item would be 970 MB
    data = rated(11, 3000, 2, decimals=1)
    a, b, item = rater_pairs(data)
    labels = sorted(set(a) | set(b))
    assert len(labels) > 150
    bound = 64 * 2**20
    assert peak_bytes(pair_kappa_estimates, a, b, item, labels, n_items=3000, n_resamples=200) < bound
    per_item = [[float(v) for v in row if not np.isnan(v)] for row in data]
    assert peak_bytes(alpha_estimate, per_item, level="ordinal", n_resamples=200) < bound


def test_running_out_of_memory_in_the_bootstrap_is_a_fault_naming_what_to_reduce(monkeypatch):
    import juge.stats.bootstrap as bootstrap

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(bootstrap, "summed", exhausted)
    with pytest.raises(Fault) as caught:
        pair_kappa_estimates(["A", "B"], ["A", "A"], [0, 1], ["A", "B"], n_items=2, n_resamples=100)
    assert caught.value.exit_code == 3
    assert "--resamples" in str(caught.value) and "2 items" in str(caught.value)
