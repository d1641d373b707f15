"""`juge run --junit`: the run as JUnit XML a CI reads (a test case per case and judge, per check, per gate
bound), and `[gate] min_pass_rate_lower` on the pass rate's lower bound (exact, or PPI++ with labels)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped
from scipy.stats import binomtest

import juge
from cli_helpers import run_cli, write_jsonl
from juge.api import run_report
from juge.junit import xml_safe

BAKERY = Path(__file__).resolve().parents[2] / "examples" / "bakery"


@pytest.fixture
def bakery(tmp_path):
    shutil.copytree(BAKERY, tmp_path / "bakery")
    return tmp_path / "bakery"


def _gate(folder: Path, text: str) -> Path:
    eval_file = folder / "eval.toml"
    eval_file.write_text(eval_file.read_text() + "\n[gate]\n" + text + "\n")
    return eval_file


def _results(path: Path) -> dict[tuple[str, str], str]:
    """(class name, test case) -> passed / failure / error / skipped, as a JUnit parser reads the file."""
    out = {}
    for suite in JUnitXml.fromfile(str(path)):
        for case in suite:
            kinds = {type(r) for r in case.result}
            kind = (
                "failure"
                if Failure in kinds
                else "error"
                if Error in kinds
                else "skipped"
                if Skipped in kinds
                else "passed"
            )
            out[(case.classname, case.name)] = kind
    return out


def test_junit_has_a_case_per_case_and_judge_with_the_raw_answer_and_the_gate(bakery, tmp_path, monkeypatch, capsys):
    eval_file = _gate(bakery, "min_pass_rate_lower = 0.5")
    junit, summary = tmp_path / "ci" / "junit.xml", tmp_path / "s.json"
    code, _, err = run_cli(
        monkeypatch, capsys, "run", str(eval_file), "--db", str(tmp_path / "j.db"), "--no-progress",
        "--junit", str(junit), "--json", str(summary),
    )  # fmt: skip
    assert code == 1, err  # 4 of 8 pass: the exact lower bound is far below 0.5
    results = _results(junit)
    faithful = {case: kind for (suite, case), kind in results.items() if suite == "judge faithful"}
    assert faithful == {
        "hours-1": "passed", "hours-2": "passed", "price-1": "passed", "price-2": "failure",
        "gf-1": "failure", "gf-2": "error", "cake-1": "passed", "cake-2": "passed",
    }  # fmt: skip
    # The score judge counts nothing without [gate] min_score: skipped, never passed or failed.
    assert {kind for (suite, _), kind in results.items() if suite == "judge quality"} == {"skipped"}
    assert results[("check no_competitors", "price-2")] == "failure"
    assert results[("check short", "price-2")] == "passed"
    assert results[("gate", "min_pass_rate_lower")] == "failure"
    # The failure carries the judge's raw answer; the unparsed answer is an error with its text.
    xml = JUnitXml.fromfile(str(junit))
    cases = {(s.name, c.name): c for s in xml for c in s}
    (failure,) = cases[("judge faithful", "gf-1")].result
    assert "not sourdough" in failure.text and failure.message.startswith("faithful said FAIL")
    (error,) = cases[("judge faithful", "gf-2")].result
    assert error.type == "unparsed" and "**PASS**" in error.text
    # The totals the CI shows add up, and the gate's figure is the exact interval's lower bound.
    assert xml.failures == sum(k == "failure" for k in results.values())
    assert xml.errors == 1 and xml.skipped == 8
    gate = json.loads(summary.read_text())
    assert gate["n_cases"] == 8 and gate["cases_passed"] == 4
    low = binomtest(4, 8).proportion_ci(0.95, method="exact").low
    assert f"{low:.1%}" in err


def test_the_gate_on_the_lower_bound_passes_and_fails_on_the_exact_interval(bakery, tmp_path):
    eval_file = _gate(bakery, "min_pass_rate_lower = 0.15\nmin_pass_rate = 0.5")
    run = juge.run(str(eval_file), db=str(tmp_path / "j.db"))
    gate = run.gate
    assert gate is not None and gate.passed and gate.lower_from == "exact"
    assert gate.pass_rate == 0.5
    assert gate.pass_rate_lower == pytest.approx(binomtest(4, 8).proportion_ci(0.95, method="exact").low)
    # The same rule as the run report's pass-rate interval (one rule, one place).
    data = json.loads(Path(run_report(run.run_id, db=str(tmp_path / "j.db"), path=tmp_path / "r.json")).read_text())
    assert data["pass_rate"]["low"] == pytest.approx(gate.pass_rate_lower)


def test_the_lower_bound_gate_with_labels_is_the_corrected_estimates(bakery, tmp_path):
    ids = ["hours-1", "hours-2", "price-1", "price-2", "gf-1", "cake-1"]
    write_jsonl(
        bakery / "labels.jsonl",
        [{"item_id": i, "rater_id": "ann", "label": "FAIL" if i == "price-2" else "PASS"} for i in ids],
    )
    eval_file = _gate(bakery, 'min_pass_rate_lower = 0.2\nlabels = "labels.jsonl"')
    db = str(tmp_path / "j.db")
    run = juge.run(str(eval_file), db=db)
    corrected = juge.estimate(run.run_id, bakery / "labels.jsonl", db=db)
    assert run.gate is not None and run.gate.lower_from == "ppi" and run.gate.n_labelled == 6
    assert run.gate.pass_rate_lower == pytest.approx(corrected.ppi.low)
    assert run.gate.passed == (corrected.ppi.low >= 0.2)


def test_labels_without_the_lower_bound_or_missing_are_input_errors(bakery, tmp_path, monkeypatch, capsys):
    eval_file = _gate(bakery, 'min_pass_rate = 0.5\nlabels = "labels.jsonl"')
    code, _, err = run_cli(monkeypatch, capsys, "run", str(eval_file), "--db", str(tmp_path / "j.db"))
    assert code == 2 and "gate.labels" in err and "min_pass_rate_lower" in err
    eval_file.write_text(eval_file.read_text().replace("min_pass_rate =", "min_pass_rate_lower ="))
    code, _, err = run_cli(monkeypatch, capsys, "run", str(eval_file), "--db", str(tmp_path / "j.db"))
    assert code == 2 and "not found" in err
    assert not (tmp_path / "j.db").exists() or not juge.list_runs(db=str(tmp_path / "j.db"))


def test_an_unwritable_junit_path_is_exit_2_before_anything_runs(bakery, tmp_path, monkeypatch, capsys):
    (tmp_path / "file").write_text("x")
    code, _, err = run_cli(
        monkeypatch, capsys, "run", str(bakery / "eval.toml"), "--db", str(tmp_path / "j.db"),
        "--junit", str(tmp_path / "file" / "junit.xml"),
    )  # fmt: skip
    assert code == 2 and "--junit" in err
    assert not (tmp_path / "j.db").exists() or not juge.list_runs(db=str(tmp_path / "j.db"))


def test_hostile_judge_text_is_xml_safe(bakery, tmp_path):
    judge = bakery / "judges" / "faithful.toml"
    judge.write_text(
        judge.read_text().replace(
            'text = "FAIL\\nThe facts say nothing',
            'text = "FAIL\\n\\u001b[2J\\u0000]]></failure><x/>\\u202e evil\\u0007 The facts say nothing',
        )
    )
    run = juge.run(str(bakery / "eval.toml"), db=str(tmp_path / "j.db"))
    xml = juge.run_junit(run, db=str(tmp_path / "j.db"))
    root = ET.fromstring(xml.encode())  # parses: nothing unescaped, no control character
    (failure,) = [f for f in root.iter("failure") if "competitor" in (f.text or "")]
    assert "]]></failure><x/>" in failure.text and "⟨U+0000⟩" in failure.text and "⟨U+202E⟩" in failure.text
    assert "\x1b" not in xml and "\x00" not in xml and "\x07" not in xml


def test_xml_safe_marks_what_xml_cannot_hold():
    assert xml_safe("a\ud800b\uffffc\x0bd\te\n") == "a⟨U+D800⟩b⟨U+FFFF⟩c⟨U+000B⟩d\te\n"
