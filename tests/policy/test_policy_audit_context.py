"""audit-sample shows the item's context (the facts a verdict rests on) next to the question and answers."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli_helpers import write_jsonl
from juge.cli import app
from juge.data.records import Case, Judgment
from juge.store import Store


def juge(*args) -> object:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "300"})


def item(k: int) -> dict:
    return {
        "item_id": f"i{k}",
        "question_id": k,
        "category": "writing",
        "split": "dev" if k < 32 else "holdout",  # 32 dev pairs: enough to decide (juge.policy.decision)
        "question": "q",
        "answer_1": "a",
        "answer_2": "bb",
        "reference": None,
        "human_ratings": [{"rater_id": "r1", "label": "A"}, {"rater_id": "r2", "label": "A"}],
    }


def test_audit_sample_prints_and_saves_the_context(tmp_path: Path) -> None:
    items = write_jsonl(tmp_path / "items.jsonl", [item(k) for k in range(36)])
    calls = write_jsonl(
        tmp_path / "judgments.jsonl",
        [
            {
                "item_id": f"i{k}",
                "judge": "strong",
                "model": "m",
                "prompt": "p",
                "order": o,
                "letter": "A" if o == "12" else "B",
                "outcome": "ok",
                "text": "x",
            }
            for k in range(36)
            for o in ("12", "21")
        ],
    )
    policy = tmp_path / "policy.json"
    res = juge(
        "policy",
        "derive",
        "--items",
        items,
        "--judgments",
        calls,
        "--db",
        tmp_path / "j.db",
        "-o",
        tmp_path / "P.md",
        "--json",
        policy,
        "--resamples",
        "100",
    )
    assert res.exit_code == 0, res.output
    db = tmp_path / "runs.db"
    context = "Plan Pro costs <b>$5</b> per month."
    with Store(db) as store:
        cases = [
            Case(
                id=f"i{k}",
                category="writing",
                question="q",
                output_1="a",
                output_2="bb",
                context=context if k == 0 else None,
            )
            for k in range(2)
        ]
        store.create_run(dataset_hash="h", juge_version="t", cases=cases, run_id="r")
        for k in range(2):
            for order, letter in (("12", "A"), ("21", "B")):
                store.save_judgment(
                    "r",
                    Judgment(
                        item_id=f"i{k}",
                        judge="strong",
                        model="m",
                        template="p",
                        order=order,
                        text="x",
                        verdict=letter,
                        outcome="ok",
                    ),
                )
    res = juge(
        "audit-sample",
        "--policy",
        policy,
        "--run",
        "r",
        "--db",
        db,
        "-n",
        "2",
        "--seed",
        "1",
        "--json",
        tmp_path / "a.json",
    )
    assert res.exit_code == 0, res.output
    assert res.output.count("context: ") == 1 and f"context: {context}" in res.output
    sample = {s["item_id"]: s for s in json.loads((tmp_path / "a.json").read_text())["sample"]}
    assert sample["i0"]["context"] == context and sample["i1"]["context"] is None
