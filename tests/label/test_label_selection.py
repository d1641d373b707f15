"""juge label init --select random|stratified --budget N: which items to label, each one's chance recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import juge
from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
from juge.data.records import Case
from juge.errors import InputError
from juge.label.db import LabelStore
from juge.label.selection import allocate, select_cases
from label_helpers import write_cases, write_rubric


def cases_by_category(sizes: dict[str, int]) -> list[Case]:
    return [Case(id=f"{cat}-{k}", question="q", output="o", category=cat) for cat, n in sizes.items() for k in range(n)]


def test_allocation_is_proportional_with_two_per_category_while_the_budget_lasts():
    assert allocate({"a": 50, "b": 30, "c": 20}, 10) == {"a": 5, "b": 3, "c": 2}
    # Proportional would give c none: it gets its 2 (stratified PPI++ needs 2 labels a stratum), a pays.
    assert allocate({"a": 97, "b": 2, "c": 1}, 10) == {"a": 7, "b": 2, "c": 1}
    assert allocate({"a": 5, "b": 5}, 10) == {"a": 5, "b": 5}
    assert sum(allocate({"a": 7, "b": 11, "c": 13}, 17).values()) == 17


def test_select_cases_records_each_item_s_probability():
    cases = cases_by_category({"coding": 60, "writing": 30, "math": 10})
    picked, selection = select_cases(cases, method="stratified", budget=20, seed=3)
    assert len(picked) == 20
    rows = {s.stratum: s for s in selection.strata}
    assert {k: (s.selected, s.population) for k, s in rows.items()} == {
        "coding": (12, 60),
        "math": (2, 10),
        "writing": (6, 30),
    }
    for case in picked:
        recorded = case.meta["juge_selection"]
        assert recorded["stratum"] == case.category and recorded["method"] == "stratified"
        assert recorded["probability"] == pytest.approx(rows[case.category].selected / rows[case.category].population)
    picked, selection = select_cases(cases, method="random", budget=25, seed=3)
    assert {c.meta["juge_selection"]["probability"] for c in picked} == {0.25}
    assert [(s.stratum, s.selected) for s in selection.strata] == [("(all)", 25)]
    with pytest.raises(InputError, match="--budget"):
        select_cases(cases, method="random", budget=101)
    with pytest.raises(InputError, match="--select"):
        select_cases(cases, method="decisive", budget=5)


def test_label_init_select_stores_only_the_drawn_items_with_their_chance(tmp_path: Path):
    db_url = f"sqlite:///{tmp_path / 'labels.db'}"
    cases = write_cases(tmp_path / "cases.jsonl", cases_by_category({"coding": 40, "writing": 20}))
    rubric = write_rubric(tmp_path / "rubric.toml")
    made = juge.label_init(
        "sel", cases=cases, task="passfail", rubric=rubric, db_url=db_url, select="stratified", budget=12
    )
    assert made.items == 12 and made.selection is not None and made.selection.population == 60
    store = LabelStore(db_url)
    table = store.item_table(store.project("sel"))
    store.close()
    assert len(table) == 12
    chances = {json.loads(r["record"])["meta"]["juge_selection"]["probability"] for r in table}
    assert chances == {8 / 40, 4 / 20}
    runner = CliRunner()
    res = runner.invoke(
        app,
        ["label", "init", "two", "--cases", str(cases), "--task", "passfail", "--rubric", str(rubric),
         "--db-url", db_url, "--select", "random", "--budget", "6", "--json", "-"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["items"] == 6 and out["selection"]["strata"][0]["probability"] == 0.1
    res = runner.invoke(
        app,
        ["label", "init", "three", "--cases", str(cases), "--task", "passfail", "--rubric", str(rubric),
         "--db-url", db_url, "--select", "random"],
    )  # fmt: skip
    assert res.exit_code == 2 and "--budget" in res.output
