"""`juge.split` from Python: a dev/holdout split by group, its counts typed; what `juge split --json` writes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import jsonschema
import pytest

import juge
from cli_helpers import run_cli, write_jsonl

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "schema" / "split.json").read_text("utf-8"))


def _items(tmp_path: Path) -> Path:
    # 10 groups of 1 to 7 rows each: a split by rows would not keep the groups whole.
    rows = [{"id": f"i{g}-{k}", "question_id": g, "output": "x"} for g in range(10) for k in range(1 + g % 7)]
    return write_jsonl(tmp_path / "items.jsonl", rows)


def test_split_from_python_equals_the_cli_json(tmp_path, monkeypatch, capsys):
    items = _items(tmp_path)
    code, out, err = run_cli(
        monkeypatch, capsys, "split", "--items", str(items), "-o", str(tmp_path / "cli.jsonl"),
        "--by", "question_id", "--holdout", "0.3", "--seed", "7", "--json", "-",
    )  # fmt: skip
    assert code == 0, err
    written = json.loads(out)
    jsonschema.validate(written, SCHEMA)
    result = juge.split(items, tmp_path / "api.jsonl", by="question_id", holdout=0.3, seed=7)
    assert isinstance(result, juge.SplitResult)
    assert {**result.to_dict(), "path": None} == {**written, "path": None}
    assert (tmp_path / "api.jsonl").read_text() == (tmp_path / "cli.jsonl").read_text()

    rows = [json.loads(line) for line in (tmp_path / "api.jsonl").read_text().splitlines()]
    sides = {side: [r for r in rows if r["split"] == side] for side in ("dev", "holdout")}
    assert len(rows) == sum(1 + g % 7 for g in range(10)) == result.dev.rows + result.holdout.rows
    for side, kept in sides.items():
        assert len(kept) == getattr(result, side).rows
        assert len({r["question_id"] for r in kept}) == getattr(result, side).groups
    assert not {r["question_id"] for r in sides["dev"]} & {r["question_id"] for r in sides["holdout"]}
    assert result.dev.groups + result.holdout.groups == 10 and result.holdout.groups > 0

    # A CSV keeps its format; the same seed gives the same sides.
    table = tmp_path / "items.csv"
    with table.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["id", "question_id", "output"])
        writer.writeheader()
        writer.writerows({k: r[k] for k in ("id", "question_id", "output")} for r in rows)
    again = juge.split(table, tmp_path / "split.csv", by="question_id", holdout=0.3, seed=7)
    assert (again.dev, again.holdout) == (result.dev, result.holdout)
    with (tmp_path / "split.csv").open(newline="") as f:
        assert {r["id"]: r["split"] for r in csv.DictReader(f)} == {r["id"]: r["split"] for r in rows}


def test_split_refuses_bad_input_and_writes_nothing(tmp_path):
    items = _items(tmp_path)
    out = tmp_path / "out.jsonl"
    for bad in (
        {"holdout": 1.0},
        {"holdout": 0.0},
        {"by": "missing_field"},
    ):
        with pytest.raises(juge.InputError):
            juge.split(items, out, **bad)
        assert not out.exists()
    with pytest.raises(juge.InputError):
        juge.split(items, items)  # over its input
    with pytest.raises(juge.InputError):
        juge.split(items, tmp_path / "out.csv", by="question_id")  # another format
    done = tmp_path / "done.jsonl"
    juge.split(items, done, by="question_id")
    with pytest.raises(juge.InputError):
        juge.split(done, out, by="question_id")  # already split
    assert not out.exists()
    assert juge.split(done, out, by="question_id", force=True).path == str(out)
