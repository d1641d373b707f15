"""The selection statistics of `juge tune`: folds, the cheapest-within-noise rule, kappa and failures
caught as the one meaning of "better" for PASS/FAIL, and that the out-of-fold figure is honest where the
in-sample one is not (simulated studies)."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from juge.stats import paired_ratio_difference, ratio_estimate
from juge.tune.selection import (
    MISSING,
    Table,
    best_rule,
    cheapest_within_noise_rule,
    group_folds,
    out_of_fold,
    out_of_fold_estimate,
    rank,
)


def agreement_table(names, matches, pairs, folds, cost):
    """A pairwise table whose candidates agree with `matches` of each group's `pairs` human labels."""
    m, p = np.asarray(matches, dtype=float).reshape(len(names), -1), np.asarray(pairs, dtype=float)
    counts = np.zeros((len(names), p.size, 3, 3))
    counts[:, :, 0, 0] = m
    counts[:, :, 1, 0] = p - m
    return Table(list(names), "pairwise", ["A", "B", MISSING], counts, np.zeros((p.size, 2)), np.asarray(folds),
                 np.asarray(cost, dtype=float))  # fmt: skip


def test_folds_keep_groups_whole_and_balanced():
    folds = group_folds([f"q{i}" for i in range(20)], 5, seed=1)
    assert sorted(np.bincount(list(folds.values()))) == [4, 4, 4, 4, 4]
    assert group_folds([f"q{i}" for i in range(20)], 5, seed=1) == folds  # seeded
    with pytest.raises(ValueError):
        group_folds(["a", "b", "c", "d", "e"], 3)  # fewer than two groups per fold


def test_table_sums_items_into_groups_hand_worked():
    votes = [["PASS", "FAIL"], ["PASS", "PASS"], ["FAIL", "FAIL"], ["PASS"]]
    t = Table.from_items(
        "passfail", ["PASS", "FAIL"], ["x"], {"x": ["PASS", "PASS", None, "FAIL"]}, votes, ["b", "a", "b", "c"],
        {"a": 0, "b": 1, "c": 0}, {"x": 1.0},
    )  # fmt: skip
    # group a: judge PASS vs PASS, PASS; group b: PASS vs PASS, FAIL and no verdict vs FAIL, FAIL
    assert t.counts[0, 0].tolist() == [[2, 0, 0], [0, 0, 0], [0, 0, 0]]
    assert t.counts[0, 1, 0].tolist() == [1, 1, 0] and t.counts[0, 1, 2].tolist() == [0, 2, 0]
    assert t.counts[0, 2, 1].tolist() == [1, 0, 0]  # group c: FAIL where the person said PASS
    assert t.folds.tolist() == [0, 1, 0]
    assert t.value(0, t.all, "agreement") == pytest.approx(3 / 7)
    # people: the FAIL votes of one rater the other also called FAIL (ordered pairs): item 1 gives 0 of 1,
    # item 3 gives 2 of 2
    assert t.people_caught.tolist() == [[0, 0], [2, 3], [0, 0]] and t.bar(t.all) == pytest.approx(2 / 3)


def test_kappa_and_failures_caught_match_scikit_learn():
    rng = np.random.default_rng(3)
    n = 90
    truth = rng.choice(["PASS", "FAIL"], size=n, p=[0.7, 0.3])
    votes = [[t, t if rng.random() < 0.85 else ("FAIL" if t == "PASS" else "PASS")] for t in truth]
    said = [None if rng.random() < 0.05 else (t if rng.random() < 0.75 else "PASS") for t in truth]
    groups = [f"g{i // 3}" for i in range(n)]
    t = Table.from_items("passfail", ["PASS", "FAIL"], ["j"], {"j": said}, votes, groups,
                         {g: 0 for g in groups}, {"j": 0.0})  # fmt: skip
    judge = [s or MISSING for s, vs in zip(said, votes) for _ in vs]
    human = [v for vs in votes for v in vs]
    assert t.value(0, t.all) == pytest.approx(cohen_kappa_score(judge, human, labels=["PASS", "FAIL", MISSING]))
    fails = [j for j, h in zip(judge, human) if h == "FAIL"]
    assert t.value(0, t.all, "failures_caught") == pytest.approx(fails.count("FAIL") / len(fails))


def test_a_judge_that_says_pass_to_almost_everything_never_wins_on_raw_agreement():
    """The reproduction of issue 23: 40 PASS/FAIL cases, 6 human FAILs; one candidate says PASS to 39
    (agreement 0.875, kappa 0.254, caught 1 of 6 pairs' worth), another catches every failure but flags
    8 good answers (agreement 0.800, kappa 0.494). Raw agreement picks the first; the rule, the second.
    An exact always-PASS candidate is never chosen either."""
    truth = ["FAIL" if i < 6 else "PASS" for i in range(40)]
    votes = [[x, x] for x in truth]
    lazy = ["FAIL" if i == 0 else "PASS" for i in range(40)]
    careful = ["FAIL" if i < 14 else "PASS" for i in range(40)]
    groups = [f"g{i}" for i in range(40)]
    folds = {g: i % 4 for i, g in enumerate(groups)}
    t = Table.from_items(
        "passfail", ["PASS", "FAIL"], ["always-pass", "lazy", "careful"],
        {"always-pass": ["PASS"] * 40, "lazy": lazy, "careful": careful}, votes, groups, folds,
        {"always-pass": 0.0, "lazy": 1.0, "careful": 2.0},
    )  # fmt: skip
    assert t.value(1, t.all, "agreement") == pytest.approx(0.875)
    assert t.value(2, t.all, "agreement") == pytest.approx(0.800)
    assert t.value(1, t.all) == pytest.approx(cohen_kappa_score(lazy, truth))
    assert t.value(0, t.all) == 0.0
    rows, best, chosen = rank(t, n_resamples=300)
    assert t.names[best] == t.names[chosen] == "careful"
    assert not rows[0].within_noise and not rows[1].within_noise  # cheaper, but catch too few failures
    assert [r.enough for r in rows] == [False, False, True]
    _, per_fold = out_of_fold(t, cheapest_within_noise_rule(n_resamples=100))
    assert set(per_fold) == {2}
    # with no candidate reaching the people's bar, one that catches some failures still beats always-PASS
    # even with a lower kappa
    worse = ["FAIL" if i in (0, 20, 21, 22, 23, 24, 25, 26) else "PASS" for i in range(40)]
    t2 = Table.from_items("passfail", ["PASS", "FAIL"], ["always-pass", "worse"],
                          {"always-pass": ["PASS"] * 40, "worse": worse}, votes, groups, folds,
                          {"always-pass": 0.0, "worse": 1.0})  # fmt: skip
    assert t2.value(1, t2.all) < 0.1
    assert t2.names[rank(t2, n_resamples=300)[2]] == "worse"


def test_out_of_fold_hand_worked():
    # two candidates, four groups in two folds; a is better on fold 0, b on fold 1
    t = agreement_table(
        ["a", "b"], [[2.0, 2.0, 0.0, 1.0], [0.0, 1.0, 2.0, 2.0]], np.full(4, 2.0), [0, 0, 1, 1], [1.0, 1.0]
    )
    value, chosen = out_of_fold(t, best_rule)
    # fold 0 held: chosen on fold 1 -> b, scores 0 + 1; fold 1 held: chosen on fold 0 -> a, scores 0 + 1
    assert chosen == [1, 0]
    assert value == pytest.approx(2 / 8)
    assert best_rule(t, t.all) == 0 and t.value(0, t.all) == pytest.approx(5 / 8)  # in-sample: 0.625


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
    t = agreement_table(["cheap", "costly", "bad"], m, np.full(n, 2.0), np.arange(n) % 5, [1.0, 3.0, 0.5])
    rows, best, chosen = rank(t, n_resamples=500)
    assert t.names[chosen] == "cheap"
    assert not rows[2].within_noise  # the cheapest of all, but clearly worse
    assert rows[best].difference_to_best is None
    pairs = np.full(n, 2.0)
    ref = paired_ratio_difference(m[2], pairs, m[best], pairs, n_resamples=500)
    assert rows[2].difference_to_best.value == pytest.approx(ref.value)
    assert rows[2].difference_to_best.high < 0 and ref.high < 0
    assert rows[2].value.value == pytest.approx(ratio_estimate(m[2], pairs).value)
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
        matches = np.array([_counts(rng, truth, n_dev) for _ in range(8)])
        t = agreement_table([f"c{k}" for k in range(8)], matches, pairs, folds, np.ones(8))
        chosen = best_rule(t, t.all)
        oof, _ = out_of_fold_estimate(t, best_rule, n_resamples=300, seed=sim)
        ins = ratio_estimate(matches[chosen], pairs, n_resamples=300, seed=sim)
        holdout = _counts(rng, truth, n_hold).sum() / (2 * n_hold)
        gaps_in.append(ins.value - holdout)
        gaps_oof.append(oof.value - holdout)
        covered += oof.low <= holdout <= oof.high
        covered_in += ins.low <= holdout <= ins.high
    assert np.mean(gaps_in) > 0.04  # the winner's curse
    assert abs(np.mean(gaps_oof)) < 0.015
    assert covered / 200 >= 0.90
    assert covered_in / 200 < 0.80
