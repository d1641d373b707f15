"""Exact binomial interval, one-sided bound and McNemar's test, cross-checked against scipy."""

import numpy as np
import pytest
from scipy.stats import binomtest

from juge.stats import binomial_upper_bound, clopper_pearson, mcnemar_exact


@pytest.mark.parametrize("k,n", [(0, 10), (1, 10), (5, 10), (10, 10), (37, 155), (0, 1), (299, 300)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_clopper_pearson_matches_scipy(k, n, confidence):
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
    low, high = clopper_pearson(k, n, confidence=confidence)
    assert low == pytest.approx(ci.low, abs=1e-12)
    assert high == pytest.approx(ci.high, abs=1e-12)


@pytest.mark.parametrize("k,n", [(0, 299), (3, 50), (50, 50), (12, 400)])
def test_binomial_upper_bound_matches_one_sided_scipy(k, n):
    ci = binomtest(k, n, alternative="less").proportion_ci(confidence_level=0.95, method="exact")
    assert binomial_upper_bound(k, n, confidence=0.95) == pytest.approx(ci.high, abs=1e-12)


def test_rule_of_three():
    # 0 failures in n trials: the 95% upper bound is about 3/n
    assert binomial_upper_bound(0, 299) < 0.01 < binomial_upper_bound(0, 298)
    assert binomial_upper_bound(0, 1000) == pytest.approx(3 / 1000, rel=0.01)


def test_upper_bound_is_tighter_than_two_sided_high():
    assert binomial_upper_bound(7, 80) < clopper_pearson(7, 80)[1]


def test_clopper_pearson_empty_and_invalid():
    assert clopper_pearson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        clopper_pearson(5, 3)
    with pytest.raises(ValueError, match="confidence"):
        binomial_upper_bound(1, 3, confidence=95)


@pytest.mark.parametrize("b,c", [(0, 5), (3, 9), (10, 10), (1, 0), (25, 40), (7, 2)])
def test_mcnemar_exact_matches_binomtest(b, c):
    assert mcnemar_exact(b, c) == pytest.approx(binomtest(b, b + c, 0.5).pvalue, abs=1e-12)


def test_mcnemar_hand_worked_and_edges():
    # b=0, c=5: p = 2 * 0.5^5 = 0.0625
    assert mcnemar_exact(0, 5) == pytest.approx(0.0625)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(4, 4) == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_clopper_pearson_covers_at_least_nominal():
    # exact intervals are conservative: coverage >= 95% for every p
    rng = np.random.default_rng(0)
    for p in (0.05, 0.3, 0.5):
        ks = rng.binomial(40, p, 400)
        covered = np.mean([lo <= p <= hi for lo, hi in (clopper_pearson(int(k), 40) for k in ks)])
        assert covered >= 0.93
