"""A category panel says how many rater pairs its ceiling rests on, 0 when none: never `n=?`."""

from __future__ import annotations

from juge.reports.plots import _category_label


def test_pairs_n_is_a_number_even_without_a_ceiling():
    no_pairs = {"name": "billing", "ceiling": {"agreement": None, "n_pairs": 0}, "judges": {}}
    assert "pairs n=0" in _category_label(no_pairs)
    some = {
        "name": "returns",
        "ceiling": {"agreement": {"value": 0.8, "low": 0.5, "high": 1.0, "n": 7}, "n_pairs": 7},
        "judges": {"j": {"agreement": {"value": 0.5, "low": 0.2, "high": 0.8, "n": 12}}},
    }
    assert _category_label(some) == "returns\npairs n=7 · votes n=12"
