"""A forced second holdout test prints its FORCED warning once."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from juge.cli import app
from cli_helpers import write_jsonl


def test_forced_holdout_test_warns_once(tmp_path: Path) -> None:
    items = write_jsonl(tmp_path / "items.jsonl", [
        {"item_id": f"i{k}", "question_id": k, "category": "writing", "split": "dev" if k < 10 else "holdout",
         "question": "q", "answer_1": "a", "answer_2": "bb", "reference": None,
         "human_ratings": [{"rater_id": "r1", "label": "A"}, {"rater_id": "r2", "label": "A"}]} for k in range(20)])
    calls = write_jsonl(tmp_path / "judgments.jsonl", [
        {"item_id": f"i{k}", "judge": "j", "model": "m", "prompt": "p", "order": o, "letter": letter, "outcome": "ok",
         "text": "x"} for k in range(20) for o, letter in (("12", "A"), ("21", "B"))])
    common = ["--items", str(items), "--judgments", str(calls), "--db", str(tmp_path / "j.db"), "--resamples", "100"]
    runner = CliRunner()
    policy = str(tmp_path / "p.json")
    assert runner.invoke(app, ["policy", "derive", *common, "-o", str(tmp_path / "P.md"), "--json", policy]
                         ).exit_code == 0
    assert runner.invoke(app, ["policy", "test", "--policy", policy, *common]).exit_code == 0
    forced = runner.invoke(app, ["policy", "test", "--policy", policy, *common, "--force"], env={"COLUMNS": "300"})
    assert forced.exit_code == 0, forced.output
    assert forced.output.count("FORCED") == 1
