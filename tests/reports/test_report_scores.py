"""A single-score study straight from `grade_study` renders its confusion matrix and reliability curve."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix

from juge.calibration.grades import build_grade_table, grade_study
from juge.calibration.pairwise import Bootstrap
from juge.data.records import Case, HumanLabel, Judgment
from juge.reports import render_report
from juge.reports.model import build_report_data
from report_helpers import assert_same_estimate, md_tables, parse_html


@pytest.fixture(scope="module")
def score_study():
    """30 items, two raters on 1-4, a noisy judge; returns the study and the pooled (judge, human) arrays."""
    rng = np.random.default_rng(3)
    human = rng.integers(1, 5, (30, 2))
    judge = np.clip(human[:, 0] + rng.integers(-1, 2, 30), 1, 4)
    cases = [Case(id=f"i{k}", output="answer", category="c") for k in range(30)]
    labels = [HumanLabel(item_id=f"i{k}", rater_id=f"r{r}", label=int(human[k, r])) for k in range(30) for r in (0, 1)]
    judgments = [
        Judgment(item_id=f"i{k}", judge="j", model="m", template="t", outcome="ok", verdict=int(judge[k]), text="score")
        for k in range(30)
    ]
    study = grade_study(
        build_grade_table("score", cases, labels, judgments), split=None, boot=Bootstrap(n_resamples=200, seed=2)
    )
    return study, np.concatenate([judge, judge]), np.concatenate([human[:, 0], human[:, 1]])


def test_score_report_shows_the_study_confusion_and_reliability(score_study):
    study, judge, human = score_study
    entry = study["judges"]["j/t"]
    data = build_report_data(study)
    html = render_report(data, "html")
    assert 'aria-label="Confusion matrix of j/t against people"' in html
    assert 'aria-label="Reliability curve of j/t"' in html
    assert "not available (the calibration file has no confusion matrix" not in html
    # The Markdown confusion table is the study's matrix, which is scikit-learn's (rows people, columns judge).
    expected = confusion_matrix(human, judge, labels=[1, 2, 3, 4]).tolist()
    assert entry["confusion"]["matrix"] == expected
    md = render_report(data, "md")
    conf_md = next(t for t in md_tables(md) if len(t) == 4 and [r[0] for r in t] == ["1", "2", "3", "4"])
    assert [[int(c) for c in row[1:]] for row in conf_md] == expected
    # The reliability table shows each point of the study with its interval and n.
    table = parse_html(html).tables["table-reliability-1"][1:]
    assert [float(r[0]) for r in table] == [p["judge_score"] for p in entry["reliability"]]
    for row, point in zip(table, entry["reliability"]):
        assert_same_estimate(row[1], point["mean_human_score"])
        assert point["mean_human_score"]["value"] == pytest.approx(human[judge == point["judge_score"]].mean())
