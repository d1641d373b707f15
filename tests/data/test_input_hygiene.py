"""Hostile input files: duplicate keys and headers, ids that only look alike, huge numbers, deep nesting."""

from __future__ import annotations

import json
import unicodedata

import pytest

from cli_helpers import run_cli, write_jsonl
from juge.data.adapters import iter_recorded_calls, read_label_rows
from juge.data.readers import MAX_DEPTH, read_cases
from juge.data.records import MAX_ID_LENGTH, Case, HumanLabel
from juge.errors import InputError


def error_of(fn, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as exc:
        fn(*args, **kwargs)
    return exc.value


def test_a_duplicate_json_key_names_file_line_and_key(tmp_path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "output": "x"}\n{"id": "b", "output": "good", "output": "bad"}\n', encoding="utf-8")
    exc = error_of(read_cases, path)
    assert (exc.path, exc.line, exc.field) == (str(path), 2, "output")


def test_a_duplicate_key_in_a_nested_object_and_in_recorded_calls(tmp_path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "output": "x", "meta": {"k": 1, "k": 2}}\n', encoding="utf-8")
    assert error_of(read_cases, path).field == "k"
    calls = tmp_path / "judgments.jsonl"
    row = '{"item_id": "a", "judge": "j", "model": "m", "prompt": "p", "outcome": "ok", "letter": "PASS", "text": "t"'
    calls.write_text(row + ', "letter": "FAIL"}\n', encoding="utf-8")
    exc = error_of(lambda: list(iter_recorded_calls(calls)))
    assert (exc.line, exc.field) == (1, "letter")


def test_a_string_holding_quote_colon_is_not_a_duplicate(tmp_path) -> None:
    path = write_jsonl(tmp_path / "cases.jsonl", [{"id": "a", "output": 'he said "x": yes', "question": 'a": b'}])
    assert read_cases(path)[0].output == 'he said "x": yes'


def test_two_csv_columns_of_one_name_are_an_error(tmp_path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text("id,output,question,output\na,good,q,bad\n", encoding="utf-8")
    exc = error_of(read_cases, path)
    assert (exc.line, exc.field) == (1, "output")


def test_ids_are_nfc_normalised_so_look_alike_ids_collide(tmp_path) -> None:
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    assert Case(id=decomposed, output="x").id == composed == unicodedata.normalize("NFC", decomposed)
    path = write_jsonl(tmp_path / "cases.jsonl", [{"id": composed, "output": "x"}, {"id": decomposed, "output": "y"}])
    exc = error_of(read_cases, path)
    assert (exc.line, exc.field) == (2, "id") and "duplicate" in str(exc)
    assert HumanLabel(item_id=decomposed, rater_id="r", label="PASS").item_id == composed


@pytest.mark.parametrize(
    "bad_id",
    [
        "a ",
        " a",
        "a\n",
        "line\nbreak",
        "tab\there",
        "nul\x00",
        "zero\u200bwidth",
        "rtl\u202eid",
        "x" * (MAX_ID_LENGTH + 1),
    ],
)
def test_ids_with_spaces_at_the_ends_controls_or_too_long_are_refused(tmp_path, bad_id: str) -> None:
    path = write_jsonl(tmp_path / "cases.jsonl", [{"id": "ok", "output": "x"}, {"id": bad_id, "output": "y"}])
    exc = error_of(read_cases, path)
    assert (exc.line, exc.field) == (2, "id")
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"item_id": bad_id, "rater_id": "r", "label": "PASS"}])
    assert error_of(read_label_rows, labels, pairwise=False).line == 1


def test_a_5001_digit_numeric_id_is_an_error_not_a_traceback(tmp_path, monkeypatch, capsys) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": 1}\n{"id": ' + "7" * 5001 + ', "output": "x"}\n', encoding="utf-8")
    assert error_of(read_cases, path).line == 2
    code, out, err = run_cli(monkeypatch, capsys, "split", "--items", str(path), "-o", str(tmp_path / "o.jsonl"))
    assert code == 2 and "Traceback" not in err and f"{path}:2" in err


def test_100000_levels_of_nested_meta_are_an_error_not_a_traceback(tmp_path) -> None:
    path = tmp_path / "cases.jsonl"
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text('{"id": "a", "output": "x", "meta": {"k": ' + deep + "}}\n", encoding="utf-8")
    assert error_of(read_cases, path).line == 1


def test_nesting_up_to_the_limit_is_read_and_one_more_is_refused(tmp_path) -> None:
    def nested(levels: int) -> dict:
        value: object = 1
        for _ in range(levels - 1):  # the row itself is level 1
            value = {"k": value}
        return {"id": "a", "output": "x", "meta": value}

    path = write_jsonl(tmp_path / "ok.jsonl", [nested(MAX_DEPTH)])
    assert read_cases(path)[0].id == "a"
    path = write_jsonl(tmp_path / "deep.jsonl", [nested(MAX_DEPTH + 1)])
    exc = error_of(read_cases, path)
    assert (exc.line, exc.field) == (1, "meta")


def test_a_deep_json_cell_in_a_csv_is_an_error(tmp_path) -> None:
    path = tmp_path / "cases.csv"
    cell = json.dumps({"k": "[" * 5000}).replace('"', '""')
    path.write_text(f'id,output,meta\na,x,"{cell}"\nb,y,"' + "[" * 3000 + "]" * 3000 + '"\n', encoding="utf-8")
    exc = error_of(read_cases, path)
    assert exc.line == 3 and exc.field == "meta"
