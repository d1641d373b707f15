"""`juge route --eval` with a cascade whose first stage is a panel (issue 25), against the mock server: the panel's
members are called first, the strong judge only on the items the panel leaves, every call is stored, and a rerun
makes no request and gives the same routes."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

import juge
from juge.errors import InputError
from juge.judges.pairwise import combine_orders
from juge.store import Store
from juge.testing.mockserver import MockConfig, serve_in_thread


def _pairwise_judge(name: str) -> str:
    return f'[[judges]]\nname = "{name}"\nsetup = "pairwise"\nmodel = "mock-{name}"\ndescription = "Which is better?"\n'


def _eval(folder: Path, url: str) -> Path:
    path = folder / "eval.toml"
    judges = "".join(_pairwise_judge(n) for n in ("a", "b", "c", "strong"))
    path.write_text(
        f'cases = "cases.jsonl"\n[provider]\nname = "openai"\noptions = {{ base_url = "{url}" }}\n{judges}'
        '[[panels]]\nname = "jury"\nmembers = ["a", "b", "c"]\n',
        "utf-8",
    )
    return path


def _items(n: int, prefix: str, split: str = "dev") -> list[dict[str, str]]:
    return [
        {"id": f"{prefix}{k}", "group": f"{prefix}{k}", "split": split, "category": "general",
         "question": f"Question {prefix}{k}?",
         "output_1": f"First answer {prefix}{k}.", "output_2": f"Second answer {prefix}{k}."}
        for k in range(n)
    ]  # fmt: skip


def test_a_cascade_with_a_panel_stage_runs_live_and_a_rerun_costs_nothing(tmp_path):
    db, answers = tmp_path / "j.db", ("[[A]]", "[[B]]")
    dev = _items(160, "d")
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in dev), "utf-8")
    with serve_in_thread(MockConfig(answers=answers)) as server:
        eval_file = _eval(tmp_path, server.url)
        run = juge.run(eval_file, db=db)
        with Store(db) as store:
            letters: dict[tuple[str, str], dict[str, str | None]] = defaultdict(dict)
            for j in store.judgments(run.run_id):
                letters[(j.judge, j.item_id)][j.order or ""] = j.verdict
        verdict = {k: combine_orders(v.get("12"), v.get("21")) for k, v in letters.items()}  # type: ignore[arg-type]
        # People side with the panel where it is sure, else with the strong judge where it is, else call it a tie;
        # a wide margin lets both stages decide on the category rule (the guarantee is what this test walks).
        # The members answer at random, so few items have all three agreeing in both orders (the panel's
        # confidence 1): target 0.5 lets the walk accept that first step.
        labels = []
        for c in dev:
            mine = verdict[("jury", c["id"])]
            strong = verdict[("strong", c["id"])]
            label = mine if mine in ("A", "B") else strong if strong in ("A", "B") else "tie"
            labels += [{"item_id": c["id"], "rater_id": r, "label": label} for r in ("r1", "r2", "r3")]
        policy = juge.policy.derive(
            run=run.run_id, db=db, labels=labels, cascade="jury,strong", target=0.5, margin=0.5, resamples=20
        )
        assert [s.judge for s in policy.cascade.stages] == ["jury/majority", "strong/pairwise-v1"]
        assert policy.judges["jury/majority"].members == ["a/pairwise-v1", "b/pairwise-v1", "c/pairwise-v1"]
        path = tmp_path / "policy.json"
        path.write_text(json.dumps(policy.to_dict()), encoding="utf-8")

        new = _items(60, "n", "new")
        (tmp_path / "new.jsonl").write_text("".join(json.dumps(c) + "\n" for c in new), "utf-8")
        before = server.stats()["requests"]
        routed = juge.route(path, eval_file=eval_file, items=tmp_path / "new.jsonl", db=tmp_path / "r.db")
        first = server.stats()["requests"] - before
        by_stage = defaultdict(set)
        for d in routed.decisions:
            by_stage[d.stage].add(d.item_id)
        with Store(tmp_path / "r.db") as store:
            asked = [{(j.judge, j.item_id) for j in store.judgments(r)} for r in routed.runs]
        panel_items = {i for judge, i in asked[0] if judge == "jury"}
        assert panel_items == {c["id"] for c in new}  # the panel's members are asked about every item
        assert {judge for judge, _ in asked[0]} == {"a", "b", "c", "jury"}
        strong_items = {i for judge, i in asked[1]} if len(asked) > 1 else set()
        assert by_stage[1] and not strong_items & by_stage[1]  # what the panel decides never reaches the strong
        assert first == routed.calls == 2 * (3 * len(new) + len(strong_items))  # both orders, nothing else

        again = juge.route(path, eval_file=eval_file, items=tmp_path / "new.jsonl", db=tmp_path / "r.db")
        assert server.stats()["requests"] - before == first and again.calls == 0  # the rerun costs nothing
        assert [(d.item_id, d.route, d.stage, d.verdict) for d in again.decisions] == [
            (d.item_id, d.route, d.stage, d.verdict) for d in routed.decisions
        ]

        # A member's prompt changed: the panel is another version than the policy measured, refused before any call.
        eval_file.write_text(eval_file.read_text("utf-8").replace("Which is better?", "Which one is better?", 1))
        with pytest.raises(InputError, match=r"panels\[0\]\.members.*EXPIRED|EXPIRED.*panels\[0\]"):
            juge.route(path, eval_file=eval_file, items=tmp_path / "new.jsonl", db=tmp_path / "r.db")
        assert server.stats()["requests"] - before == first
