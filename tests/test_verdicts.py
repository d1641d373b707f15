"""A case's pass/fail/missing: fail closed on anything that is not exactly a parser's verdict."""

import pytest

from juge.data.records import Judgment
from juge.errors import InputError
from juge.verdicts import CountedJudges, case_outcomes, counted_judges, judgment_passes


def j(verdict, outcome="ok", item="c", judge="j"):
    return Judgment(
        item_id=item,
        judge=judge,
        model="m",
        template="t",
        outcome=outcome,
        verdict=verdict if outcome == "ok" else None,
    )


@pytest.mark.parametrize(
    "verdict, threshold, expected",
    [
        ("PASS", None, True),
        ("FAIL", None, False),
        ("pass", None, None),  # not what the strict parser writes
        ("1", 4, None),  # a number written as text is not a score
        ("ok", None, None),
        (4, 4, True),
        (3, 4, False),
        (3.5, 3.5, True),
        ({"correct": 3, "tone": 1}, 2, False),  # every criterion must reach the threshold
        ({"correct": 3, "tone": 2}, 2, True),
        ({"score": 5, "tone": 1}, 3, False),  # a criterion named 'score' is just a criterion
        ({"a": "x"}, 2, None),
    ],
)
def test_judgment_passes(verdict, threshold, expected):
    assert judgment_passes(j(verdict), threshold) is expected


def test_scores_need_a_threshold():
    with pytest.raises(InputError, match="--threshold"):
        judgment_passes(j(4), None)


def test_case_outcomes_fail_beats_missing_beats_pass():
    js = [
        j("PASS", item="a"),
        j(None, "unparsed", item="b"),
        j("PASS", item="c"),
        j("FAIL", item="c", judge="k"),
        j(None, "refused", item="d"),
        j("FAIL", item="d", judge="k"),
    ]
    checks = {"e": {"short": (False, "too long")}}
    out = case_outcomes(["a", "b", "c", "d", "e", "f"], js, checks)
    assert {k: v.verdict for k, v in out.items()} == {
        "a": "pass",
        "b": "missing",
        "c": "fail",
        "d": "fail",
        "e": "fail",
        "f": "missing",
    }


@pytest.mark.parametrize(
    "setup, threshold, where",
    [
        ("pairwise", None, "pairwise"),
        ("pairwise", 3.0, "pairwise"),  # a threshold never makes a pair verdict a pass
        ("passfail", None, "counted"),
        ("passfail", 3.0, "counted"),
        ("score", None, "not_counted"),
        ("score", 3.0, "counted"),
        ("score", 0.0, "counted"),  # a threshold of 0 is a threshold
        ("criteria", None, "not_counted"),
        ("criteria", 2.0, "counted"),
        ("additive", None, "not_counted"),
        ("additive", 2.0, "counted"),
        ("rubric-v9", None, "counted"),  # a setup this juge does not know: its verdicts are read fail closed
        (None, None, "counted"),  # an old run's config without setups
    ],
)
def test_counted_judges_rule(setup, threshold, where):
    rule = counted_judges([("x", setup)], threshold=threshold)
    assert {k: getattr(rule, k) for k in ("counted", "not_counted", "pairwise")} == {
        k: ("x",) if k == where else () for k in ("counted", "not_counted", "pairwise")
    }


def test_counted_judges_keep_order_and_the_first_setup():
    judges = [("s2", "score"), ("pf", "passfail"), ("s1", "criteria"), ("p", "pairwise"), ("pf", "score")]
    assert counted_judges(judges, threshold=None) == CountedJudges(
        counted=("pf",), not_counted=("s2", "s1"), pairwise=("p",)
    )
    assert counted_judges(judges, threshold=1.0) == CountedJudges(counted=("s2", "pf", "s1"), pairwise=("p",))
