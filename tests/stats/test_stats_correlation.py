"""Pearson and Spearman correlation, cross-checked against scipy."""

import numpy as np
import pytest
from scipy import stats

from juge.stats import pearson, spearman


@pytest.mark.parametrize("seed", range(8))
def test_pearson_and_spearman_match_scipy(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=40)
    y = 0.5 * x + rng.normal(size=40)
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_spearman_with_ties_on_ordinal_scores_matches_scipy(seed):
    rng = np.random.default_rng(100 + seed)
    x = rng.integers(1, 5, 60)
    y = np.clip(x + rng.integers(-1, 2, 60), 1, 4)
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)


def test_hand_worked_values():
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3, 4], [1, 10, 100, 1000]) == pytest.approx(1.0)  # monotone, not linear
    assert pearson([1, 2, 3, 4], [1, 10, 100, 1000]) < 0.95


def test_undefined_cases_return_none():
    assert pearson([3, 3, 3], [1, 2, 3]) is None
    assert spearman([1, 2, 3], [5, 5, 5]) is None
    assert pearson([1], [2]) is None
    assert pearson([], []) is None


def test_missing_values_and_bad_shapes_raise():
    with pytest.raises(ValueError, match="NaN"):
        pearson([1, np.nan, 3], [1, 2, 3])
    with pytest.raises(ValueError, match="equal length"):
        spearman([1, 2], [1, 2, 3])
