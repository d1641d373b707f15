"""`juge policy derive` refuses a guarantee target or confidence outside (0, 1) with exit 2, before reading inputs."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2


@pytest.mark.parametrize(
    "option, value", [("--target", "2"), ("--target", "0"), ("--confidence", "1"), ("--confidence", "-0.5")]
)
def test_derive_refuses_a_share_outside_0_1(tmp_path, option: str, value: str) -> None:
    result = CliRunner().invoke(
        app,
        [
            "policy",
            "derive",
            "--rule",
            "guarantee",
            option,
            value,
            "--items",
            str(tmp_path / "none.jsonl"),
            "--judgments",
            str(tmp_path / "none.jsonl"),
        ],
        env={"COLUMNS": "300"},
    )
    assert result.exit_code == 2, result.output
    assert f"{option} must be a share strictly between 0 and 1" in result.output
