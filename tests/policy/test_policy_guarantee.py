"""Fixed-sequence threshold ("Trust or Escalate"): a hand-worked case and its guarantee on synthetic data."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta

from juge.data.records import Judgment
from juge.policy.guarantee import check_on_holdout, fixed_sequence_threshold, pair_confidence


def test_hand_worked_zero_errors_need_22_items_at_90_90():
    # k = 0 of n: U = 1 - 0.1 ** (1 / n) <= 0.1  <=>  n >= ln 0.1 / ln 0.9 = 21.85.
    ok = fixed_sequence_threshold([1.0] * 22, [False] * 22, target=0.9, confidence=0.9)
    assert ok.threshold == 1.0 and ok.n_covered == 22
    assert ok.upper_bound == pytest.approx(1 - 0.1 ** (1 / 22))
    short = fixed_sequence_threshold([1.0] * 21, [False] * 21, target=0.9, confidence=0.9)
    assert short.threshold is None and short.coverage == 0.0
    assert short.steps[0].upper_bound == pytest.approx(1 - 0.1 ** (1 / 21))


def test_walk_stops_at_the_first_failing_threshold_even_if_a_lower_one_would_pass():
    # 30 items at 0.9 with no error (accepted), 5 at 0.8 all wrong (U > 0.1: stop),
    # then 400 perfect items at 0.5 that would pull the pooled bound back under 0.1.
    conf = [0.9] * 30 + [0.8] * 5 + [0.5] * 400
    wrong = [False] * 30 + [True] * 5 + [False] * 400
    result = fixed_sequence_threshold(conf, wrong, target=0.9, confidence=0.9)
    assert result.threshold == 0.9 and result.n_covered == 30
    assert [s.accepted for s in result.steps] == [True, False]
    assert result.coverage == pytest.approx(30 / 435)


def test_guarantee_holds_on_synthetic_data():
    """Over many dev draws, the true disagreement above the chosen threshold exceeds 1 - target at most ~10 %."""
    rng = np.random.default_rng(5)
    grid = np.linspace(0.05, 1.0, 20)
    p_wrong = 0.4 * (1 - grid) + 0.02  # more confident, less often wrong
    violations, coverages = 0, []
    for _ in range(300):
        idx = rng.integers(0, 20, size=400)
        wrong = rng.random(400) < p_wrong[idx]
        r = fixed_sequence_threshold(grid[idx], wrong, target=0.9, confidence=0.9)
        if r.threshold is not None:
            true_risk = p_wrong[grid >= r.threshold - 1e-12].mean()
            violations += true_risk > 0.1
            coverages.append(r.coverage)
    assert violations / 300 <= 0.12
    assert np.mean(coverages) > 0.15  # it buys real coverage, not just the top bin (5 %)


def test_check_on_holdout():
    # Five items; the judge decided the first four, one of which has no majority: 1 disagreement in 3.
    decided, wrong = [True, True, True, True, False], [False, False, True, None, True]
    held = check_on_holdout(0.5, decided, wrong, target=0.6)
    assert held["n_covered"] == 4 and held["n_items"] == 5 and held["coverage"] == pytest.approx(4 / 5)
    assert held["disagreement"]["value"] == pytest.approx(1 / 3) and held["disagreement"]["n"] == 3
    assert held["n_covered_without_majority"] == 1 and held["held"] is True
    assert held["disagreement"]["high"] == pytest.approx(beta.ppf(0.975, 2, 2))  # Clopper-Pearson, k=1, n=3
    assert check_on_holdout(0.5, decided, wrong, target=0.9)["held"] is False
    nobody = check_on_holdout(None, [False], [False], target=0.9)
    assert nobody["n_covered"] == 0 and nobody["held"] is None


def call(order, letter, distribution=None):
    return Judgment(
        item_id="x",
        judge="j",
        model="m",
        template="t",
        order=order,
        verdict=letter,
        outcome="ok",
        distribution=distribution,
    )


def test_pair_confidence_from_letters_repeats_and_distributions():
    assert pair_confidence("A", [call("12", "A"), call("21", "B")]) == 1.0
    assert pair_confidence("inconsistent", [call("12", "A"), call("21", "A")]) == 0.0
    assert pair_confidence(None, []) == 0.0
    # Three repeats per order, one of them disagreeing: 5 of 6 calls back the verdict.
    calls = [call("12", "A"), call("12", "A"), call("12", "C"), call("21", "B"), call("21", "B"), call("21", "B")]
    assert pair_confidence("A", calls) == pytest.approx(5 / 6)
    # Distributions over letters: in order 21 the verdict B is letter A.
    assert pair_confidence(
        "B", [call("12", "B", {"A": 0.2, "B": 0.8}), call("21", "A", {"A": 0.6, "B": 0.4})]
    ) == pytest.approx(0.7)
