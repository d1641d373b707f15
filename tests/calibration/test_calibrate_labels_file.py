"""--labels replaces the items' own votes (and says so); labels on unknown ids are reported; no items is an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_helpers import run_cli, write_jsonl
from juge.cli import app


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """8 dev pairs with 3 votes each inside the items, and one judge's calls in both orders."""
    items = [
        {
            "item_id": f"i{k}",
            "question_id": k,
            "category": "writing",
            "split": "dev",
            "question": "q",
            "answer_1": "a",
            "answer_2": "bb",
            "reference": None,
            "human_ratings": [{"rater_id": f"r{n}", "label": "A"} for n in range(3)],
        }
        for k in range(8)
    ]
    calls = [
        {
            "item_id": f"i{k}",
            "judge": "j",
            "model": "m",
            "prompt": "p",
            "order": o,
            "letter": letter,
            "outcome": "ok",
            "text": "x",
        }
        for k in range(8)
        for o, letter in (("12", "A"), ("21", "B"))
    ]
    return {
        "items": write_jsonl(tmp_path / "items.jsonl", items),
        "judgments": write_jsonl(tmp_path / "judgments.jsonl", calls),
        "tmp": tmp_path,
    }


def test_labels_replace_the_items_votes_and_unknown_ids_are_reported(files, monkeypatch, capsys) -> None:
    labels = [{"item_id": f"i{k}", "rater_id": "me", "label": "B"} for k in range(4)]
    labels += [{"item_id": f"ghost{k}", "rater_id": "me", "label": "B"} for k in range(5)]
    path = write_jsonl(files["tmp"] / "labels.jsonl", labels)
    out_json = files["tmp"] / "cal.json"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "calibrate",
        "--items",
        str(files["items"]),
        "--judgments",
        str(files["judgments"]),
        "--labels",
        str(path),
        "--resamples",
        "20",
        "--json",
        str(out_json),
    )
    assert code == 0, err
    result = json.loads(out_json.read_text())
    assert (result["n_items"], result["n_votes"], result["n_raters"]) == (4, 4, 1)  # the items' 24 votes are gone
    assert any("its 9 labels replace the 24 human votes carried by the items" in n for n in result["notes"])
    assert any("5 labels on 5 item ids that match no item" in n and "'ghost0'" in n for n in result["notes"])
    assert "replace the 24 human votes" in out and "match no item" in out


def test_labels_matching_no_item_exit_2_naming_the_file(files, monkeypatch, capsys) -> None:
    path = write_jsonl(files["tmp"] / "stray.jsonl", [{"item_id": "ghost", "rater_id": "me", "label": "A"}])
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "calibrate",
        "--items",
        str(files["items"]),
        "--judgments",
        str(files["judgments"]),
        "--labels",
        str(path),
        "--resamples",
        "20",
    )
    assert code == 2
    assert "stray.jsonl: field 'item_id': no label's item_id matches an item" in " ".join(err.split())


def test_a_study_with_no_labelled_item_in_the_split_exits_2(files, monkeypatch, capsys) -> None:
    items = [json.loads(line) for line in files["items"].read_text().splitlines()]
    for row in items[:4]:
        row["split"] = "holdout"
    for row in items[4:]:
        row["human_ratings"] = []
    write_jsonl(files["items"], items)
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "calibrate",
        "--items",
        str(files["items"]),
        "--judgments",
        str(files["judgments"]),
        "--split",
        "dev",
        "--resamples",
        "20",
    )
    assert code == 2, out
    assert "nothing to study: no item in split 'dev' has a human label" in " ".join(err.split())


def test_policy_derive_says_the_labels_replace_the_items_votes(files) -> None:
    labels = [{"item_id": f"i{k}", "rater_id": f"p{n}", "label": "A"} for k in range(8) for n in range(2)]
    path = write_jsonl(files["tmp"] / "labels.jsonl", labels)
    tmp = files["tmp"]
    result = CliRunner().invoke(
        app,
        [
            "policy",
            "derive",
            "--items",
            str(files["items"]),
            "--judgments",
            str(files["judgments"]),
            "--labels",
            str(path),
            "--db",
            str(tmp / "j.db"),
            "-o",
            str(tmp / "P.md"),
            "--json",
            str(tmp / "p.json"),
            "--resamples",
            "100",
        ],
        env={"COLUMNS": "300"},
    )
    assert result.exit_code == 0, result.output
    assert "its 16 labels replace the 24 human votes carried by the items" in result.output
    assert json.loads((tmp / "p.json").read_text())["dev"]["n_items"] == 8
