"""A 1-4 score judge calibrated against PASS/FAIL labels: never read score 1 as PASS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli, write_jsonl

JUDGE = """
name = "grade"
setup = "score"
description = "How correct the reply is."
model = "scripted-judge-1"
provider = "scripted"
levels = { 1 = "wrong", 2 = "poor", 3 = "good", 4 = "right" }

[provider_options]
model = "scripted-judge-1"
default = "It is right.\\nNOTE: 4"

[[provider_options.responses]]
match = "WRONG-ANSWER"
text = "It is wrong.\\nNOTE: 1"
"""


@pytest.fixture
def scored_run(tmp_path: Path, monkeypatch, capsys) -> tuple[Path, str, Path]:
    cases = write_jsonl(
        tmp_path / "cases.jsonl",
        [
            {"id": f"c{k}", "question": "Opening hours?", "output": "WRONG-ANSWER" if k % 2 else "8 to 18."}
            for k in range(10)
        ],
    )
    judge = tmp_path / "grade.toml"
    judge.write_text(JUDGE, encoding="utf-8")
    db = tmp_path / "juge.db"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        "--cases",
        str(cases),
        "--judge",
        str(judge),
        "--db",
        str(db),
        "--json",
        str(tmp_path / "run.json"),
    )
    assert code == 0, err
    run_id = json.loads((tmp_path / "run.json").read_text())["run_id"]
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {"item_id": f"c{k}", "rater_id": r, "label": "FAIL" if k % 2 else "PASS"}
            for k in range(10)
            for r in ("r1", "r2")
        ],
    )
    return db, run_id, labels


def test_without_threshold_the_study_is_refused_naming_the_option(scored_run, monkeypatch, capsys) -> None:
    db, run_id, labels = scored_run
    code, out, err = run_cli(
        monkeypatch, capsys, "calibrate", "--run", run_id, "--db", str(db), "--labels", str(labels)
    )
    assert code == 2
    assert "--threshold" in err


def test_with_threshold_scores_read_as_pass_at_or_above_it(scored_run, tmp_path, monkeypatch, capsys) -> None:
    db, run_id, labels = scored_run
    out_json = tmp_path / "cal.json"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "calibrate",
        "--run",
        run_id,
        "--db",
        str(db),
        "--labels",
        str(labels),
        "--threshold",
        "3",
        "--json",
        str(out_json),
    )
    assert code == 0, err
    result = json.loads(out_json.read_text())
    assert result["kind"] == "passfail"
    (figures,) = result["judges"].values()
    assert figures["agreement"]["value"] == pytest.approx(1.0)
    # a threshold above every score makes every answer a FAIL: agreement with people is then 1/2
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "calibrate",
        "--run",
        run_id,
        "--db",
        str(db),
        "--labels",
        str(labels),
        "--threshold",
        "5",
        "--json",
        str(out_json),
    )
    (figures,) = json.loads(out_json.read_text())["judges"].values()
    assert figures["agreement"]["value"] == pytest.approx(0.5)
