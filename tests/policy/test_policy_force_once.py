"""A forced second holdout test prints its FORCED warning once."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from cli_helpers import tiny_pairwise_study
from juge.cli import app


def test_forced_holdout_test_warns_once(tmp_path: Path) -> None:
    common = tiny_pairwise_study(tmp_path)
    runner = CliRunner()
    policy = str(tmp_path / "p.json")
    assert (
        runner.invoke(app, ["policy", "derive", *common, "-o", str(tmp_path / "P.md"), "--json", policy]).exit_code == 0
    )
    assert runner.invoke(app, ["policy", "test", "--policy", policy, *common]).exit_code == 0
    forced = runner.invoke(app, ["policy", "test", "--policy", policy, *common, "--force"], env={"COLUMNS": "300"})
    assert forced.exit_code == 0, forced.output
    assert forced.output.count("FORCED") == 1
