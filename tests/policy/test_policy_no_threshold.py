"""--rule guarantee when no confidence threshold reaches the target: a warning, a Rule 3 table marked as not used,
and route says every item goes to a person."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli_helpers import write_jsonl
from juge.cli import app


def test_guarantee_without_threshold_is_said_plainly(tmp_path: Path) -> None:
    # The judge always says A with full confidence; the people say B on half the items: no threshold can
    # keep disagreement under 1 - 0.9.
    rows = [
        {
            "item_id": f"i{k}",
            "question_id": k,
            "category": "writing",
            "split": "dev",
            "question": "q",
            "answer_1": "a",
            "answer_2": "bb",
            "reference": None,
            "human_ratings": [{"rater_id": f"r{n}", "label": "A" if k % 2 else "B"} for n in range(2)],
        }
        for k in range(30)
    ]
    calls = [
        {
            "item_id": f"i{k}",
            "judge": "j",
            "model": "m",
            "prompt": "p",
            "order": o,
            "letter": letter,
            "outcome": "ok",
            "text": "x",
        }
        for k in range(30)
        for o, letter in (("12", "A"), ("21", "B"))
    ]
    items, judgments = write_jsonl(tmp_path / "items.jsonl", rows), write_jsonl(tmp_path / "j.jsonl", calls)
    policy = tmp_path / "p.json"
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "policy",
            "derive",
            "--rule",
            "guarantee",
            "--items",
            str(items),
            "--judgments",
            str(judgments),
            "--db",
            str(tmp_path / "j.db"),
            "-o",
            str(tmp_path / "P.md"),
            "--json",
            str(policy),
            "--resamples",
            "100",
        ],
        env={"COLUMNS": "300"},
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert json.loads(policy.read_text())["guarantee"]["threshold"] is None
    assert "warning: no confidence threshold reached the target agreement 0.9 at confidence 0.9" in text
    assert "every item goes to a person" in text and "decision (not used)" in text
    assert "Rule 6: threshold none" not in text
    item = dict(rows[0], judgments=calls[:2])
    (tmp_path / "item.json").write_text(json.dumps(item))
    result = runner.invoke(
        app, ["route", "--policy", str(policy), "--item", str(tmp_path / "item.json")], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "person: no confidence threshold"
    assert lines[1].startswith("reason: no confidence threshold reached the target on dev: every item goes to a person")
