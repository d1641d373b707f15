"""The public API takes lists and mappings, not the command line's text: one rule for every such argument.
A string there is a TypeError naming the argument (never read letter by letter, never a bare ValueError),
and errors raised to Python callers name the keyword, not only the CLI flag."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import juge
from cli_helpers import write_jsonl
from juge.errors import InputError

ROWS = [{"id": "a", "output": "x", "r1": "yes", "r2": "no"}, {"id": "b", "output": "y", "r1": "no", "r2": "no"}]
GOOD = {"label_cols": ["r1", "r2"], "scale": {"yes": "PASS", "no": "FAIL"}}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("label_cols", "r1,r2"),
        ("scale", "yes=PASS,no=FAIL"),
        ("judges", "gpt"),
        ("templates", "v1"),
        ("baseline_cols", "b1"),
        ("missing", "NA"),
        ("mapping", "output=output"),
        ("labels_map", "item_id=id"),
        ("criteria", "c=r1,r2"),
    ],
)
@pytest.mark.parametrize("function", ["calibrate", "calibration_inputs"])
def test_a_study_argument_as_cli_text_is_a_type_error_naming_it(function: str, name: str, text: str) -> None:
    with pytest.raises(TypeError) as caught:
        getattr(juge, function)(items=ROWS, **{**GOOD, name: text})
    assert re.match(rf"{name}\b", str(caught.value))


def test_the_same_study_with_a_list_and_a_dict_works() -> None:
    assert juge.calibrate(items=ROWS, **GOOD).ceiling is not None


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: juge.delete_runs("abc", db="none.db"), "run_ids"),
        (lambda: juge.dry_run(cases="c.jsonl", judges="j.toml"), "judges"),
        (lambda: juge.dry_run(cases="c.jsonl", judges=["j.toml"], mapping="id=ticket"), "mapping"),
        (lambda: juge.dry_run("eval.toml", only="a,b"), "only"),
        (lambda: juge.run("eval.toml", only="a,b"), "only"),
        (lambda: juge.probe_injection("judge.toml", kinds="ignore"), "kinds"),
    ],
)
def test_other_list_arguments_as_text_are_type_errors(call, name: str) -> None:
    with pytest.raises(TypeError) as caught:
        call()
    assert re.match(rf"{name}\b", str(caught.value))


def test_split_tells_a_python_caller_the_keyword(tmp_path: Path) -> None:
    items = write_jsonl(tmp_path / "items.jsonl", [{"id": "a", "group": "g", "output": "x", "split": "dev"}])
    with pytest.raises(InputError) as caught:
        juge.split(items, tmp_path / "out.jsonl")
    assert (caught.value.line, caught.value.field) == (1, "split")
    assert "force=True" in str(caught.value)
    assert juge.split(items, tmp_path / "out.jsonl", force=True).by == "group"
