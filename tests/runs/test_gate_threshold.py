"""A score eval's `[gate] min_score` is what passes a case in the run summary: compare and estimate use it
too when no threshold is given, so the three agree on the same run."""

from __future__ import annotations

import csv

import pytest

import juge
from juge.data.records import HumanLabel
from juge.errors import InputError
from juge.runs.corrected import human_pass_shares


@pytest.fixture
def score_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    juge.init_project("sc", kind="score")  # its eval sets [gate] min_score = 3
    run = juge.run("sc/eval.toml", db="juge.db")
    return run


def test_compare_and_estimate_use_the_runs_min_score(score_run, tmp_path):
    summary = score_run.summary
    assert summary.min_score == 3 and summary.pass_rate is not None
    same = juge.compare(score_run, score_run, db="juge.db", resamples=50)
    assert same.pass_rate_a.value == pytest.approx(summary.pass_rate)
    assert same.pass_rate_a.n == summary.n_cases

    # Score labels on the judge's own scale: a person passes a case at the same min_score.
    ids = [row["item_id"] for row in csv.DictReader(open(tmp_path / "sc" / "labels-template.csv"))][:12]
    labels = [{"item_id": i, "rater_id": "me", "label": str(1 + k % 4)} for k, i in enumerate(ids)]
    est = juge.estimate(score_run, labels, db="juge.db", resamples=50)
    assert est.judge_only.value == pytest.approx(summary.pass_rate)
    passed = sum(int(r["label"]) >= 3 for r in labels)
    assert est.human_only.value == pytest.approx(passed / len(labels))
    # An explicit threshold still wins.
    strict = juge.estimate(score_run, labels, db="juge.db", threshold=5, label_threshold=5, resamples=50)
    assert strict.judge_only.value == 0 and strict.human_only.value == 0


def test_a_score_label_without_a_threshold_names_the_label_option():
    with pytest.raises(InputError, match="--label-threshold"):
        human_pass_shares([HumanLabel(item_id="a", rater_id="r", label=3)])


def test_scores_without_any_threshold_say_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    juge.init_project("sc", kind="score")
    eval_file = tmp_path / "sc" / "eval.toml"
    eval_file.write_text(eval_file.read_text().replace("min_score = 3", ""))
    run = juge.run(str(eval_file), db="juge.db")
    with pytest.raises(InputError, match="--threshold") as caught:
        juge.compare(run, run, db="juge.db", resamples=50)
    assert "quality" in str(caught.value)
