"""`--json -` writes the JSON to standard output on every command, alone (the tables go to stderr),
and never a file named '-'."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_helpers import run_cli
from juge.calibration.demo import demo_file

BAKERY = Path(__file__).resolve().parents[1] / "examples" / "bakery" / "eval.toml"


@pytest.fixture
def bakery_runs(tmp_path, monkeypatch, capsys) -> list[str]:
    monkeypatch.chdir(tmp_path)
    ids = []
    for extra in ([], ["--fresh"]):
        code, out, err = run_cli(monkeypatch, capsys, "run", str(BAKERY), "--no-progress", *extra)
        assert code == 0, err
        ids.append(re.search(r"run ([0-9a-f]{12}):", out).group(1))  # type: ignore[union-attr]
    return ids


def _commands(runs: list[str]) -> dict[str, list[str]]:
    items, judgments = str(demo_file("items.jsonl")), str(demo_file("judgments.jsonl"))
    return {
        "run": ["run", str(BAKERY), "--no-progress"],
        "runs": ["runs"],
        "compare": ["compare", *runs, "--resamples", "100"],
        "calibrate": ["calibrate", "--items", items, "--judgments", judgments, "--resamples", "20"],
        "demo": ["demo", "--out", "demo-out", "--resamples", "20"],
    }


@pytest.mark.parametrize("command", ["run", "runs", "compare", "calibrate", "demo"])
def test_json_dash_is_standard_output_alone(bakery_runs, tmp_path, monkeypatch, capsys, command) -> None:
    args = _commands(bakery_runs)[command]
    code, out, err = run_cli(monkeypatch, capsys, *args, "--json", "-")
    assert code == 0, err
    data = json.loads(out)  # nothing else on stdout
    assert isinstance(data, dict | list) and data
    assert not (tmp_path / "-").exists()
    if command == "calibrate":
        assert data["headline"] and data["ceiling"]["agreement"]["n"] > 0
        assert "wrote" not in out
