"""`juge tune` end to end offline with the local llama.cpp judge (Gemma 3 270M) on the embedded
sample: the path works (calls through the engine, figures, files). A 270M base model is a weak
judge; the test asserts the mechanics, not its quality."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from juge.cli import app

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.needs("local_model")
def test_tune_runs_offline_with_the_local_model_on_the_sample(tmp_path):
    out = tmp_path / "tuned"
    args = ["tune", "--judge", str(REPO / "examples" / "tune" / "local-pairwise.toml"),
            "--items", str(REPO / "src" / "juge" / "demo_data" / "items.jsonl"), "--out", str(out),
            "--limit", "4", "--folds", "2", "--shots", "2", "--candidates", "as-given,fewshot-2",
            "--concurrency", "1", "--resamples", "200", "--no-progress", "--db", str(tmp_path / "j.db")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    data = json.loads((out / "tuning.json").read_text())
    assert {c["name"] for c in data["candidates"]} == {"as-given", "fewshot-2"}
    assert all(c["calls"] > 0 for c in data["candidates"])
    assert data["chosen"] in {"as-given", "fewshot-2"}
    assert data["out_of_fold"]["n"] == data["in_sample"]["n"] > 0
    again = CliRunner().invoke(app, args)  # served from the cache: same figures
    assert again.exit_code == 0 and json.loads((out / "tuning.json").read_text())["out_of_fold"] == data["out_of_fold"]
