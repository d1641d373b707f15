"""Deriving a policy on the holdout split is refused unless --force-split; testing on the derivation items is refused
with a message that says why."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
from cli_helpers import tiny_pairwise_study


def test_derive_on_holdout_needs_force_split_and_test_messages_agree(tmp_path: Path) -> None:
    common = tiny_pairwise_study(tmp_path)
    runner = CliRunner()
    derive = [
        "policy",
        "derive",
        *common,
        "--split",
        "holdout",
        "-o",
        str(tmp_path / "P.md"),
        "--json",
        str(tmp_path / "p.json"),
    ]
    result = runner.invoke(app, derive, env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert "--split holdout: the holdout split is kept for the one final `juge policy test`" in result.output
    assert not (tmp_path / "p.json").exists()
    result = runner.invoke(app, [*derive, "--force-split"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "with a split other than holdout" in result.output
    result = runner.invoke(
        app, ["policy", "test", "--policy", str(tmp_path / "p.json"), *common], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "derived on these very items (split 'holdout')" in text and "test it on the holdout split" not in text
    result = runner.invoke(
        app, ["policy", "test", "--policy", str(tmp_path / "p.json"), *common, "--split", "dev"], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 0, result.output
