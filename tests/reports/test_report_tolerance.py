"""A calibration file with odd or missing values: an absent figure renders as 'n/a'; a value of the wrong
type is refused by the typed model (the field named), never half-rendered, never a crash or a made-up number."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from juge.errors import InputError
from juge.reports import build_report_data, read_calibration, render_report
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
    data = _built_or_refused(_replace(pairwise_calibration(), replacements))
    if data is None:
        return
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


def _built_or_refused(calibration):
    """The report data, or None when the typed model refuses the file (naming where, in pydantic's error)."""
    try:
        return build_report_data(calibration)
    except ValidationError as exc:
        assert exc.errors() and all(err["loc"] for err in exc.errors())
        return None


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


def test_values_of_the_wrong_type_are_refused_naming_each_field():
    calibration = pairwise_calibration()
    small = calibration["judges"]["chat-small/pair-v2"]
    small["vs_people"] = {"agreement": {"value": None, "low": None, "high": None, "n": 0}, "kappa": [0.4]}
    small["verdict_counts"] = ["A", "B"]
    small["per_category"] = {"writing": "n/a"}
    calibration["notes"] = "one string, not a list"
    calibration["versions"] = "v1"
    with pytest.raises(ValidationError) as refused:
        build_report_data(calibration)
    where = {err["loc"][:5] for err in refused.value.errors()}
    judge = ("judges", "chat-small/pair-v2")
    assert {
        (*judge, "vs_people", "kappa"),
        (*judge, "verdict_counts"),
        (*judge, "per_category", "writing"),
        ("notes",),
        ("versions",),
    } <= where


def test_an_undefined_figure_renders_as_not_available():
    calibration = pairwise_calibration()
    small = calibration["judges"]["chat-small/pair-v2"]
    small["vs_people"] = {"agreement": {"value": None, "low": None, "high": None, "n": 0}}
    html = render_report(build_report_data(calibration), "html")
    row = html.split('data-judge="chat-small/pair-v2"')[1].split("</tr>")[0]
    assert row.count(f'<td class="est na">{NOT_AVAILABLE}</td>') == 2  # agreement undefined, kappa absent


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
    data = _built_or_refused(_replace(pairwise_calibration(), replacements))
    if data is not None:
        assert render_report(data, "html").startswith("<!DOCTYPE html>")


def test_an_interval_that_excludes_its_estimate_is_drawn():
    calibration = pairwise_calibration()
    calibration["judges"]["gpt4_2023"]["vs_people"]["kappa"] = {"value": 0.30, "low": 0.32, "high": 0.50, "n": 40}
    html = render_report(build_report_data(calibration), "html")
    row = next(r for r in parse_html(html).tables["table-people"] if r[0].startswith("gpt4_2023"))
    assert_same_estimate(row[2], {"value": 0.30, "low": 0.32, "high": 0.50, "n": 40})


@pytest.mark.parametrize("odd", [True, 5, {"a": 1}, None, "gpt-4-0613"])
def test_judge_versions_of_another_shape_are_refused_naming_the_field(odd, tmp_path):
    """Found by the property test above: `models: true` crashed the report model; the file is refused now."""
    calibration = pairwise_calibration()
    for info in calibration["versions"]["judges"].values():
        info["models"] = odd
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(calibration), encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_calibration(path)
    assert refused.value.path == str(path)
    assert refused.value.field.startswith("versions.judges.") and refused.value.field.endswith(".models")


def test_non_finite_numbers_become_null_in_the_json_report():
    """Found by the property test above: an infinite value made the JSON report raise."""
    calibration = pairwise_calibration()
    calibration["ceiling"]["agreement"] = {"value": float("inf"), "low": float("nan"), "high": 1.0, "n": 3}
    calibration["judges"]["gpt4_2023"]["vs_people"]["kappa"] = {"value": 0.3, "low": float("-inf"), "high": 1, "n": 3}
    data = build_report_data(calibration)
    out = render_report(data, "json")
    assert "Infinity" not in out and "NaN" not in out
    back = json.loads(out)
    assert back["ceiling"]["agreement"] is None
    gpt4 = next(j for j in back["judges"] if j["key"] == "gpt4_2023")
    assert gpt4["vs_people"]["kappa"] == {"value": 0.3, "low": None, "high": None, "n": 3}
