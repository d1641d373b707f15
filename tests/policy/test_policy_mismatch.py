"""An item or a run without the policy's judge is said plainly: route names the judge, audit-sample exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
from cli_helpers import write_jsonl
from juge.data.records import Case, Judgment
from juge.store import Store

runner = CliRunner()


def juge(*args) -> object:
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "300"})


def item(k: int) -> dict:
    return {
        "item_id": f"i{k}",
        "question_id": k,
        "category": "writing",
        "split": "dev" if k < 12 else "holdout",
        "question": "q",
        "answer_1": "a",
        "answer_2": "bb",
        "reference": None,
        "human_ratings": [{"rater_id": "r1", "label": "A"}, {"rater_id": "r2", "label": "A"}],
    }


def call(k: int, judge: str, order: str) -> dict:
    return {
        "item_id": f"i{k}",
        "judge": judge,
        "model": "m",
        "prompt": "p",
        "order": order,
        "letter": "A" if order == "12" else "B",
        "outcome": "ok",
        "text": "x",
    }


@pytest.fixture
def policy(tmp_path: Path) -> Path:
    items = write_jsonl(tmp_path / "items.jsonl", [item(k) for k in range(16)])
    calls = write_jsonl(tmp_path / "judgments.jsonl", [call(k, "strong", o) for k in range(16) for o in ("12", "21")])
    path = tmp_path / "policy.json"
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
        path,
        "--resamples",
        "100",
    )
    assert res.exit_code == 0, res.output
    return path


def test_route_names_the_policys_judge_when_the_item_was_judged_by_another(policy: Path, tmp_path: Path) -> None:
    path = tmp_path / "item.json"
    path.write_text(json.dumps(dict(item(13), judgments=[call(13, "small", o) for o in ("12", "21")])))
    res = juge("route", "--policy", policy, "--item", path)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert text.startswith("person:")
    assert (
        "no judgment from the policy's judge 'strong' with template 'p': it was judged only by 'small' with "
        "template 'p'"
    ) in text
    path.write_text(json.dumps(item(14)))
    text = " ".join(juge("route", "--policy", policy, "--item", path).output.split())
    assert "no judgment from the policy's judge 'strong' with template 'p': it carries no judgment at all" in text


def test_audit_sample_of_a_run_without_the_policys_judge_exits_2(policy: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with Store(db) as store:
        cases = [Case(id=f"i{k}", category="writing", question="q", output_1="a", output_2="bb") for k in range(4)]
        run_id = store.create_run(dataset_hash="h", juge_version="t", cases=cases, run_id="other-run")
        for k in range(4):
            for order in ("12", "21"):
                store.save_judgment(
                    run_id,
                    Judgment(
                        item_id=f"i{k}",
                        judge="small",
                        model="m",
                        template="p",
                        order=order,
                        text="x",
                        verdict="A",
                        outcome="ok",
                    ),
                )
    res = juge("audit-sample", "--policy", policy, "--run", "other-run", "--db", db, "--seed", "1")
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "run other-run has no judgment from the policy's judge strong/p" in text
    assert "the run's judges are small/p" in text
