"""`juge calibrate --junit`: per judge, a test case per category read from the study's headline (stands in:
passed; not: a failure with both figures; too few labels: skipped); calibrate still exits 0 (issue 28)."""

from __future__ import annotations

import json

import pytest
from junitparser import Failure, JUnitXml, Skipped

from cli_helpers import run_cli


@pytest.mark.slow  # a study of the sample (320 items)
def test_calibrate_junit_is_the_headline_per_category(sample_dir, tmp_path, monkeypatch, capsys):
    junit, study = tmp_path / "cal.xml", tmp_path / "cal.json"
    code, _, err = run_cli(
        monkeypatch, capsys, "calibrate", "--items", str(sample_dir / "items.jsonl"), "--judgments",
        str(sample_dir / "judgments.jsonl"), "--resamples", "50", "--json", str(study), "--junit", str(junit),
    )  # fmt: skip
    assert code == 0, err
    expected = {}
    for line in json.loads(study.read_text())["headline"]:
        for place in line["places"]:
            kind = {"stands in": "passed", "not": "failure", "not measured": "skipped"}[place["decision"]]
            expected[(f"calibration {line['judge']}", f"category {place['name']}")] = kind
    xml = JUnitXml.fromfile(str(junit))
    found = {}
    for suite in xml:
        for case in suite:
            kinds = {type(r) for r in case.result}
            found[(case.classname, case.name)] = (
                "failure" if Failure in kinds else "skipped" if Skipped in kinds else "passed"
            )
    assert found == expected and "failure" in found.values() and "passed" in found.values()
    assert xml.failures == sum(k == "failure" for k in expected.values())
