"""Weighted kappa on the declared scale: a point nobody used keeps its place (cross-checked with scikit-learn)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from juge.calibration.grades import build_grade_table, grade_study
from juge.calibration.inputs import load_inputs, run_study
from juge.calibration.pairwise import Bootstrap
from juge.data.adapters import parse_scale
from juge.data.records import Case, HumanLabel, Judgment

BOOT = Bootstrap(n_resamples=100, seed=1)


def rated(points, n=40, seed=3):
    rng = np.random.default_rng(seed)
    people, judge = rng.choice(points, n), rng.choice(points, n)
    cases = [Case(id=f"i{k}", output="x") for k in range(n)]
    labels = [HumanLabel(item_id=f"i{k}", rater_id="r1", label=int(people[k])) for k in range(n)]
    calls = [
        Judgment(item_id=f"i{k}", judge="j", model="m", template="t", outcome="ok", verdict=int(judge[k]))
        for k in range(n)
    ]
    return cases, labels, calls, people, judge


def test_an_unused_middle_point_keeps_its_distance():
    cases, labels, calls, people, judge = rated([1, 2, 4, 5])  # a 1-5 scale on which nobody gave 3
    study = grade_study(build_grade_table("score", cases, labels, calls), split=None, boot=BOOT)
    j = study["judges"]["j/t"]
    assert study["scale"] == [1, 2, 3, 4, 5] and j["confusion"]["labels"] == [1, 2, 3, 4, 5]
    expected = cohen_kappa_score(judge, people, labels=[1, 2, 3, 4, 5], weights="quadratic")
    assert j["weighted_kappa"]["value"] == pytest.approx(expected)
    assert expected != pytest.approx(cohen_kappa_score(judge, people, weights="quadratic"))  # the case matters
    assert j["kappa"]["value"] == pytest.approx(cohen_kappa_score(judge, people, labels=[1, 2, 3, 4, 5]))


def test_the_declared_scale_sets_the_points():
    cases, labels, calls, people, judge = rated([2, 3, 5])
    table = build_grade_table("score", cases, labels, calls, declared_scale=(1, 6))
    j = grade_study(table, split=None, boot=BOOT)["judges"]["j/t"]
    assert j["confusion"]["labels"] == [1, 2, 3, 4, 5, 6]
    assert j["weighted_kappa"]["value"] == pytest.approx(
        cohen_kappa_score(judge, people, labels=[1, 2, 3, 4, 5, 6], weights="quadratic")
    )


def test_scale_words_declare_the_scale(tmp_path: Path):
    # Nobody wrote 'Could be Improved' (2) or 'Excellent' (4): the scale is still 1-4.
    words = {1: "Bad", 3: "Acceptable"}
    rng = np.random.default_rng(5)
    r1, r2 = rng.choice([1, 3], 30), rng.choice([1, 3], 30)
    path = tmp_path / "rated.csv"
    path.write_text(
        "id,output,rating_1,rating_2\n"
        + "".join(f"i{k},answer,{words[int(a)]},{words[int(b)]}\n" for k, (a, b) in enumerate(zip(r1, r2))),
        encoding="utf-8",
    )
    inputs = load_inputs(
        items=path,
        label_cols=["rating_1", "rating_2"],
        scale=parse_scale("Bad=1,'Could be Improved'=2,Acceptable=3,Excellent=4"),
    )
    assert inputs.declared_scale == (1.0, 4.0)
    study = run_study(inputs, split="all", boot=BOOT)
    assert study["scale"] == [1, 2, 3, 4]
    assert study["ceiling"]["weighted_kappa"]["value"] == pytest.approx(
        cohen_kappa_score(r1, r2, labels=[1, 2, 3, 4], weights="quadratic")
    )


def test_truth_agree_keeps_only_items_where_all_raters_agree():
    # The rule the module docstring states: two or more raters, all giving the same label.
    cases = [Case(id=i, output="x") for i in ("all", "two-of-three", "alone")]
    labels = [
        HumanLabel(item_id=i, rater_id=r, label=v)
        for i, r, v in (
            ("all", "r1", 3),
            ("all", "r2", 3),
            ("all", "r3", 3),
            ("two-of-three", "r1", 2),
            ("two-of-three", "r2", 2),
            ("two-of-three", "r3", 4),
            ("alone", "r1", 1),
        )
    ]
    calls = [
        Judgment(item_id=i, judge="j", model="m", template="t", outcome="ok", verdict=3)
        for i in ("all", "two-of-three", "alone")
    ]
    study = grade_study(build_grade_table("score", cases, labels, calls), split=None, truth="agree", boot=BOOT)
    assert study["truth"] == {"mode": "agree", "n_items": 1}
    assert study["judges"]["j/t"]["agreement"] == {**study["judges"]["j/t"]["agreement"], "value": 1.0, "n": 1}
