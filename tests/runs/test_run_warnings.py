"""What a run warns about is in its result: `Run.warnings` (and its JSON), never printed by the library;
the CLI prints it from there."""

import json
from pathlib import Path

from typer.testing import CliRunner

import juge
from juge.cli import app


def same_family_eval(tmp_path: Path) -> Path:
    """An eval whose system under test (gpt-4o) and judge (gpt-4o-mini) share a model family."""
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "question": "Open on Sunday?"}\n')
    (tmp_path / "system.j2").write_text("Customer: {{ input }}")
    path = tmp_path / "eval.toml"
    path.write_text("""
cases = "cases.jsonl"
[system]
model = "gpt-4o"
template = "system.j2"
provider = { name = "scripted", options = { default = "Yes, nine to five." } }
[[judges]]
name = "pf"
setup = "passfail"
description = "Is it helpful?"
model = "gpt-4o-mini"
provider = "scripted"
provider_options = { default = "PASS\\nHelpful." }
""")
    return path


def test_the_same_family_warning_is_in_the_run_and_its_json(tmp_path, capsys) -> None:
    run = juge.run(same_family_eval(tmp_path), db=tmp_path / "j.db")
    [warning] = [w for w in run.warnings if "same family" in w]
    assert "'pf'" in warning and "gpt-4o" in warning
    assert warning in json.loads(run.model_dump_json())["warnings"]
    assert capsys.readouterr().err == ""  # the library printed nothing


def test_the_cli_prints_the_warnings_of_the_result(tmp_path, monkeypatch) -> None:
    path = same_family_eval(tmp_path)
    shown = juge.Run(run_id="r1", db="j.db", warnings=["a warning only the result carries"])
    real = juge.run(path, db=tmp_path / "j.db")
    monkeypatch.setattr("juge.runs.api.run", lambda *a, **k: shown.model_copy(update={"summary": real.summary}))
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(tmp_path / "j.db"), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "a warning only the result carries" in result.stderr
    assert "same family" not in result.stderr  # printed from the result, not while running
