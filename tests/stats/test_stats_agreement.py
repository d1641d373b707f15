"""Agreement and Cohen's kappa, cross-checked against scikit-learn."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from juge.stats import (
    agreement,
    cohen_kappa,
    confusion_table,
    kappa_from_tables,
    kappa_weight_matrix,
    pair_tables,
)


def correlated_labels(rng, n, k, keep=0.6):
    a = rng.integers(0, k, n)
    b = np.where(rng.random(n) < keep, a, rng.integers(0, k, n))
    return a, b


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("k", [2, 3, 4, 6])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn_on_random_data(seed, k, weights):
    rng = np.random.default_rng(seed)
    a, b = correlated_labels(rng, 150, k)
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(cohen_kappa_score(a, b, weights=weights), abs=1e-12)


def test_agreement_is_share_equal_and_matches_sklearn_accuracy():
    rng = np.random.default_rng(7)
    a, b = correlated_labels(rng, 300, 3)
    assert agreement(a, b) == pytest.approx(np.mean(a == b))
    assert agreement(["A", "B", "tie", "A"], ["A", "tie", "tie", "B"]) == 0.5


def test_string_labels_with_given_order_match_sklearn():
    rng = np.random.default_rng(3)
    names = np.array(["Bad", "Could be Improved", "Acceptable", "Excellent"])
    a, b = correlated_labels(rng, 120, 4)
    y1, y2 = names[a], names[b]
    order = list(names)  # ordinal order, not alphabetical
    for weights in (None, "linear", "quadratic"):
        ours = cohen_kappa(y1, y2, labels=order, weights=weights)
        assert ours == pytest.approx(cohen_kappa_score(y1, y2, labels=order, weights=weights), abs=1e-12)
    # the alphabetical default order gives a different weighted kappa: the order matters
    assert cohen_kappa(y1, y2, weights="quadratic") != pytest.approx(
        cohen_kappa(y1, y2, labels=order, weights="quadratic")
    )


def test_labels_with_unused_category_match_sklearn():
    y1 = ["A", "B", "A", "A", "B", "A"]
    y2 = ["A", "B", "B", "A", "B", "A"]
    labels = ["A", "B", "tie"]
    for weights in (None, "linear"):
        assert cohen_kappa(y1, y2, labels=labels, weights=weights) == pytest.approx(
            cohen_kappa_score(y1, y2, labels=labels, weights=weights)
        )


def test_numeric_ordinal_labels_are_sorted_numerically():
    y1 = [2, 10, 10, 2, 5]
    y2 = [2, 10, 5, 5, 5]
    numeric = cohen_kappa(y1, y2, labels=[2, 5, 10], weights="linear")
    lexicographic = cohen_kappa(y1, y2, labels=[10, 2, 5], weights="linear")
    assert numeric != pytest.approx(lexicographic)
    assert cohen_kappa(y1, y2, weights="linear") == pytest.approx(numeric)
    assert cohen_kappa(y1, y2, weights="linear") == pytest.approx(cohen_kappa_score(y1, y2, weights="linear"))


def test_hand_worked_kappa():
    # table [[20, 5], [10, 15]]: p_o = 35/50 = 0.7, p_e = (25*30 + 25*20)/50^2 = 0.5, kappa = 0.4
    y1 = ["yes"] * 25 + ["no"] * 25
    y2 = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(y1, y2) == pytest.approx(0.4)
    assert agreement(y1, y2) == pytest.approx(0.7)


def test_kappa_when_chance_agreement_is_one():
    # sklearn returns NaN here; juge defines it as 1.0 (observed agreement is then necessarily 1)
    assert cohen_kappa(["A", "A", "A"], ["A", "A", "A"]) == 1.0
    assert cohen_kappa(["A", "A"], ["A", "A"], labels=["A", "B"], weights="quadratic") == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(cohen_kappa_score(["A", "A", "A"], ["A", "A", "A"]))


def test_perfect_disagreement_and_empty_tables():
    assert cohen_kappa(["A", "B"], ["B", "A"]) == pytest.approx(-1.0)
    assert np.isnan(kappa_from_tables(np.zeros((2, 2))))  # empty: NaN, callers turn it into None
    got = kappa_from_tables(np.array([np.zeros((2, 2)), [[3, 1], [1, 3]]]))
    assert np.isnan(got[0]) and got[1] == pytest.approx(0.5)


def test_empty_input_is_undefined_not_an_error():
    assert agreement([], []) is None
    assert cohen_kappa([], []) is None


def test_unknown_label_and_length_mismatch_raise():
    with pytest.raises(ValueError, match="not in labels"):
        cohen_kappa(["A", "B"], ["A", "C"], labels=["A", "B"])
    with pytest.raises(ValueError, match="equal length"):
        agreement([1, 2], [1])
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa([1, 2], [1, 2], weights="cubic")


def test_confusion_table_matches_sklearn():
    rng = np.random.default_rng(11)
    a, b = correlated_labels(rng, 90, 4)
    assert (confusion_table(a, b) == confusion_matrix(a, b)).all()


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_from_tables_is_vectorised_over_leading_axes(weights):
    rng = np.random.default_rng(5)
    tables = rng.integers(0, 20, size=(4, 3, 3, 3))
    got = kappa_from_tables(tables, weights=weights)
    assert got.shape == (4, 3)
    for idx in np.ndindex(4, 3):
        t = tables[idx]
        rows, cols = np.nonzero(t)
        y1 = np.repeat(rows, t[rows, cols])
        y2 = np.repeat(cols, t[rows, cols])
        assert got[idx] == pytest.approx(cohen_kappa(y1, y2, labels=[0, 1, 2], weights=weights), abs=1e-12)


def test_weight_matrices():
    assert (kappa_weight_matrix(3) == 1 - np.eye(3)).all()
    assert kappa_weight_matrix(3, "linear")[0, 2] == 2
    assert kappa_weight_matrix(3, "quadratic")[0, 2] == 4


def test_pair_tables_by_position_sum_to_pooled_table():
    rng = np.random.default_rng(2)
    a, b = correlated_labels(rng, 60, 3)
    labels = np.array(["A", "B", "tie"])
    items = rng.integers(0, 12, 60)  # item 12 and 13 have no pairs
    tables = pair_tables(labels[a], labels[b], items, list(labels), n_items=14)
    assert tables.shape == (14, 3, 3)
    assert (tables[12:] == 0).all()
    assert (tables.sum(axis=0) == confusion_table(labels[a], labels[b], labels=list(labels))).all()
    for i in range(12):
        mask = items == i
        assert (tables[i] == confusion_table(labels[a][mask], labels[b][mask], labels=list(labels))).all()


def test_pair_tables_with_item_ids_orders_by_sorted_id():
    tables = pair_tables(["A", "B", "A"], ["A", "A", "B"], ["q9", "q1", "q9"], ["A", "B"])
    assert tables.shape == (2, 2, 2)
    assert tables[0].tolist() == [[0, 0], [1, 0]]  # q1: one (B, A) pair
    assert tables[1].tolist() == [[1, 1], [0, 0]]  # q9: (A, A) and (A, B)


def test_pair_tables_rejects_positions_out_of_range():
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        pair_tables(["A"], ["A"], [2], ["A"], n_items=2)


labels_st = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(labels_st, st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_matches_sklearn_wherever_sklearn_is_defined(pairs, weights):
    y1, y2 = (np.array(x) for x in zip(*pairs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = cohen_kappa_score(y1, y2, weights=weights)
    ours = cohen_kappa(y1, y2, weights=weights)
    if np.isnan(expected):
        assert ours == 1.0 and (y1 == y2).all()
    else:
        assert ours == pytest.approx(expected, abs=1e-9)
    assert -1.0 - 1e-9 <= ours <= 1.0 + 1e-9
    if weights is None:
        assert ours == pytest.approx(cohen_kappa(y2, y1))
