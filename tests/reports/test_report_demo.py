"""End to end: `juge demo` writes report.html, and its numbers are those of the calibration.json beside it."""

from __future__ import annotations

import contextlib
import io
import json
import sys

import pytest

from juge.cli import main
from juge.reports.render import NOT_AVAILABLE
from report_helpers import assert_same_estimate, parse_html


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "juge-demo"
    argv, printed = sys.argv, io.StringIO()
    sys.argv = ["juge", "demo", "--out", str(out), "--resamples", "200"]
    try:
        with pytest.raises(SystemExit) as exit_info, contextlib.redirect_stdout(printed):
            main()
    finally:
        sys.argv = argv
    assert (exit_info.value.code or 0) == 0
    calibration = json.loads((out / "calibration.json").read_text(encoding="utf-8"))
    html = (out / "report.html").read_text(encoding="utf-8")
    return out, calibration, html, printed.getvalue()


def test_demo_writes_the_report_and_prints_its_path(demo):
    out, _, html, printed = demo
    assert f"wrote {out / 'report.html'}" in printed
    # the sample it read sits beside its results, so the next-step hint's command runs as printed
    assert sorted(p.name for p in out.iterdir()) == [
        "calibration.json",
        "items.jsonl",
        "judgments.jsonl",
        "report.html",
    ]
    assert html.startswith("<!DOCTYPE html>")


def test_demo_report_numbers_equal_its_calibration_json(demo):
    _, calibration, html, _ = demo
    tables = parse_html(html).tables
    people = {r[0].removesuffix(" baseline"): r for r in tables["table-people"][1:]}
    assert_same_estimate(people["person vs person (ceiling)"][1], calibration["ceiling"]["agreement"])
    for key, judge in calibration["judges"].items():
        assert_same_estimate(people[key][1], judge["vs_people"]["agreement"])
        assert_same_estimate(people[key][2], judge["vs_people"]["kappa"])
    header = [h.removesuffix(" baseline") for h in tables["table-categories"][0][2:]]
    for row in tables["table-categories"][1:]:
        cat = row[0]
        assert_same_estimate(row[1], calibration["per_category"][cat]["ceiling"]["agreement"])
        for key, cell in zip(header, row[2:]):
            expected = calibration["judges"][key]["per_category"].get(cat)
            assert_same_estimate(cell, expected["vs_people"]["agreement"] if expected else None)
    outcomes = {r[0]: r[1:] for r in tables["table-outcomes"][1:]}
    for i, judge in enumerate(calibration["judges"].values()):
        for name in ("ok", "refused", "unparsed", "error"):
            expected = judge["outcomes"][name] if judge["outcomes"] else None
            assert outcomes[f"calls {name}"][i] == (NOT_AVAILABLE if expected is None else str(expected))
    for row, expected in zip(tables["table-differences"][1:], calibration["differences"]):
        assert row[:2] == [expected["a"], expected["b"]]
        assert_same_estimate(row[5], expected["difference"])


def test_demo_report_shows_versions_attribution_and_real_failure_cases(demo):
    _, calibration, html, _ = demo
    for info in calibration["versions"]["judges"].values():
        for model in info["models"]:
            assert model in html
    for digest in calibration["versions"]["sources_sha256"].values():
        assert digest in html
    assert "CC BY 4.0" in html.split("</header>")[0]
    cards = html.count('<article class="case"')
    assert cards >= 3
    # The disagreement cards carry the question and both answers from the embedded items.
    first = html.split('<article class="case"')[1]
    assert "Question and answers: not in the calibration file" not in first
    assert first.count('<pre class="text prose">') == 3
