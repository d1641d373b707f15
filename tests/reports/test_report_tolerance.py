"""A calibration file with odd or missing values still renders: 'n/a', never a crash or a made-up number."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from juge.reports import build_report_data, render_report
from juge.reports.render import NOT_AVAILABLE, fmt_estimate, kind_of, md_text
from report_helpers import assert_same_estimate, pairwise_calibration, parse_html

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 500) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)


def _paths(obj, prefix=()):
    """Every key path of the fixture, so each one can be replaced by an odd value."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield prefix + (key,)
            yield from _paths(value, prefix + (key,))


PATHS = list(_paths(pairwise_calibration()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), json_values), min_size=1, max_size=4))
def test_any_value_at_any_key_renders_markdown_and_json(replacements):
    data = build_report_data(_replace(pairwise_calibration(), replacements))
    md = render_report(data, "md")
    # Each figure of the people table is the study's own estimate, or 'n/a' where it has none.
    rows = _people_table(md)
    ceiling = [
        "does not apply" if s in data["judge_only_stats"] else fmt_estimate(data["ceiling"].get(s), kind_of(s))
        for s in data["stats"]
    ]
    assert rows.pop("person vs person (ceiling)") == ceiling
    for j in data["judges"]:
        who = (md_text(j["key"]) + (" (baseline)" if j["baseline"] else "")).strip()  # cells are read stripped
        assert rows.pop(who) == [fmt_estimate(j["vs_people"][s], kind_of(s)) for s in data["stats"]]
    assert not rows  # no row for a judge the data does not have
    json.loads(render_report(data, "json"))


def _people_table(md: str) -> dict[str, list[str]]:
    """The first table under 'Judges against each person' in the Markdown report: who -> cells."""
    lines = md.split("## Judges against each person", 1)[1].splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("| Who |")) + 2  # header, separator
    rows: dict[str, list[str]] = {}
    for line in lines[start:]:
        if not line.startswith("| "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        rows[cells[0]] = cells[1:]
    return rows


def test_odd_values_render_html_without_made_up_numbers():
    calibration = pairwise_calibration()
    small = calibration["judges"]["chat-small/pair-v2"]
    small["vs_people"] = {"agreement": {"value": "0.7", "low": None, "high": 1, "n": -3}, "kappa": [0.4]}
    small["verdict_counts"] = ["A", "B"]
    small["per_category"] = {"writing": "n/a"}
    calibration["notes"] = "one string, not a list"
    calibration["versions"] = "v1"
    html = render_report(build_report_data(calibration), "html")
    row = html.split('data-judge="chat-small/pair-v2"')[1].split("</tr>")[0]
    assert row.count(NOT_AVAILABLE) == 2
    assert "one string, not a list" not in html


def _replace(calibration, replacements):
    for path, value in replacements:
        node = calibration
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node[path[-1]] = value
    return calibration


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), json_values), min_size=1, max_size=3))
def test_any_value_at_any_key_renders_html_with_plots(replacements):
    html = render_report(build_report_data(_replace(pairwise_calibration(), replacements)), "html")
    assert html.startswith("<!DOCTYPE html>")


def test_an_interval_that_excludes_its_estimate_is_drawn():
    calibration = pairwise_calibration()
    calibration["judges"]["gpt4_2023"]["vs_people"]["kappa"] = {"value": 0.30, "low": 0.32, "high": 0.50, "n": 40}
    html = render_report(build_report_data(calibration), "html")
    row = next(r for r in parse_html(html).tables["table-people"] if r[0].startswith("gpt4_2023"))
    assert_same_estimate(row[2], {"value": 0.30, "low": 0.32, "high": 0.50, "n": 40})


@pytest.mark.parametrize("odd", [True, 5, {"a": 1}, None, "gpt-4-0613"])
def test_judge_versions_of_any_shape_render(odd):
    """Found by the property test above: `models: true` crashed the report model."""
    calibration = pairwise_calibration()
    for info in calibration["versions"]["judges"].values():
        info["models"] = odd
        info["template_hashes"] = odd
    data = build_report_data(calibration)
    for fmt in ("md", "json"):
        render_report(data, fmt)
    models = {tuple(j["models"]) for j in data["judges"]}
    assert models == ({("gpt-4-0613",)} if odd == "gpt-4-0613" else {()})


def test_non_finite_numbers_become_null_in_the_json_report():
    """Found by the property test above: an infinite value made the JSON report raise."""
    calibration = pairwise_calibration()
    calibration["bootstrap"] = {"n_resamples": float("inf"), "level": float("nan")}
    out = render_report(build_report_data(calibration), "json")
    assert "Infinity" not in out and "NaN" not in out
    json.loads(out)
