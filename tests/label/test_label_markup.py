"""Project and rater names are data: `juge label` prints them literally, never as rich markup."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from juge.cli import app
from label_helpers import pair_case, write_cases, write_rubric


def test_label_commands_print_names_with_markup_literally(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'juge.db'}"
    cases = write_cases(tmp_path / "cases.jsonl", [pair_case(i) for i in range(6)])
    rubric = write_rubric(tmp_path / "rubric.toml")
    runner = CliRunner()

    def juge(*args: str):  # noqa: ANN202
        return runner.invoke(app, ["label", *args, "--db-url", db], env={"COLUMNS": "200"})

    result = juge("init", "--cases", str(cases), "--task", "pairwise", "--rubric", str(rubric), "--name", "q[/]x")
    assert result.exit_code == 0, result.output
    assert "project q[/]x:" in result.output
    for rater in ("al[/]ice", "[bold]bob"):
        result = juge("add-rater", rater, "-p", "q[/]x")
        assert result.exit_code == 0, result.output
        assert f"Rater {rater} added to q[/]x" in result.output
    result = juge("status", "q[/]x")
    assert result.exit_code == 0, result.output
    assert "q[/]x (pairwise)" in result.output and "[bold]bob" in result.output and "al[/]ice" in result.output
