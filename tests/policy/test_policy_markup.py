"""Judge names and categories are data: policy derive/test and route print them literally, never as markup."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli_helpers import write_jsonl
from juge.cli import app

JUDGE = "judge[/]x[bold]"
CATEGORY = "[red]cat[/]"


def test_policy_commands_print_markup_in_names_literally(tmp_path: Path) -> None:
    items = [
        {
            "item_id": f"i{k}",
            "question_id": k,
            "category": CATEGORY,
            "split": "dev" if k < 12 else "holdout",
            "question": "q",
            "answer_1": "a",
            "answer_2": "bb",
            "reference": None,
            "human_ratings": [{"rater_id": "r1", "label": "A"}, {"rater_id": "r2", "label": "A"}],
        }
        for k in range(20)
    ]
    calls = [
        {
            "item_id": f"i{k}",
            "judge": JUDGE,
            "model": "m",
            "prompt": "p",
            "order": o,
            "letter": letter,
            "outcome": "ok",
            "text": "[/]",
        }
        for k in range(20)
        for o, letter in (("12", "A"), ("21", "B"))
    ]
    items_path = write_jsonl(tmp_path / "items.jsonl", items)
    calls_path = write_jsonl(tmp_path / "judgments.jsonl", calls)
    runner = CliRunner()
    common = [
        "--items",
        str(items_path),
        "--judgments",
        str(calls_path),
        "--db",
        str(tmp_path / "j.db"),
        "--resamples",
        "100",
    ]
    policy = tmp_path / "policy.json"
    result = runner.invoke(
        app, ["policy", "derive", *common, "-o", str(tmp_path / "P.md"), "--json", str(policy)], env={"COLUMNS": "250"}
    )
    assert result.exit_code == 0, result.output
    assert f"{JUDGE}/p (chosen)" in result.output and CATEGORY in result.output
    result = runner.invoke(app, ["policy", "test", "--policy", str(policy), *common], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert CATEGORY in result.output
    item = dict(items[15], judgments=calls[30:32])
    (tmp_path / "item.json").write_text(json.dumps(item))
    result = runner.invoke(
        app, ["route", "--policy", str(policy), "--item", str(tmp_path / "item.json")], env={"COLUMNS": "250"}
    )
    assert result.exit_code == 0, result.output
    assert CATEGORY in result.output
