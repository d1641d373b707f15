"""The drift figures on scripted verdicts (no server): a hand-worked case, and a simulation showing the paired
interval covers the true difference in agreement with people at about its stated level."""

from __future__ import annotations

import numpy as np
import pytest

from juge.drift.figures import drift_figures


def test_a_hand_worked_anchor_set():
    votes = {"a": ["PASS", "PASS"], "b": ["FAIL", "FAIL"], "c": ["PASS", "FAIL"], "d": ["FAIL"]}
    old = {"a": "PASS", "b": "PASS", "c": "PASS", "d": None}  # d: no verdict, agrees with nobody
    new = {"a": "PASS", "b": "FAIL", "c": "FAIL", "d": "FAIL"}
    f = drift_figures(old, new, votes, n_resamples=200, min_items=2)
    # old agrees on 2 + 0 + 1 + 0 = 3 of 7 votes; new on 2 + 2 + 1 + 1 = 6 of 7.
    assert (f.agreement_old.value, f.agreement_new.value) == pytest.approx((3 / 7, 6 / 7))
    assert f.difference.value == pytest.approx(3 / 7) and f.difference.n_items == 4
    assert f.changed == ["b", "c", "d"] and f.changed_share.value == pytest.approx(0.75)
    assert drift_figures(old, new, votes, n_resamples=200).conclusion == "too few items"


def simulate(rng, n_items, *, acc_old, acc_new, rater_acc, raters=3):
    """Binary truths; each judge and each rater says the truth with its own accuracy, independently."""
    truth = rng.integers(0, 2, n_items)

    def says(accuracy, shape):
        right = rng.random(shape) < accuracy
        t = truth.reshape((n_items,) + (1,) * (len(shape) - 1))
        return np.where(right, t, 1 - t)

    ids = [f"i{k}" for k in range(n_items)]
    old, new, people = says(acc_old, (n_items,)), says(acc_new, (n_items,)), says(rater_acc, (n_items, raters))
    return (dict(zip(ids, old.tolist())), dict(zip(ids, new.tolist())),
            {i: row.tolist() for i, row in zip(ids, people)})  # fmt: skip


def test_the_paired_interval_covers_the_true_difference():
    """300 anchor sets of 120 items, 3 raters right 85 % of the time, the old judge right 85 %, the new 75 %:
    judge vs person agreement is acc * r + (1 - acc)(1 - r), so the true difference is (0.75 - 0.85)(2r - 1)."""
    rng = np.random.default_rng(7)
    r = 0.85
    true = (0.75 - 0.85) * (2 * r - 1)
    covered, moved, reps = 0, 0, 300
    for rep in range(reps):
        old, new, votes = simulate(rng, 120, acc_old=0.85, acc_new=0.75, rater_acc=r)
        f = drift_figures(old, new, votes, n_resamples=400, seed=rep)
        covered += f.difference.low <= true <= f.difference.high
        moved += f.conclusion == "moved"
    coverage = covered / reps
    # A percentile bootstrap on 120 items: about 95 %; 300 repetitions put the binomial spread at +-2.5 points.
    assert 0.90 <= coverage <= 0.99, coverage
    assert moved / reps > 0.3  # a 7-point drop is often, not always, visible on 120 items


def test_no_drift_is_within_noise_mostly():
    rng = np.random.default_rng(11)
    reps, calm = 150, 0
    for rep in range(reps):
        old, new, votes = simulate(rng, 80, acc_old=0.8, acc_new=0.8, rater_acc=0.85)
        calm += drift_figures(old, new, votes, n_resamples=300, seed=rep).conclusion == "within noise"
    assert calm / reps >= 0.88


def test_verdicts_in_the_labels_terms():
    from juge.data.records import Judgment
    from juge.drift.api import _verdicts

    def call(item, order, verdict, outcome="ok", repeat=0):
        return Judgment(item_id=item, judge="j", model="m", template="t", order=order, repeat=repeat,
                        verdict=verdict if outcome == "ok" else None, outcome=outcome)  # fmt: skip

    pairs = [
        call("same", "12", "A"), call("same", "21", "B"),  # A both times, in the fixed order
        call("flip", "12", "A"), call("flip", "21", "A"),  # the orders disagree: a tie
        call("half", "12", "B"), call("half", "21", None, outcome="unparsed"),  # no verdict
        call("again", "12", "A"), call("again", "21", "B"), call("again", "12", "B", repeat=1),  # first repeat
    ]  # fmt: skip
    assert _verdicts(pairs, "pairwise") == {"same": "A", "flip": "tie", "half": None, "again": "A"}
    scores = [call("s", None, 4), call("r", None, None, outcome="refused")]
    assert _verdicts(scores, "score") == {"s": 4.0, "r": None}
