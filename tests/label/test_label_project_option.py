"""The labelling project is named the same way on every command: positionally or with -p/--project."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from juge.cli import app
from label_helpers import pair_case, write_cases, write_rubric

runner = CliRunner()


def test_positional_and_dash_p_name_the_same_project(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'juge.db'}"
    cases = write_cases(tmp_path / "cases.jsonl", [pair_case(i) for i in range(6)])
    rubric = write_rubric(tmp_path / "rubric.toml")

    def juge(*args: str):  # noqa: ANN202
        return runner.invoke(app, ["label", *args, "--db-url", db])

    for name in ("one", "two"):
        init = juge("init", "--cases", str(cases), "--task", "pairwise", "--rubric", str(rubric), "--name", name)
        assert init.exit_code == 0, init.output
    assert juge("add-rater", "alice", "-p", "two").exit_code == 0
    positional, option = juge("status", "two"), juge("status", "-p", "two")
    assert positional.exit_code == option.exit_code == 0
    assert positional.output == option.output and "alice" in option.output
    assert "alice" not in juge("status", "--project", "one").output
    assert juge("status", "one", "-p", "two").exit_code != 0  # two different names: refused
    for args in (("export", "two"), ("export", "-p", "two")):
        out = tmp_path / f"{len(args)}.jsonl"
        result = juge(*args, "-o", str(out))
        assert result.exit_code == 0, result.output
    assert (tmp_path / "2.jsonl").read_text() == (tmp_path / "3.jsonl").read_text()
    assert juge("disagreements", "-p", "two").exit_code == 0
    figures = json.loads(juge("status", "-p", "two", "--json", "-").output)
    assert figures["project"] == "two" and [r["rater"] for r in figures["raters"]] == ["alice"]
    assert juge("release", "-p", "two", "--dry-run").exit_code == 0
