"""The one-line answer: hand-worked categories against the margin rule and the too-few-labels floor."""

from __future__ import annotations

import json

from cli_helpers import run_cli
from juge.policy.decision import MIN_PAIRS
from juge.reports.headline import headlines


def _e(value: float, n: int) -> dict:
    return {"value": value, "low": value - 0.1, "high": value + 0.1, "n": n}


def _data(rows: list[tuple[str, float, int, float, int]], overall=None) -> dict:
    """rows: (category, judge vs person, votes, person vs person, pairs)."""
    return {
        "judges": [
            {"key": "j", "baseline": False, "vs_people": {"agreement": overall[0] if overall else None}},
            {"key": "longer", "baseline": True, "vs_people": {"agreement": None}},
        ],
        "ceiling": {"agreement": overall[1] if overall else None},
        "categories": [
            {"name": c, "ceiling": {"agreement": _e(pp, npp)}, "judges": {"j": {"agreement": _e(jp, nj)}}}
            for c, jp, nj, pp, npp in rows
        ],
    }


def test_margin_rule_per_category():
    data = _data(
        [
            ("billing", 0.700, 40, 0.740, 40),  # gap -0.040: within
            ("shipping", 0.690, 40, 0.740, 40),  # gap -0.050 exactly: within (compared as printed)
            ("returns", 0.600, 40, 0.740, 40),  # gap -0.140: a person
            ("orders", 0.900, MIN_PAIRS - 1, 0.740, 40),  # too few votes
        ]
    )
    (h,) = headlines(data)  # the baseline gets no line
    assert h.stands_in == ["billing", "shipping"] and h.not_in == ["returns"] and h.not_measured == ["orders"]
    assert h.sentence == (
        "Judge j can stand in for a person on billing, shipping (within the 0.05 margin of person vs person); "
        "not on returns; not measured on orders: too few labels."
    )
    gaps = {p.name: p.gap for p in h.places}
    assert gaps == {"billing": -0.04, "shipping": -0.05, "returns": -0.14, "orders": 0.16}


def test_no_category_measured_falls_back_to_the_pooled_figures():
    thin = [("a", 0.8, 10, 0.8, 10), ("b", 0.5, 12, 0.9, 8)]
    (h,) = headlines(_data(thin, overall=(_e(0.75, 44), _e(0.78, 30))))
    assert h.pooled and h.stands_in == ["all categories"]
    assert h.sentence.startswith("Judge j can stand in for a person over all categories pooled")
    assert "per category: not measured, too few labels" in h.sentence
    (h,) = headlines(_data(thin, overall=(_e(0.60, 44), _e(0.78, 30))))
    assert h.not_in == ["all categories"] and "cannot stand in" in h.sentence
    (h,) = headlines(_data(thin, overall=(_e(0.75, 44), _e(0.78, 18))))
    assert h.sentence.startswith("Judge j: not measured: too few labels")
    assert h.not_measured == ["a", "b"]


def test_items_without_a_category_are_all_items_not_a_category_named_none():
    # Uncategorised items sit under the placeholder category "(none)": the line speaks of all items.
    (h,) = headlines(_data([("(none)", 0.425, 120, 0.383, 60)], overall=(_e(0.425, 120), _e(0.383, 60))))
    assert "(none)" not in h.sentence and "(none)" not in h.stands_in
    assert h.pooled and h.stands_in == ["all categories"]
    assert h.sentence.startswith("Judge j can stand in for a person on all items (they carry no category)")
    assert "per category" not in h.sentence
    (h,) = headlines(_data([("(none)", 0.30, 120, 0.383, 60)], overall=(_e(0.30, 120), _e(0.383, 60))))
    assert h.not_in == ["all categories"] and "cannot stand in for a person on all items" in h.sentence


def test_calibrate_opens_with_the_answer(tmp_path, monkeypatch, capsys, sample_dir):
    out = tmp_path / "c.json"
    code, stdout, _ = run_cli(
        monkeypatch, capsys, "calibrate", "--items", str(sample_dir / "items.jsonl"),
        "--judgments", str(sample_dir / "judgments.jsonl"), "--resamples", "200", "--json", str(out),
    )  # fmt: skip
    assert code == 0
    result = json.loads(out.read_text())
    sentences = [h["sentence"] for h in result["headline"]]
    assert sentences and all(s.startswith("Judge ") for s in sentences)
    first_lines = [line for line in stdout.splitlines() if line.strip()][: len(sentences)]
    assert [line.strip() for line in first_lines] == sentences


def test_the_report_opens_with_the_lines_the_study_carries(tmp_path, sample_dir):
    # The headline is decided once, by juge.calibrate: a report shows the lines its calibration carries,
    # and decides them itself only for an older file written without them.
    import juge
    from juge.reports.model import build_report_data, calibration_headlines

    cal = juge.calibrate(items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl", resamples=200)
    carried = cal.to_dict()
    assert carried["headline"] and calibration_headlines(carried) == carried["headline"]
    old = {k: v for k, v in carried.items() if k != "headline"}
    assert build_report_data(old)["headlines"] == carried["headline"] == calibration_headlines(old)
    marked = {**carried, "headline": [{**carried["headline"][0], "sentence": "Judge X: <carried>"}]}
    assert [h["sentence"] for h in build_report_data(marked)["headlines"]] == ["Judge X: <carried>"]
    juge.report(marked, tmp_path / "r.html")
    assert "Judge X: &lt;carried&gt;" in (tmp_path / "r.html").read_text()
    assert calibration_headlines({**carried, "kind": "criteria"}) == []
