"""A run counts how often each rule of the parser contract fired (`RunJudge.unparsed_reasons`), in its result,
its `--json` and its printed summary, so a judge that writes two verdicts is visible."""

import itertools
import json
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

import juge
from juge.cli import app
from juge.data.records import Case
from juge.judges import judge_from_dict
from juge.testing.mockmodel import expected_answer
from juge.testing.mockserver import MockConfig, serve_in_thread


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


# --- end to end against the mock model server: 9 of 11 answers say PASS and then the opposite -------------

MODEL = "mock-judge-2026-01"
CONTRADICTIONS = {
    "PASS\nThe response invents a price. Answer: FAIL": "second_verdict",
    "PASS\nThe hours are right.\nFAIL": "second_verdict",
    "PASS\nIt is a fail.": "opposite_word",
    "PASS\nThe response does NOT have the property.": "opposite_word",
    "PASS\nVeredicto: suspenso.": "opposite_word",
    "PASS\nLa réponse invente un prix : échec.": "opposite_word",
    "PASS\n回答编造了价格，不通过。": "opposite_word",
    "PASS\nThe response does not pass.": "negated_verdict",
    "PASS\nThe price is invented, so this is not PASS.": "negated_verdict",
}
PLAIN = ["PASS\nThe hours are right.", "FAIL\nThe hours are wrong."]
JUDGE = {"name": "grader", "setup": "passfail", "model": MODEL, "description": "The answer is right."}


def cases_answered_in_turn(config: MockConfig) -> list[dict]:
    """One case per answer of `config`, each with a question the mock server answers with that answer (its
    answer is a hash of the request, so the question is searched for)."""
    judge = judge_from_dict(JUDGE)
    rows = []
    for i, wanted in enumerate(config.answers):
        for k in itertools.count():
            row = {"id": f"c{i}", "question": f"Question {i}.{k}?", "output": "Open nine to five."}
            case = Case(id=row["id"], question=row["question"], output=row["output"])
            if expected_answer(config, MODEL, judge.render(case)) == wanted:
                rows.append(row)
                break
    return rows


def test_nine_contradictory_passes_of_eleven_are_unparsed_not_passing(tmp_path: Path) -> None:
    config = MockConfig(answers=(*CONTRADICTIONS, *PLAIN))
    rows = cases_answered_in_turn(config)
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run.json"
    with serve_in_thread(config) as server:
        (tmp_path / "eval.toml").write_text(
            f'cases = "cases.jsonl"\n[provider]\nname = "openai"\noptions = {{ base_url = "{server.url}" }}\n'
            f"[[judges]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in JUDGE.items())
        )
        result = CliRunner().invoke(
            app,
            ["run", str(tmp_path / "eval.toml"), "--db", str(tmp_path / "j.db"), "--no-progress", "--json", str(out)],
        )
    assert result.exit_code == 0, result.output
    summary = json.loads(out.read_text())
    assert summary["n_cases"] == 11
    assert (summary["cases_passed"], summary["cases_failed"], summary["cases_missing"]) == (1, 1, 9)
    assert summary["pass_rate"] != 10 / 11
    judge = summary["judges"]["grader"]
    assert judge["outcomes"]["unparsed"] == 9 and judge["verdicts"] == {"FAIL": 1, "PASS": 1}
    assert judge["unparsed_reasons"] == dict(Counter(CONTRADICTIONS.values()))
    lines = [" ".join(line.replace("│", " ").split()) for line in result.stdout.splitlines()]
    for code, count in Counter(CONTRADICTIONS.values()).items():
        assert f"unparsed: {code} {count}" in lines
