"""`juge report --format md-summary`: a short Markdown for a pull-request comment (the pass rate, the gate, the
changed cases), for a run against the previous run of its eval, or for --compare OLD NEW."""

from __future__ import annotations

import shutil
from pathlib import Path

import juge
from cli_helpers import run_cli

BAKERY = Path(__file__).resolve().parents[2] / "examples" / "bakery"


def _runs(tmp_path: Path) -> tuple[str, str, str]:
    folder = tmp_path / "bakery"
    shutil.copytree(BAKERY, folder)
    eval_file = folder / "eval.toml"
    eval_file.write_text(eval_file.read_text() + "\n[gate]\nmin_pass_rate = 0.6\n")
    db = str(tmp_path / "j.db")
    first = juge.run(str(eval_file), db=db)
    judge = folder / "judges" / "faithful.toml"  # the judge now fails the Sunday hours too
    text = judge.read_text().replace('match = "gluten-free sourdough"', 'match = "Sundays"')
    judge.write_text(text.replace("an invented fact fails.", "an invented fact fails outright."))  # new prompts
    second = juge.run(str(eval_file), db=db)
    return first.run_id, second.run_id, db


def test_md_summary_has_the_answer_the_gate_and_the_changed_cases(tmp_path, monkeypatch, capsys):
    first, second, db = _runs(tmp_path)
    code, out, err = run_cli(
        monkeypatch, capsys, "report", "--run", second, "--db", db, "--format", "md-summary", "-o", "-"
    )
    assert code == 0, err
    assert "**Pass rate 50.0 % [15.7, 84.3] n=8**" in out and "4 passed, 3 failed, 1 without a verdict" in out
    assert "❌ gate failed" in out and "pass rate 50.0% < `min_pass_rate` 60.0%" in out
    assert f"Changed since run `{first}`:** 2 cases (1 no longer pass)" in out
    assert "| hours-1 | pass | fail |" in out and "| gf-1 | fail | pass |" in out
    assert not out.rstrip().endswith("wrote -")
    # --compare names the baseline; the summary is the same, and -o writes the file.
    code, _, err = run_cli(
        monkeypatch, capsys, "report", "--compare", first, second, "--db", db, "--format", "md-summary",
        "-o", str(tmp_path / "c.md"),
    )  # fmt: skip
    assert code == 0, err
    assert (tmp_path / "c.md").read_text() == out
    # The first run has no earlier run to compare with.
    code, out, _ = run_cli(
        monkeypatch, capsys, "report", "--run", first, "--db", db, "--format", "md-summary", "-o", "-"
    )
    assert code == 0 and "No earlier run of this eval" in out and "❌ gate failed" in out


def test_md_summary_is_for_runs_only(tmp_path, monkeypatch, capsys):
    calibration = tmp_path / "c.json"
    calibration.write_text("{}")
    code, _, err = run_cli(monkeypatch, capsys, "report", str(calibration), "--format", "md-summary")
    assert code == 2 and "--run" in err
