"""Typed results: the committed JSON Schemas are the models', every result JSON the CLI writes validates
against its schema, and files written before `schema_version` still load and write back unchanged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

from cli_helpers import run_cli, write_jsonl
from juge.calibration.grades import build_grade_table, grade_study
from juge.calibration.pairwise import Bootstrap
from juge.data.records import Case, HumanLabel, Judgment
from juge.providers.registry import register_provider
from juge.providers.scripted import ScriptedProvider
from juge.results import (
    SCHEMA_VERSION,
    Calibration,
    Comparison,
    Estimate,
    EstimateResult,
    ProbeResult,
    RunSummary,
    format_estimate,
    schemas,
)

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "docs" / "schema"
BAKERY = ROOT / "examples" / "bakery"

register_provider("results-harsh", lambda **options: ScriptedProvider(default="FAIL\nNot good enough."))


def validate(name: str, data: dict) -> None:
    schema = json.loads((SCHEMA_DIR / f"{name}.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)


def test_committed_schemas_are_generated_from_the_models() -> None:
    committed = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in SCHEMA_DIR.glob("*.json")}
    assert committed == schemas(), "docs/schema drifted from juge/results.py: run python -m juge.results docs/schema"


def test_a_schema_rejects_a_result_with_a_wrong_field() -> None:
    bad = {"schema_version": 1, "run_id": "r", "n_cases": "three"}
    with pytest.raises(jsonschema.ValidationError):
        validate("run_summary", bad)


def test_demo_json_validates_and_an_old_file_loads_and_writes_back_unchanged(monkeypatch, capsys, tmp_path) -> None:
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "demo",
        "--out",
        str(tmp_path / "demo"),
        "--resamples",
        "50",
        "--json",
        str(tmp_path / "d.json"),
    )
    assert code == 0, err
    written = json.loads((tmp_path / "demo" / "calibration.json").read_text(encoding="utf-8"))
    assert written["schema_version"] == SCHEMA_VERSION
    validate("calibration", written)
    # --json is calibrate's JSON and calibration.json alike: the study with its one-line answers
    printed = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert printed == written
    assert written["headline"] and {h["judge"] for h in written["headline"]} <= set(written["judges"])
    old = {k: v for k, v in written.items() if k != "schema_version"}  # as juge wrote it before
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    loaded = Calibration.load(tmp_path / "old.json")
    assert loaded.to_dict() == written
    assert loaded.ceiling.agreement == Estimate(**written["ceiling"]["agreement"])
    assert list(loaded.to_dict()) == list(written)  # the keys keep their order


def test_an_old_file_without_newer_keys_loads_and_keeps_its_shape() -> None:
    minimal = {
        "kind": "pairwise",
        "split": "dev",
        "n_items": 1,
        "n_votes": 2,
        "n_raters": 2,
        "ceiling": {"agreement": {"value": 1.0, "low": 1.0, "high": 1.0, "n": 1}, "n_pairs": 1},
        "judges": {},
        "an_unknown_key": [1, 2],
    }
    loaded = Calibration.model_validate(minimal)
    assert loaded.to_dict() == {"schema_version": SCHEMA_VERSION, **minimal}
    assert loaded["an_unknown_key"] == [1, 2] and "kappa" not in loaded["ceiling"]


def grade_tables() -> list:
    cases = [Case(id=f"i{k}", group=f"g{k}", category="c" if k % 2 else "d", output="o") for k in range(8)]
    scores = [
        HumanLabel(item_id=f"i{k}", rater_id=r, label=(k + r_i) % 4 + 1)
        for k in range(8)
        for r_i, r in enumerate(("r1", "r2"))
    ]
    passfail = [
        HumanLabel(item_id=f"i{k}", rater_id=r, label="PASS" if (k + r_i) % 3 else "FAIL")
        for k in range(8)
        for r_i, r in enumerate(("r1", "r2"))
    ]

    def calls(verdict) -> list[Judgment]:
        return [
            Judgment(item_id=f"i{k}", judge="j", model="m", template="t", text="x", verdict=verdict(k), outcome="ok")
            for k in range(8)
        ]

    return [
        build_grade_table("score", cases, scores, calls(lambda k: k % 4 + 1)),
        build_grade_table("passfail", cases, passfail, calls(lambda k: "PASS" if k % 2 else "FAIL")),
    ]


@pytest.mark.parametrize("threshold", [None, 3.0])
def test_score_and_passfail_studies_validate(threshold) -> None:
    boot = Bootstrap(n_resamples=50)
    for table in grade_tables():
        study = grade_study(table, split=None, boot=boot, threshold=threshold if table.kind == "score" else None)
        assert isinstance(study, Calibration)
        validate("calibration", study.to_dict())
        assert Calibration.model_validate(json.loads(study.to_json())).to_dict() == study.to_dict()
        frame = study.to_frame()
        assert {"ceiling", "j/t"} <= set(frame["who"]) and frame["n"].min() >= 0


def test_run_compare_and_estimate_json_validate(monkeypatch, capsys, tmp_path) -> None:
    shutil.copytree(BAKERY, tmp_path / "bakery")
    db = str(tmp_path / "j.db")
    summaries = []
    for k in range(2):
        out = tmp_path / f"run{k}.json"
        code, _, err = run_cli(
            monkeypatch, capsys, "run", str(tmp_path / "bakery" / "eval.toml"), "--db", db, "--json", str(out)
        )
        assert code == 0, err
        summaries.append(json.loads(out.read_text(encoding="utf-8")))
    for summary in summaries:
        validate("run_summary", summary)
        assert RunSummary.model_validate(summary).to_dict() == summary
    run_a, run_b = (s["run_id"] for s in summaries)
    out = tmp_path / "compare.json"
    code, _, err = run_cli(
        monkeypatch, capsys, "compare", run_a, run_b, "--db", db, "--json", str(out), "--threshold", "2"
    )
    assert code == 0, err
    compared = json.loads(out.read_text(encoding="utf-8"))
    validate("comparison", compared)
    assert Comparison.model_validate(compared).to_dict() == compared
    ids = [json.loads(line)["id"] for line in (BAKERY / "cases.jsonl").read_text().splitlines() if line.strip()]
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [{"item_id": i, "rater_id": "r", "label": "PASS" if k % 3 else "FAIL"} for k, i in enumerate(ids[:8])],
    )
    out = tmp_path / "estimate.json"
    code, _, err = run_cli(
        monkeypatch, capsys, "estimate", "--run", run_b, "--labels", str(labels), "--db", db, "--json", str(out),
        "--resamples", "100", "--threshold", "2",
    )  # fmt: skip
    assert code == 0, err
    estimated = json.loads(out.read_text(encoding="utf-8"))
    validate("estimate", estimated)
    assert "lambda" in estimated["ppi"]
    assert EstimateResult.model_validate(estimated).ppi.lambda_ == estimated["ppi"]["lambda"]


def test_probe_json_validates(monkeypatch, capsys, tmp_path) -> None:
    judge = tmp_path / "judge.toml"
    judge.write_text(
        'name = "pf"\nsetup = "passfail"\nmodel = "m"\n[rubric]\ndescription = "The answer is correct."\n',
        encoding="utf-8",
    )
    out = tmp_path / "probe.json"
    code, _, err = run_cli(
        monkeypatch, capsys, "probe", "injection", "--judge", str(judge), "--provider", "results-harsh",
        "--db", str(tmp_path / "j.db"), "--no-progress", "--limit", "3", "--resamples", "100", "--json", str(out),
    )  # fmt: skip
    assert code == 0, err
    probed = json.loads(out.read_text(encoding="utf-8"))
    validate("probe_injection", probed)
    assert ProbeResult.model_validate(probed).to_dict() == probed


def test_one_formatter() -> None:
    est = Estimate(0.71234, 0.65, 0.7701, n=155)
    assert format_estimate(est) == est.fmt() == str(est) == "0.712 [0.650, 0.770] n=155"
    assert format_estimate(est.to_dict(), 1, percent=True) == "71.2 % [65.0, 77.0] n=155"
    assert format_estimate(None) == "n/a" and format_estimate({"value": None, "n": 4}) == "n/a n=4"
    assert Estimate(0.5, 0.4, 0.6, n=3, n_items=2).n_items == 2


def test_load_of_a_bad_result_file_is_an_input_error_naming_file_and_field(tmp_path: Path) -> None:
    from juge.errors import InputError

    good = Estimate(0.5, 0.4, 0.6, n=10).to_dict()
    data = {"kind": "pairwise", "split": "dev", "ceiling": {"agreement": {**good, "value": "abc"}}}
    path = tmp_path / "badval.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        Calibration.load(path)
    assert (caught.value.path, caught.value.field) == (str(path), "ceiling.agreement.value")
    path.write_text(json.dumps({**data, "ceiling": {"agreement": good}}), encoding="utf-8")
    assert Calibration.load(path).ceiling.agreement == Estimate(0.5, 0.4, 0.6, n=10)
    for text, field in (("[1]", None), ('{"kind": "pairwise"}', "split"), ("{", None)):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as caught:
            RunSummary.load(path) if field is None else Calibration.load(path)
        assert caught.value.path == str(path) and caught.value.field == field


@pytest.mark.parametrize(
    "field,bad",
    [("value", "0.7"), ("value", True), ("low", "0.4"), ("high", False), ("n", -1), ("n", 10.0), ("n", "10")],
)
def test_an_estimate_takes_numbers_and_a_count_only(tmp_path: Path, monkeypatch, capsys, field, bad) -> None:
    """Text is not a figure, nor a bool, nor a negative or fractional count: exit 2 naming file and field."""
    from juge.errors import InputError

    good = Estimate(0.5, 0.4, 0.6, n=10).to_dict()
    with pytest.raises(ValidationError):
        Estimate(**{**good, field: bad})
    data = {"kind": "pairwise", "split": "dev", "judges": {}, "ceiling": {"agreement": {**good, field: bad}}}
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        Calibration.load(path)
    assert (caught.value.path, caught.value.field) == (str(path), f"ceiling.agreement.{field}")
    code, _, err = run_cli(monkeypatch, capsys, "report", str(path), "-o", str(tmp_path / "r.html"))
    assert code == 2 and not (tmp_path / "r.html").exists()
    assert str(path) in err and f"ceiling.agreement.{field}" in err


def test_a_result_file_from_a_newer_juge_is_refused(tmp_path: Path, monkeypatch, capsys) -> None:
    from juge.errors import InputError

    data = {"schema_version": SCHEMA_VERSION + 98, "kind": "pairwise", "split": "dev", "judges": {}}
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        Calibration.load(path)
    assert (caught.value.path, caught.value.field) == (str(path), "schema_version")
    code, _, err = run_cli(monkeypatch, capsys, "report", str(path), "-o", str(tmp_path / "g.html"))
    assert code == 2 and not (tmp_path / "g.html").exists()
    assert len(err.strip().splitlines()) == 1 and "schema_version" in err
    path.write_text(json.dumps({**data, "schema_version": SCHEMA_VERSION}), encoding="utf-8")
    assert Calibration.load(path).schema_version == SCHEMA_VERSION
