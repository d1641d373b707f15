"""The selection statistics of `juge tune`: folds, the cheapest-within-noise rule, and that the
out-of-fold figure is honest where the in-sample one is not (simulated studies)."""

import numpy as np
import pytest

from juge.stats import paired_ratio_difference, ratio_estimate
from juge.tune.selection import (
    Table,
    best_rule,
    cheapest_within_noise_rule,
    group_folds,
    out_of_fold,
    out_of_fold_estimate,
    rank,
)


def test_folds_keep_groups_whole_and_balanced():
    folds = group_folds([f"q{i}" for i in range(20)], 5, seed=1)
    assert sorted(np.bincount(list(folds.values()))) == [4, 4, 4, 4, 4]
    assert group_folds([f"q{i}" for i in range(20)], 5, seed=1) == folds  # seeded
    with pytest.raises(ValueError):
        group_folds(["a", "b", "c", "d", "e"], 3)  # fewer than two groups per fold


def test_table_sums_items_into_groups_hand_worked():
    t = Table.from_items(
        ["x"], {"x": [1, 2, 0, 1]}, [2, 2, 2, 1], ["b", "a", "b", "c"], {"a": 0, "b": 1, "c": 0}, {"x": 1.0}
    )
    assert t.matches.tolist() == [[2.0, 1.0, 1.0]] and t.pairs.tolist() == [2.0, 4.0, 1.0]
    assert t.folds.tolist() == [0, 1, 0]
    assert t.agreement(0, t.all) == pytest.approx(4 / 7)


def test_out_of_fold_hand_worked():
    # two candidates, four groups in two folds; a is better on fold 0, b on fold 1
    t = Table(
        ["a", "b"],
        np.array([[2.0, 2.0, 0.0, 1.0], [0.0, 1.0, 2.0, 2.0]]),
        np.full(4, 2.0),
        np.array([0, 0, 1, 1]),
        np.array([1.0, 1.0]),
    )
    value, chosen = out_of_fold(t, best_rule)
    # fold 0 held: chosen on fold 1 -> b, scores 0 + 1; fold 1 held: chosen on fold 0 -> a, scores 0 + 1
    assert chosen == [1, 0]
    assert value == pytest.approx(2 / 8)
    assert best_rule(t, t.all) == 0 and t.agreement(0, t.all) == pytest.approx(5 / 8)  # in-sample: 0.625


def _counts(rng, accuracy, n, raters=2):
    return rng.binomial(raters, accuracy, size=n).astype(float)


def test_rank_picks_a_cheaper_candidate_within_noise_and_never_a_clearly_worse_one():
    rng = np.random.default_rng(0)
    n = 300
    cheap = _counts(rng, 0.80, n)
    costly = cheap.copy()
    costly[np.flatnonzero(cheap < 2)[:10]] += 1
    costly[np.flatnonzero(cheap > 0)[-6:]] -= 1  # better on 10 items, worse on 6: within noise
    m = np.array([cheap, costly, _counts(rng, 0.55, n)])
    t = Table(["cheap", "costly", "bad"], m, np.full(n, 2.0), np.arange(n) % 5, np.array([1.0, 3.0, 0.5]))
    rows, best, chosen = rank(t, n_resamples=500)
    assert t.names[chosen] == "cheap"
    assert not rows[2].within_noise  # the cheapest of all, but clearly worse
    assert rows[best].difference_to_best is None
    ref = paired_ratio_difference(m[2], t.pairs, m[best], t.pairs, n_resamples=500)
    assert (rows[2].difference_to_best.low, rows[2].difference_to_best.high) == (ref.low, ref.high)
    assert rows[2].agreement.value == pytest.approx(ratio_estimate(m[2], t.pairs).value)
    # the same rule as a function of the training groups
    assert cheapest_within_noise_rule(n_resamples=500)(t, t.all) == chosen


def test_out_of_fold_is_honest_where_in_sample_is_optimistic():
    """200 simulated studies: 8 candidates of equal true agreement 0.70 (nothing to tune), 60 dev
    groups of 2 labels, a holdout of 2,000 groups. The in-sample figure of the winner overstates its
    holdout figure and its interval misses it often; the out-of-fold figure is unbiased and its
    interval covers the holdout figure at about the stated 95 %."""
    rng = np.random.default_rng(42)
    n_dev, n_hold, truth = 60, 2000, 0.70
    pairs = np.full(n_dev, 2.0)
    gaps_in, gaps_oof, covered, covered_in = [], [], 0, 0
    for sim in range(200):
        folds = np.array(list(group_folds([f"g{i}" for i in range(n_dev)], 5, seed=sim).values()))
        t = Table([f"c{k}" for k in range(8)], np.array([_counts(rng, truth, n_dev) for _ in range(8)]),
                  pairs, folds, np.ones(8))  # fmt: skip
        chosen = best_rule(t, t.all)
        oof, _ = out_of_fold_estimate(t, best_rule, n_resamples=300, seed=sim)
        ins = ratio_estimate(t.matches[chosen], pairs, n_resamples=300, seed=sim)
        holdout = _counts(rng, truth, n_hold).sum() / (2 * n_hold)
        gaps_in.append(ins.value - holdout)
        gaps_oof.append(oof.value - holdout)
        covered += oof.low <= holdout <= oof.high
        covered_in += ins.low <= holdout <= ins.high
    assert np.mean(gaps_in) > 0.04  # the winner's curse
    assert abs(np.mean(gaps_oof)) < 0.015
    assert covered / 200 >= 0.90
    assert covered_in / 200 < 0.80
