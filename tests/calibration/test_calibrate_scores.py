"""Single-score and PASS/FAIL calibration, cross-checked against scipy, scikit-learn and krippendorff."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from juge.calibration.grades import build_grade_table, grade_study
from juge.calibration.pairwise import Bootstrap
from juge.data.records import Case, HumanLabel, Judgment
from juge.errors import InputError

BOOT = Bootstrap(n_resamples=100, seed=1)


def grade(item: str, value, outcome: str = "ok") -> Judgment:
    return Judgment(
        item_id=item,
        judge="j",
        model="m",
        template="t",
        outcome=outcome,
        verdict=value if outcome == "ok" else None,
        text=f"score: {value}",
    )


@pytest.fixture(scope="module")
def scored():
    """40 items, two raters each on a 1-4 scale, a judge that is close but not equal; one unparsed call."""
    rng = np.random.default_rng(7)
    true = rng.integers(1, 5, 40)
    r1 = np.clip(true + rng.integers(-1, 2, 40), 1, 4)
    r2 = np.clip(true + rng.integers(-1, 2, 40), 1, 4)
    judge = np.clip(true + rng.integers(-1, 2, 40), 1, 4)
    cases = [Case(id=f"i{k}", output="answer", category="even" if k % 2 == 0 else "odd") for k in range(40)]
    labels = [
        HumanLabel(item_id=f"i{k}", rater_id=r, label=int(v[k])) for k in range(40) for r, v in (("r1", r1), ("r2", r2))
    ]
    judgments = [grade(f"i{k}", int(judge[k])) for k in range(39)] + [grade("i39", None, outcome="unparsed")]
    return {"cases": cases, "labels": labels, "judgments": judgments, "r1": r1, "r2": r2, "judge": judge}


def test_single_score_figures_match_reference_implementations(scored) -> None:
    table = build_grade_table("score", scored["cases"], scored["labels"], scored["judgments"])
    study = grade_study(table, split=None, threshold=3, boot=BOOT)
    j = study["judges"]["j/t"]
    judge, r1, r2 = scored["judge"][:39], scored["r1"][:39], scored["r2"][:39]
    # Truth "each": every rater against the judge, pooled (judge first, rater second).
    x = np.concatenate([judge, judge])
    y = np.concatenate([r1, r2])
    assert j["pearson"]["value"] == pytest.approx(pearsonr(x, y)[0])
    assert j["spearman"]["value"] == pytest.approx(spearmanr(x, y)[0])
    assert j["agreement"]["value"] == pytest.approx(np.mean(x == y))
    assert j["kappa"]["value"] == pytest.approx(cohen_kappa_score(x, y, labels=[1, 2, 3, 4]))
    assert j["weighted_kappa"]["value"] == pytest.approx(
        cohen_kappa_score(x, y, labels=[1, 2, 3, 4], weights="quadratic")
    )
    assert j["pearson"]["n"] == 78
    # Alpha: the two raters plus the judge as a third rater (missing judge score on i39).
    data = np.vstack([scored["r1"], scored["r2"], np.append(judge, np.nan)]).astype(float)
    assert j["krippendorff_alpha"]["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    )
    assert study["ceiling"]["krippendorff_alpha"]["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=data[:2], level_of_measurement="ordinal")
    )
    # Binary verdict at the threshold: score >= 3 is acceptable.
    at = j["at_threshold"]
    assert at["agreement"]["value"] == pytest.approx(np.mean((x >= 3) == (y >= 3)))
    assert at["kappa"]["value"] == pytest.approx(cohen_kappa_score(x >= 3, y >= 3))
    assert j["verdict_counts"] == {"scored": 39, "missing": 1}
    assert j["outcomes"] == {"ok": 39, "refused": 0, "unparsed": 1, "error": 0}
    ceiling = study["ceiling"]
    assert ceiling["agreement"]["value"] == pytest.approx(np.mean(scored["r1"] == scored["r2"]))
    assert ceiling["weighted_kappa"]["value"] == pytest.approx(
        cohen_kappa_score(scored["r1"], scored["r2"], labels=[1, 2, 3, 4], weights="quadratic")
    )
    assert set(j["per_category"]) == {"even", "odd"}
    for name in ("pearson", "kappa", "krippendorff_alpha"):
        assert j[name]["low"] <= j[name]["value"] <= j[name]["high"]


def test_score_confusion_and_reliability(scored) -> None:
    table = build_grade_table("score", scored["cases"], scored["labels"], scored["judgments"])
    j = grade_study(table, split=None, boot=BOOT)["judges"]["j/t"]
    judge, r1, r2 = scored["judge"][:39], scored["r1"][:39], scored["r2"][:39]
    x, y = np.concatenate([judge, judge]), np.concatenate([r1, r2])
    assert j["confusion"]["labels"] == [1, 2, 3, 4]
    assert (j["confusion"]["rows"], j["confusion"]["columns"]) == ("people", "judge")
    assert j["confusion"]["matrix"] == confusion_matrix(y, x, labels=[1, 2, 3, 4]).tolist()
    points = j["reliability"]
    assert [p["judge_score"] for p in points] == sorted(set(judge.tolist()))
    for p in points:
        est = p["mean_human_score"]
        assert est["value"] == pytest.approx(y[x == p["judge_score"]].mean())
        assert est["n"] == int((x == p["judge_score"]).sum())
        assert est["low"] <= est["value"] <= est["high"]


def test_truth_mean_and_agree() -> None:
    cases = [Case(id=i, output="x") for i in ("a", "b", "c")]
    labels = [
        HumanLabel(item_id=i, rater_id=r, label=v)
        for i, r, v in (("a", "r1", 2), ("a", "r2", 3), ("b", "r1", 4), ("b", "r2", 4), ("c", "r1", 1), ("c", "r2", 1))
    ]
    judgments = [grade("a", 3), grade("b", 4), grade("c", 2)]
    table = build_grade_table("score", cases, labels, judgments)
    mean = grade_study(table, split=None, truth="mean", boot=BOOT)
    # Means 2.5 (rounded half up to 3), 4, 1: the judge matches a and b.
    assert mean["judges"]["j/t"]["agreement"]["value"] == pytest.approx(2 / 3)
    assert mean["judges"]["j/t"]["pearson"]["value"] == pytest.approx(pearsonr([3, 4, 2], [2.5, 4, 1])[0])
    agree = grade_study(table, split=None, truth="agree", boot=BOOT)
    assert agree["truth"] == {"mode": "agree", "n_items": 2}
    assert agree["judges"]["j/t"]["agreement"]["value"] == pytest.approx(1 / 2)  # b right, c wrong
    assert any("2 of 3 items remain" in note for note in agree["notes"])


def passfail_table(human: dict[str, list[str]], judge: dict[str, str]):
    cases = [Case(id=i, output="x") for i in human]
    labels = [HumanLabel(item_id=i, rater_id=f"r{k}", label=v) for i, vs in human.items() for k, v in enumerate(vs)]
    return build_grade_table("passfail", cases, labels, [grade(i, v) for i, v in judge.items()])


def test_passfail_failures_caught_and_false_flags() -> None:
    table = passfail_table(
        {"a": ["FAIL", "FAIL"], "b": ["FAIL", "PASS"], "c": ["PASS", "PASS"], "d": ["PASS", "PASS"]},
        {"a": "FAIL", "b": "PASS", "c": "FAIL", "d": "pass"},
    )
    j = grade_study(table, split=None, boot=BOOT)["judges"]["j/t"]
    # Human FAIL votes: a, a, b -> the judge said FAIL on a only: caught 2 of 3.
    assert (j["failures_caught"]["k"], j["failures_caught"]["n"]) == (2, 3)
    assert j["failures_caught"]["rate"]["value"] == pytest.approx(2 / 3)
    # Human PASS votes: b, c, c, d, d -> judge FAIL on c: 2 false flags of 5.
    assert (j["false_flags"]["k"], j["false_flags"]["n"]) == (2, 5)
    assert j["confusion"]["matrix"] == [[3, 2], [1, 2]]  # rows people PASS/FAIL, columns judge PASS/FAIL
    x = ["FAIL", "FAIL", "PASS", "PASS", "FAIL", "FAIL", "PASS", "PASS"]
    y = ["FAIL", "FAIL", "FAIL", "PASS", "PASS", "PASS", "PASS", "PASS"]
    assert j["kappa"]["value"] == pytest.approx(cohen_kappa_score(x, y))
    assert j["agreement"]["value"] == pytest.approx(5 / 8)
    assert j["verdict_counts"] == {"PASS": 2, "FAIL": 2, "missing": 0}


def test_passfail_without_human_fail_says_so() -> None:
    table = passfail_table({"a": ["PASS", "PASS"], "b": ["PASS"]}, {"a": "PASS", "b": "FAIL"})
    study = grade_study(table, split=None, boot=BOOT)
    assert study["judges"]["j/t"]["failures_caught"] is None
    assert any("No human FAIL" in note for note in study["notes"])
    assert study["judges"]["j/t"]["false_flags"]["k"] == 1


def test_mean_truth_is_refused_for_passfail() -> None:
    table = passfail_table({"a": ["PASS", "FAIL"]}, {"a": "PASS"})
    with pytest.raises(InputError, match="--truth mean"):
        grade_study(table, split=None, truth="mean", boot=BOOT)


def test_unreadable_score_is_missing_not_a_grade() -> None:
    cases = [Case(id="a", output="x")]
    labels = [HumanLabel(item_id="a", rater_id="r", label=3)]
    table = build_grade_table("score", cases, labels, [grade("a", "great")])
    assert grade_study(table, split=None, boot=BOOT)["judges"]["j/t"]["verdict_counts"] == {"scored": 0, "missing": 1}


def test_passfail_judge_alpha_is_nominal_with_the_judge_as_one_more_rater() -> None:
    # QA2: PASS/FAIL studies printed 'krippendorff alpha: n/a' for every judge. Two raters, a judge with
    # one unparsed call (item e: only the people's values), cross-checked against the krippendorff package.
    human = {
        "a": ["FAIL", "FAIL"],
        "b": ["FAIL", "PASS"],
        "c": ["PASS", "PASS"],
        "d": ["PASS", "PASS"],
        "e": ["FAIL", "PASS"],
        "f": ["PASS", "FAIL"],
    }
    judge = {"a": "FAIL", "b": "PASS", "c": "FAIL", "d": "PASS", "f": "FAIL"}
    table = passfail_table(human, judge)
    study = grade_study(table, split=None, boot=BOOT)
    code = {"PASS": 0.0, "FAIL": 1.0}
    data = np.array(
        [
            [code[human[i][0]] for i in human],
            [code[human[i][1]] for i in human],
            [code.get(judge.get(i), np.nan) for i in human],
        ]
    )
    alpha = study["judges"]["j/t"]["krippendorff_alpha"]
    assert alpha["value"] == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    assert alpha["n"] == 12 + 5
    assert study["ceiling"]["krippendorff_alpha"]["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=data[:2], level_of_measurement="nominal")
    )
