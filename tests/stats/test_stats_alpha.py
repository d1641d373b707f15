"""Krippendorff's alpha, cross-checked against the `krippendorff` package."""

import krippendorff
import numpy as np
import pytest

from juge.stats import coincidence_matrix, krippendorff_alpha

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C:
# 4 observers x 12 units, nominal alpha 0.743, interval alpha 0.849.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
        [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
    ]
)


def random_ratings(seed, n_raters, n_items, n_values, missing):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, n_values + 1, n_items)
    noise = rng.integers(-1, 2, (n_raters, n_items)) * (rng.random((n_raters, n_items)) < 0.4)
    data = np.clip(truth + noise, 1, n_values).astype(float)
    data[rng.random(data.shape) < missing] = np.nan
    return data


def test_published_example():
    assert krippendorff_alpha(KRIPPENDORFF_2011, level="nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(KRIPPENDORFF_2011, level="interval") == pytest.approx(0.849, abs=5e-4)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("shape", [(2, 40, 4), (3, 25, 5), (6, 15, 3)])
def test_matches_krippendorff_package_with_missing_values(seed, level, shape):
    data = random_ratings(seed, *shape, missing=0.25)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level=level) == pytest.approx(expected, abs=1e-12)


def test_non_consecutive_values_interval_and_ordinal():
    data = random_ratings(42, 3, 30, 4, missing=0.2) ** 2  # values 1, 4, 9, 16
    for level in ("ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert krippendorff_alpha(data, level=level) == pytest.approx(expected, abs=1e-12)


def test_ordinal_ignores_values_only_in_unpairable_items():
    data = random_ratings(3, 3, 20, 4, missing=0.1)
    extra = np.full((3, 1), np.nan)
    extra[0, 0] = 99.0  # a single rating: not pairable, must not change alpha
    with_extra = np.hstack([data, extra])
    for level in ("nominal", "ordinal"):
        assert krippendorff_alpha(with_extra, level=level) == pytest.approx(krippendorff_alpha(data, level=level))


def test_coincidence_matrix_hand_worked():
    # unit 1: values (1, 1); unit 2: values (1, 2, 2); unit 3: single value, not pairable
    data = np.array([[1, 1, 2], [1, 2, np.nan], [np.nan, 2, np.nan]])
    values, o = coincidence_matrix(data)
    assert values.tolist() == [1, 2]
    # unit 1 contributes 2 to o11; unit 2 (m=3): o12 = o21 = 2/2 = 1, o22 = 2/2 = 1
    assert o.tolist() == [[2.0, 1.0], [1.0, 1.0]]
    # n = 5, n1 = 3, n2 = 2; D_o = 2/5, D_e = 2*3*2/(5*4) = 0.6 -> alpha = 1/3
    assert krippendorff_alpha(data) == pytest.approx(1 / 3)


def test_perfect_agreement_and_undefined_cases():
    perfect = np.array([[1, 2, 3, np.nan], [1, 2, 3, 4.0]])
    assert krippendorff_alpha(perfect, level="ordinal") == pytest.approx(1.0)
    assert krippendorff_alpha(np.array([[2, 2], [2, 2.0]])) is None  # one value only
    assert krippendorff_alpha(np.array([[1, np.nan], [np.nan, 2.0]])) is None  # nothing pairable
    with pytest.raises(ValueError, match="raters x items"):
        krippendorff_alpha(np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(perfect, level="ratio")
