"""Policy derive flags categories whose figures rest on few data, says how to make a split, and says plainly
that policies are for pairwise judges."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
from cli_helpers import write_jsonl
from juge.data.records import Case, Judgment
from juge.policy.decision import MIN_PAIRS, TOO_FEW
from juge.store import Store


def juge(*args) -> object:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "300"})


def item(k: int, category: str, split: str | None = "dev") -> dict:
    row = {
        "item_id": f"{category}{k}",
        "question_id": k,
        "category": category,
        "question": "q",
        "answer_1": "a",
        "answer_2": "bb",
        "reference": None,
        "human_ratings": [{"rater_id": "r1", "label": "A"}, {"rater_id": "r2", "label": "A"}],
    }
    return row if split is None else {**row, "split": split}


def calls(rows: list[dict]) -> list[dict]:
    return [
        {
            "item_id": r["item_id"],
            "judge": "strong",
            "model": "m",
            "prompt": "p",
            "order": o,
            "letter": "A" if o == "12" else "B",
            "outcome": "ok",
            "text": "x",
        }
        for r in rows
        for o in ("12", "21")
    ]


def test_a_category_on_few_pairs_goes_to_a_person_everywhere(tmp_path: Path) -> None:
    # 'big': 40 items x 1 rater pair = 40 person pairs (not flagged); 'small': 4 items = 4 pairs (flagged).
    rows = [item(k, "big") for k in range(40)] + [item(k, "small") for k in range(4)]
    items = write_jsonl(tmp_path / "items.jsonl", rows)
    judgments = write_jsonl(tmp_path / "j.jsonl", calls(rows))
    res = juge(
        "policy",
        "derive",
        "--items",
        items,
        "--judgments",
        judgments,
        "--db",
        tmp_path / "j.db",
        "-o",
        tmp_path / "P.md",
        "--json",
        tmp_path / "p.json",
        "--resamples",
        "100",
    )
    assert res.exit_code == 0, res.output
    cats = json.loads((tmp_path / "p.json").read_text())["categories"]
    assert cats["big"]["too_few"] is None and cats["big"]["ceiling"]["n"] >= MIN_PAIRS
    assert "person vs person on 4 pairs (< 30)" in cats["small"]["too_few"]
    assert "4 judged items (< 10)" in cats["small"]["too_few"]
    # Full agreement is within the margin in both, but 'small' has too few items to decide: a person (issue 23).
    assert cats["small"]["by_figures"] == cats["big"]["by_figures"] == "judge"
    assert (cats["small"]["decision"], cats["small"]["ruling"]) == ("person", "too_few")
    assert (cats["big"]["decision"], cats["big"]["ruling"]) == ("judge", "judge")
    md = (tmp_path / "P.md").read_text()
    small_row = next(line for line in md.splitlines() if line.startswith("| small |"))
    big_row = next(line for line in md.splitlines() if line.startswith("| big |"))
    assert TOO_FEW in small_row and TOO_FEW not in big_row
    assert "**person**" in small_row and "**judge**" in big_row
    assert "- The judge decides alone in: big." in md and "- A person decides in: small." in md
    text = " ".join(res.output.split())
    assert f"warning: category small: {TOO_FEW}" in text and "category big:" not in text


def test_items_without_split_say_how_to_make_one(tmp_path: Path) -> None:
    rows = [item(k, "big", split=None) for k in range(12)]
    res = juge(
        "policy",
        "derive",
        "--items",
        write_jsonl(tmp_path / "items.jsonl", rows),
        "--judgments",
        write_jsonl(tmp_path / "j.jsonl", calls(rows)),
        "--db",
        tmp_path / "j.db",
        "-o",
        tmp_path / "P.md",
        "--json",
        tmp_path / "p.json",
    )
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert "no item has a `split` field" in text
    assert "juge split --items FILE --by group --holdout 0.3 --seed 0 -o FILE_WITH_SPLIT" in text
    assert not (tmp_path / "p.json").exists()


def test_a_pass_fail_run_without_a_split_is_refused_plainly(tmp_path: Path) -> None:
    """PASS/FAIL judges get policies now; a run of cases with no split still cannot give one, and says how."""
    db = tmp_path / "j.db"
    with Store(db) as store:
        store.create_run(
            dataset_hash="h",
            juge_version="t",
            run_id="pf",
            cases=[Case(id=f"c{k}", question="q", output="o") for k in range(3)],
        )
        for k in range(3):
            store.save_judgment(
                "pf",
                Judgment(
                    item_id=f"c{k}", judge="g", model="m", template="t", text="PASS", verdict="PASS", outcome="ok"
                ),
            )
    labels = write_jsonl(
        tmp_path / "l.jsonl", [{"item_id": f"c{k}", "rater_id": "r", "label": "fail"} for k in range(3)]
    )
    res = juge(
        "policy",
        "derive",
        "--run",
        "pf",
        "--labels",
        labels,
        "--db",
        db,
        "-o",
        tmp_path / "P.md",
        "--json",
        tmp_path / "p.json",
    )
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert "no item has a `split` field" in text and "juge split" in text and "is not one of" not in text
