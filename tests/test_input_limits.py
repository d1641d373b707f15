"""Inputs at their limits (issue 27): a label of 1e308, Infinity or NaN is an error naming file, line and field;
TOML nested thousands deep is one line and exit 2, not a RecursionError; a byte order mark in TOML is read."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import juge
from cli_helpers import run_cli
from juge.config import load_eval
from juge.data.readers import read_labels
from juge.errors import MAX_TOML_DEPTH, InputError
from juge.judges.rubric import read_toml

sys.path.insert(0, str(Path(__file__).parent / "policy"))
from grade_data import SCORE_DEV, write_study  # noqa: E402


@pytest.mark.parametrize("value", ["1e308", "-1e308", "Infinity", "-Infinity", "NaN", "1000001"])
def test_a_label_that_is_no_point_of_a_scale_names_file_line_and_field(tmp_path, value) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"item_id": "a", "rater_id": "r", "label": 3}\n' + f'{{"item_id": "b", "rater_id": "r", "label": {value}}}\n'
    )
    with pytest.raises(InputError) as exc:
        read_labels(path)
    assert (exc.value.path, exc.value.line, exc.value.field) == (str(path), 2, "label")


@pytest.mark.parametrize("value", ["1e308", "Infinity", "inf", "-1e400"])
def test_calibrate_refuses_such_a_score_label_with_its_line(tmp_path, monkeypatch, capsys, value) -> None:
    items, labels, judgments = write_study(tmp_path / "s", SCORE_DEV)
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    rows[3]["label"] = value if value == "inf" else float(value)  # a CSV-like text, or a JSON number
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, _, err = run_cli(
        monkeypatch, capsys, "calibrate", "--items", str(items), "--labels", str(labels),
        "--judgments", str(judgments), "--resamples", "200",
    )  # fmt: skip
    assert code == 2, err
    assert f"{labels}:4" in err and "label" in err and len(err.strip().splitlines()) == 1
    assert "finite" in err or "beyond" in err
    with pytest.raises(InputError):
        juge.calibrate(items=items, labels=labels, judgments=judgments, resamples=200)


def test_calibrate_counts_a_nan_label_as_missing(tmp_path) -> None:
    """NaN is how a data frame writes an empty cell: one missing label, counted, never a score."""
    items, labels, judgments = write_study(tmp_path / "s", SCORE_DEV)
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    base = juge.calibrate(items=items, labels=labels, judgments=judgments, resamples=200)
    rows[3]["label"] = float("nan")
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    study = juge.calibrate(items=items, labels=labels, judgments=judgments, resamples=200)
    assert study.counts.missing_values == base.counts.missing_values + 1


def eval_text(tmp_path: Path, body: str) -> Path:
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "question": "q", "output": "x"}\n', encoding="utf-8")
    return tmp_path / "eval.toml"


@pytest.mark.parametrize("opening, closing", [("[", "]"), ("{a = ", "}")])
def test_toml_nested_thousands_deep_is_one_line_naming_the_file(tmp_path, monkeypatch, capsys, opening, closing):
    path = eval_text(tmp_path, "")
    deep = 5000
    path.write_text(f'cases = "cases.jsonl"\n\nx = {opening * deep}1{closing * deep}\n', encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_eval(path)
    assert exc.value.path == str(path) and exc.value.line == 3 and str(MAX_TOML_DEPTH) in str(exc.value)
    code, _, err = run_cli(monkeypatch, capsys, "run", str(path), "--dry-run")
    assert code == 2 and err.strip().startswith(f"error: {path}:3") and len(err.strip().splitlines()) == 1
    judge = tmp_path / "judge.toml"
    judge.write_text(f"name = [{'[' * deep}]]\n", encoding="utf-8")
    with pytest.raises(InputError, match="nested more than"):
        read_toml(judge)


def test_toml_nested_a_few_levels_or_with_brackets_in_strings_reads(tmp_path) -> None:
    path = tmp_path / "judge.toml"
    path.write_text('a = [[[1]]]\nb = "' + "[" * 200 + '"\n# ' + "{" * 200 + "\nc = '" + "[" * 100 + "'\n")
    assert read_toml(path)["a"] == [[[1]]] and read_toml(path)["b"] == "[" * 200


def test_a_byte_order_mark_in_toml_is_read_as_nothing(tmp_path) -> None:
    path = eval_text(tmp_path, "")
    path.write_bytes(b'\xef\xbb\xbfcases = "cases.jsonl"\n[provider]\nname = "scripted"\n')
    assert load_eval(path).spec.provider.name == "scripted"
    rubric = tmp_path / "rubric.toml"
    rubric.write_bytes(b'\xef\xbb\xbfdescription = "Polite?"\n')
    assert read_toml(rubric) == {"description": "Polite?"}
