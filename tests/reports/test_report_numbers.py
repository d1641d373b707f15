"""The numbers in the HTML, Markdown and JSON reports are the numbers in the calibration JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from juge.reports import build_report_data, render_report
from juge.reports.model import confusion, reliability_from_confusion
from juge.reports.render import NOT_AVAILABLE
from juge.results import Confusion
from report_helpers import (
    CATEGORIES,
    assert_same_estimate,
    md_tables,
    pairwise_calibration,
    parse_html,
    policy_routing,
)

FIXED_TIME = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def calibration() -> dict:
    return pairwise_calibration()


@pytest.fixture(scope="module")
def html_tables(calibration: dict) -> dict[str, list[list[str]]]:
    policy = policy_routing({"writing": "person", "math": "judge"})
    data = build_report_data(calibration, policy=policy, generated_at=FIXED_TIME)
    return parse_html(render_report(data, "html")).tables


def _rows_by_name(rows: list[list[str]]) -> dict[str, list[str]]:
    return {r[0].removesuffix(" baseline"): r for r in rows if r and r[0]}


def test_html_people_table_equals_json(calibration, html_tables):
    rows = _rows_by_name(html_tables["table-people"][1:])
    assert_same_estimate(rows["person vs person (ceiling)"][1], calibration["ceiling"]["agreement"])
    assert_same_estimate(rows["person vs person (ceiling)"][2], calibration["ceiling"]["kappa"])
    for key, judge in calibration["judges"].items():
        assert_same_estimate(rows[key][1], judge["vs_people"]["agreement"])
        assert_same_estimate(rows[key][2], judge["vs_people"]["kappa"])
    assert len(rows) == len(calibration["judges"]) + 1


def test_html_majority_order_length_tables_equal_json(calibration, html_tables):
    majority = _rows_by_name(html_tables["table-majority"][1:])
    order = _rows_by_name(html_tables["table-order"][1:])
    length = _rows_by_name(html_tables["table-length"][1:])
    assert_same_estimate(length["people (majority)"][1], calibration["majority_picks_longer"])
    for key, judge in calibration["judges"].items():
        assert_same_estimate(majority[key][1], judge["vs_majority"]["agreement"])
        assert_same_estimate(majority[key][2], judge["vs_majority"]["kappa"])
        assert_same_estimate(order[key][1], judge["order_flip_rate"])
        patterns = judge["inconsistent_patterns"]
        if patterns:
            assert order[key][2:6] == [
                str(patterns[k]) for k in ("n", "shown_first_won_both", "shown_second_won_both", "tie_in_one_order")
            ]
        else:
            assert order[key][2] == NOT_AVAILABLE
        if key != "longer answer":
            assert_same_estimate(length[key][1], judge["picks_longer"])
            assert_same_estimate(length[key][2], judge["picks_longer_against_majority"])


def test_html_counts_have_their_own_rows(calibration, html_tables):
    rows = html_tables["table-outcomes"]
    header = [h.removesuffix(" baseline") for h in rows[0][1:]]
    assert header == list(calibration["judges"])
    body = {r[0]: r[1:] for r in rows[1:]}
    for name in ("A", "B", "tie", "inconsistent", "missing"):
        assert body[f"verdict {name}"] == [str(j["verdict_counts"][name]) for j in calibration["judges"].values()]
    for name in ("ok", "refused", "unparsed", "error"):
        expected = [
            str(j["outcomes"][name]) if j["outcomes"] else NOT_AVAILABLE for j in calibration["judges"].values()
        ]
        assert body[f"calls {name}"] == expected


def test_html_category_table_equals_json_and_marks_policy(calibration, html_tables):
    rows = _rows_by_name(html_tables["table-categories"][1:])
    assert list(rows) == list(CATEGORIES)
    assert rows["writing"][1] == "to a person"
    assert rows["math"][1] == "judge"
    assert rows["coding"][1] == "not in policy"
    for cat in CATEGORIES:
        assert_same_estimate(rows[cat][2], calibration["per_category"][cat]["ceiling"]["agreement"])
        for i, judge in enumerate(calibration["judges"].values()):
            assert_same_estimate(rows[cat][3 + i], judge["per_category"][cat]["vs_people"]["agreement"])


def test_html_reference_and_header_versions(calibration, html_tables):
    ref = html_tables["table-reference"][1]
    expected = calibration["reference"][0]
    assert ref[:3] == [expected["with_reference"], expected["without_reference"], str(expected["n_items"])]
    assert_same_estimate(ref[3], expected["vs_people_with"])
    assert_same_estimate(ref[4], expected["vs_people_without"])
    assert_same_estimate(ref[5], expected["difference"])
    (versions,) = [t for t in html_tables.values() if t and t[0][:1] == ["Judge / template"]]
    header = {r[0]: r[1:] for r in versions[1:]}
    assert header["chat-small/pair-v2"] == ["gpt-6-luna-2026-09-22", "a1b2c3d4"]
    model, template_hash = header["chat-strong/pair-v2"]
    assert model == "gpt-6.1-sol-2026-09-29" and template_hash.startswith("not recorded")
    assert "name their template, pair-v2, but carry no hash" in template_hash  # why it is not recorded


def test_markdown_tables_equal_json(calibration):
    policy = policy_routing({"math": "person"})
    text = render_report(build_report_data(calibration, policy=policy, generated_at=FIXED_TIME), "md")
    tables = md_tables(text)
    people = next(t for t in tables if t and t[0][0] == "person vs person (ceiling)")
    rows = _rows_by_name([[r[0].removesuffix(" (baseline)"), *r[1:]] for r in people])
    assert_same_estimate(rows["person vs person (ceiling)"][1], calibration["ceiling"]["agreement"])
    for key, judge in calibration["judges"].items():
        assert_same_estimate(rows[key][1], judge["vs_people"]["agreement"])
        assert_same_estimate(rows[key][2], judge["vs_people"]["kappa"])
    cats = next(t for t in tables if t and t[0][0] in CATEGORIES)
    by_cat = {r[0]: r for r in cats}
    assert by_cat["math"][1] == "**to a person**" and by_cat["writing"][1] == "not in policy"
    for cat in CATEGORIES:
        assert_same_estimate(by_cat[cat][2], calibration["per_category"][cat]["ceiling"]["agreement"])
        for i, judge in enumerate(calibration["judges"].values()):
            assert_same_estimate(by_cat[cat][3 + i], judge["per_category"][cat]["vs_people"]["agreement"])
    counts = next(t for t in tables if t and t[0][0] == "verdict A")
    unparsed = next(r for r in counts if r[0] == "calls unparsed")
    assert unparsed[1:] == ["3", "0", NOT_AVAILABLE, NOT_AVAILABLE]


def test_json_format_is_the_normalised_data(calibration):
    data = build_report_data(calibration, generated_at=FIXED_TIME)
    back = json.loads(render_report(data, "json"))
    assert back == json.loads(json.dumps(data))
    small = next(j for j in back["judges"] if j["key"] == "chat-small/pair-v2")
    assert small["vs_people"]["agreement"] == calibration["judges"]["chat-small/pair-v2"]["vs_people"]["agreement"]
    assert back["ceiling"]["n_pairs"] == 376
    assert [j["key"] for j in back["judges"] if j["baseline"]] == ["gpt4_2023", "longer answer"]


def test_absent_keys_render_as_not_available_and_nothing_is_invented():
    minimal = {  # only the keys every study writes
        "kind": "pairwise",
        "split": "dev",
        "judges": {
            "j/t": {"n_items": 3, "vs_people": {"agreement": {"value": float("nan"), "low": 0.1, "high": 0.2, "n": 3}}},
            "bare/t": {"n_items": 0, "order_flip_rate": {"value": None, "low": None, "high": None, "n": 0}},
        },
    }
    data = build_report_data(minimal, generated_at=FIXED_TIME)
    tables = parse_html(render_report(data, "html")).tables
    people = _rows_by_name(tables["table-people"][1:])
    assert people["person vs person (ceiling)"][1:] == [NOT_AVAILABLE, NOT_AVAILABLE]
    assert people["j/t"][1:] == [NOT_AVAILABLE, NOT_AVAILABLE]
    assert _rows_by_name(tables["table-order"][1:])["bare/t"][1] == NOT_AVAILABLE
    outcomes = {r[0]: r[1:] for r in tables["table-outcomes"][1:]}
    assert outcomes["calls unparsed"] == [NOT_AVAILABLE, NOT_AVAILABLE]
    assert data["disagreements"] == [] and data["categories"] == []
    md = render_report(data, "md")
    people_md = next(t for t in md_tables(md) if t and t[0][0] == "person vs person (ceiling)")
    assert all(cell == NOT_AVAILABLE for row in people_md for cell in row[1:])


def test_reliability_is_read_exactly_off_the_confusion_matrix():
    # rows: human score 1..3, columns: judge score 1..3
    conf = confusion(Confusion(labels=[1, 2, 3], matrix=[[4, 1, 0], [2, 2, 1], [0, 1, 5]]))
    points = reliability_from_confusion(conf)
    # judge said 1: humans 1,1,1,1,2,2 -> mean 8/6; said 2: 1,2,2,3 -> 8/4; said 3: 2,3,3,3,3,3 -> 17/6
    assert [p["n"] for p in points] == [6, 4, 6]
    assert [p["mean_human_score"] for p in points] == pytest.approx([8 / 6, 2.0, 17 / 6])
    assert reliability_from_confusion(confusion(Confusion(labels=["PASS", "FAIL"], matrix=[[1, 0], [0, 1]]))) is None
    assert confusion(Confusion(labels=[1, 2], matrix=[[1, 2]])) is None  # malformed: not square to its labels


def _graded(kind: str) -> dict:
    """A single-score or PASS/FAIL study in the shape `juge calibrate --kind score|passfail --json` writes."""

    def e(v, n):
        return {"value": v, "low": v - 0.05, "high": v + 0.04, "n": n}

    people = {"agreement": e(0.508, 240), "kappa": e(0.346, 240), "n_pairs": 240}
    judge = {
        "n_items": 120,
        "outcomes": {"ok": 117, "refused": 0, "unparsed": 3, "error": 0},
        "agreement": e(0.549, 293),
        "kappa": e(0.401, 293),
        "per_category": {
            "billing": {
                "n_items": 40,
                "agreement": e(0.56, 100),
                "kappa": e(0.39, 100),
                "ceiling": {"agreement": e(0.475, 80), "kappa": e(0.3, 80)},
            }
        },
    }
    if kind == "score":
        people |= {
            "weighted_kappa": e(0.748, 240),
            "pearson": e(0.749, 240),
            "spearman": e(0.748, 240),
            "krippendorff_alpha": e(0.75, 300),
            "at_threshold": {"threshold": 3.0, "agreement": e(0.821, 240), "kappa": e(0.64, 240)},
        }
        judge |= {
            "verdict_counts": {"scored": 117, "missing": 3},
            "weighted_kappa": e(0.762, 293),
            "pearson": e(0.761, 293),
            "spearman": e(0.759, 293),
            "krippendorff_alpha": e(0.75, 417),
            "at_threshold": {"threshold": 3.0, "agreement": e(0.809, 293), "kappa": e(0.62, 293)},
        }
    else:
        judge |= {
            "verdict_counts": {"PASS": 55, "FAIL": 62, "missing": 3},
            "failures_caught": {"k": 113, "n": 133, "rate": e(0.8496, 133)},
            "false_flags": {"k": 40, "n": 159, "rate": e(0.2516, 159)},
            "confusion": {
                "labels": ["PASS", "FAIL"],
                "rows": "people",
                "columns": "judge",
                "matrix": [[119, 40], [20, 113]],
            },
        }
    return {
        "kind": kind,
        "split": "dev",
        "n_items": 120,
        "truth": {"mode": "each", "n_items": 120},
        "scale": [1.0, 2.0, 3.0, 4.0] if kind == "score" else ["PASS", "FAIL"],
        "ceiling": people,
        "judges": {"small/grade-v1": judge},
    }


@pytest.mark.parametrize("kind", ["score", "passfail"])
def test_graded_studies_show_their_own_statistics(kind):
    calibration = _graded(kind)
    data = build_report_data(calibration, generated_at=FIXED_TIME)
    html = render_report(data, "html")
    tables = parse_html(html).tables
    people = tables["table-people"]
    stats = data["stats"]
    assert len(people[0]) == len(stats) + 1
    judge = calibration["judges"]["small/grade-v1"]
    for i, stat in enumerate(stats, start=1):
        if stat.startswith("threshold_"):
            expected_judge = judge["at_threshold"][stat.removeprefix("threshold_")]
            expected_people = calibration["ceiling"]["at_threshold"][stat.removeprefix("threshold_")]
        elif stat in ("failures_caught", "false_flags"):
            expected_judge, expected_people = judge[stat]["rate"], None
        else:
            expected_judge, expected_people = judge[stat], calibration["ceiling"][stat]
        assert_same_estimate(people[2][i], expected_judge)
        if expected_people is None:
            assert people[1][i] == "does not apply"
        else:
            assert_same_estimate(people[1][i], expected_people)
    verdicts = {r[0]: r[1] for r in tables["table-outcomes"][1:]}
    for name, n in judge["verdict_counts"].items():
        assert verdicts[f"verdict {name}"] == str(n)
    assert "table-majority" not in tables and "table-order" not in tables  # pairwise-only sections
    if kind == "passfail":
        assert "Failures caught: 113 of 133 human FAIL labels" in " ".join(
            html.replace("<b>", "").replace("</b>", "").split()
        )
        assert 'aria-label="Confusion matrix of small/grade-v1 against people"' in html
        md = render_report(data, "md")
        confusion_md = next(t for t in md_tables(md) if t and t[0][0] == "PASS" and len(t) == 2)
        assert confusion_md == [["PASS", "119", "40"], ["FAIL", "20", "113"]]
    else:
        assert "Confusion matrix and reliability curve: not available" in html


def test_a_score_confusion_matrix_gives_a_reliability_curve():
    calibration = _graded("score")
    calibration["judges"]["small/grade-v1"]["confusion"] = {
        "labels": [1, 2, 3],
        "rows": "people",
        "columns": "judge",
        "matrix": [[4, 1, 0], [2, 2, 1], [0, 1, 5]],
    }
    data = build_report_data(calibration, generated_at=FIXED_TIME)
    assert data["judges"][0]["reliability"][0] == {
        "judge_score": 1.0,
        "mean_human_score": 8 / 6,
        "n": 6,
        "low": None,
        "high": None,
    }  # no interval read off counts
    html = render_report(data, "html")
    assert 'aria-label="Reliability curve of small/grade-v1"' in html
    assert 'aria-label="Confusion matrix of small/grade-v1 against people"' in html
