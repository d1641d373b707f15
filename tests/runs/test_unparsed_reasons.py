"""A run counts how often each rule of the parser contract fired (`RunJudge.unparsed_reasons`), in its result,
its `--json` and its printed summary, so a judge that writes two verdicts is visible."""

import json
from pathlib import Path

from typer.testing import CliRunner

import juge
from juge.cli import app


def scripted_eval(tmp_path: Path) -> Path:
    """Four cases: one plain PASS, two answers with a second verdict, one with no verdict line."""
    rows = [
        {"id": "plain", "question": "q plain", "output": "o"},
        {"id": "second-1", "question": "q second-1", "output": "o"},
        {"id": "second-2", "question": "q second-2", "output": "o"},
        {"id": "format", "question": "q format", "output": "o"},
    ]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = tmp_path / "eval.toml"
    path.write_text("""
cases = "cases.jsonl"
[[judges]]
name = "pf"
setup = "passfail"
description = "Is it helpful?"
model = "m"
provider = "scripted"
[judges.provider_options]
default = "PASS\\nHelpful."
responses = [
  { match = "q second-", text = "PASS\\nThe hours are wrong.\\nVerdict: FAIL" },
  { match = "q format", text = "The answer is good." },
]
""")
    return path


def test_the_summary_counts_each_reason_code(tmp_path: Path) -> None:
    run = juge.run(scripted_eval(tmp_path), db=tmp_path / "j.db")
    assert run.summary is not None
    judge = run.summary.judges["pf"]
    assert judge.outcomes["unparsed"] == 3
    assert judge.unparsed_reasons == {"format": 1, "second_verdict": 2}
    assert json.loads(run.summary.to_json())["judges"]["pf"]["unparsed_reasons"] == {"format": 1, "second_verdict": 2}
    assert run.summary.cases_passed == 1 and run.summary.cases_missing == 3


def test_juge_run_prints_and_writes_the_counts(tmp_path: Path) -> None:
    path = scripted_eval(tmp_path)
    out = tmp_path / "run.json"
    result = CliRunner().invoke(
        app, ["run", str(path), "--db", str(tmp_path / "j.db"), "--no-progress", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["judges"]["pf"]["unparsed_reasons"] == {"format": 1, "second_verdict": 2}
    lines = [" ".join(line.replace("│", " ").split()) for line in result.stdout.splitlines()]
    assert "unparsed: second_verdict 2" in lines
    assert "unparsed: format 1" in lines
