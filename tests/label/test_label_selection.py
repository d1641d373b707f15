"""juge label init --select random|stratified --budget N: which items to label, each one's chance recorded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
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
    # The terminal's next step names the draw's file for estimate --selection, or says no file kept it.
    init = tmp_path / "init.json"
    res = runner.invoke(
        app,
        ["label", "init", "four", "--cases", str(cases), "--task", "passfail", "--rubric", str(rubric),
         "--db-url", db_url, "--select", "random", "--budget", "6", "--json", str(init)],
    )  # fmt: skip
    assert res.exit_code == 0 and json.loads(init.read_text())["selection"]["method"] == "random"
    assert f"--selection {init}" in " ".join(res.output.split()) and "(random, random)" not in res.output
    res = runner.invoke(
        app,
        ["label", "init", "five", "--cases", str(cases), "--task", "passfail", "--rubric", str(rubric),
         "--db-url", db_url, "--select", "random", "--budget", "6"],
    )  # fmt: skip
    assert res.exit_code == 0 and "--json FILE" in " ".join(res.output.split())


def store_run(path: Path, verdicts: dict[str, object], cases: list[Case], *, config: dict | None = None) -> Path:
    """A stored run: each case's single-answer verdict (PASS/FAIL or a score), or for a pair {order: letter}."""
    from juge.data.records import Judgment
    from juge.store import Store

    with Store(path) as store:
        store.create_run(dataset_hash="d", juge_version="t", run_id="r1", cases=cases, config=config)
        for item, verdict in verdicts.items():
            orders = verdict.items() if isinstance(verdict, dict) else [(None, verdict)]
            for order, v in orders:
                store.save_judgment(
                    "r1",
                    Judgment(item_id=item, judge="g", model="m", template="t", text=str(v), verdict=v, outcome="ok",
                             order=order),
                )  # fmt: skip
    return path


def test_allocation_follows_size_times_spread():
    assert allocate({"a": 100, "b": 100}, 20, {"a": 0.1, "b": 0.4}) == {"a": 4, "b": 16}
    # Equal spreads: proportional, as without them.
    assert allocate({"a": 50, "b": 30, "c": 20}, 10, {"a": 0.3, "b": 0.3, "c": 0.3}) == {"a": 5, "b": 3, "c": 2}
    # A category cannot take more than its cases: the rest goes to the next widest.
    assert allocate({"a": 5, "b": 100}, 30, {"a": 10.0, "b": 0.1}) == {"a": 5, "b": 25}


def test_stratified_with_a_run_allocates_by_the_spread_of_the_judge_s_verdicts(tmp_path: Path):
    from juge.runs.judge_signals import judge_signals

    # The judge passes every coding case (spread near 0) and half the writing ones (spread 0.5): equal sizes,
    # so Neyman gives writing the bulk; proportional would split 20/20.
    cases = cases_by_category({"coding": 100, "writing": 100})
    verdicts = {c.id: "PASS" if c.category == "coding" or int(c.id.split("-")[1]) % 2 else "FAIL" for c in cases}
    signals = judge_signals("r1", db=store_run(tmp_path / "j.db", verdicts, cases))
    picked, selection = select_cases(cases, method="stratified", budget=40, seed=1, signals=signals)
    rows = {s.stratum: s for s in selection.strata}
    assert selection.allocation == "neyman" and selection.run_id == "r1"
    assert rows["coding"].spread == pytest.approx(np.sqrt(101 / 102 * 1 / 102))
    assert rows["writing"].spread == pytest.approx(0.5)
    assert rows["coding"].spread_from == "judge verdicts"
    assert rows["writing"].selected > 3 * rows["coding"].selected and rows["coding"].selected >= 2
    assert sum(s.selected for s in selection.strata) == 40 == len(picked)
    for case in picked:  # each chance is its stratum's n_k / N_k, what stratified PPI++ weights by
        assert case.meta["juge_selection"]["probability"] == pytest.approx(rows[case.category].selected / 100)
    # Labels in hand (20 a category): the judge is right on every coding one, wrong on 8 of the writing ones.
    first = [c for c in cases if int(c.id.split("-")[1]) < 20]
    truth = {c.id: float((verdicts[c.id] == "PASS") != (c.category == "writing" and k < 8)) for k, c in
             enumerate(c for c in first if c.category == "writing")}  # fmt: skip
    truth |= {c.id: 1.0 for c in first if c.category == "coding"}
    _, with_labels = select_cases(cases, method="stratified", budget=40, seed=1, signals=signals, labels=truth)
    rows = {s.stratum: s for s in with_labels.strata}
    assert rows["coding"].spread_from == rows["writing"].spread_from == "labels"
    # No error seen in coding's 20 labels: the floor of one error in 22, not 0.
    assert rows["coding"].spread == pytest.approx(np.sqrt(1 / 22 * 21 / 22))
    assert rows["writing"].spread > 1.5 * rows["coding"].spread
    # Without a run: in proportion to size, and said so.
    _, plain = select_cases(cases, method="stratified", budget=40, seed=1)
    assert plain.allocation == "proportional" and "--run" in plain.why
    assert [s.selected for s in plain.strata] == [20, 20] and plain.strata[0].spread is None


def test_label_init_cli_reads_the_run_for_the_allocation(tmp_path: Path):
    cases = cases_by_category({"coding": 60, "writing": 60})
    verdicts = {c.id: "PASS" if c.category == "coding" or int(c.id.split("-")[1]) % 2 else "FAIL" for c in cases}
    run_db = store_run(tmp_path / "j.db", verdicts, cases)
    path = write_cases(tmp_path / "cases.jsonl", cases)
    rubric = write_rubric(tmp_path / "rubric.toml")
    base = ["label", "init", "--cases", str(path), "--task", "passfail", "--rubric", str(rubric),
            "--db-url", f"sqlite:///{tmp_path / 'labels.db'}"]  # fmt: skip
    runner = CliRunner()
    res = runner.invoke(app, [*base, "p", "--select", "stratified", "--budget", "20", "--run", "r1",
                              "--run-db", str(run_db), "--json", "-"])  # fmt: skip
    assert res.exit_code == 0, res.output
    sel = json.loads(res.output)["selection"]
    assert sel["allocation"] == "neyman" and "Neyman" in sel["why"]
    assert {s["stratum"]: s["selected"] for s in sel["strata"]}["writing"] > 12
    res = runner.invoke(app, [*base, "q", "--run", "r1", "--run-db", str(run_db)])
    assert res.exit_code == 2 and "--select" in res.output
    res = runner.invoke(app, [*base, "q", "--select", "stratified", "--budget", "5", "--run", "nope",
                              "--run-db", str(run_db)])  # fmt: skip
    assert res.exit_code == 2
    other = write_cases(tmp_path / "other.jsonl", [Case(id=f"x{k}", question="q", output="o") for k in range(9)])
    res = runner.invoke(app, ["label", "init", "--cases", str(other), "--task", "passfail", "--rubric", str(rubric),
                              "--db-url", f"sqlite:///{tmp_path / 'labels.db'}", "r", "--select", "stratified",
                              "--budget", "5", "--run", "r1", "--run-db", str(run_db)])  # fmt: skip
    assert res.exit_code == 2 and "no case id" in res.output


def test_stratified_with_a_pairwise_run_is_proportional_and_says_why(tmp_path: Path):
    from juge.runs.judge_signals import judge_signals

    pairs = [Case(id=f"{c}{k}", question="q", output_1="a", output_2="b", category=c) for c in "ab" for k in range(20)]
    signals = judge_signals("r1", db=store_run(tmp_path / "p.db", {p.id: {"12": "A", "21": "B"} for p in pairs}, pairs))
    _, selection = select_cases(pairs, method="stratified", budget=10, signals=signals)
    assert selection.allocation == "proportional" and "no pass/fail verdict" in selection.why
    assert [s.selected for s in selection.strata] == [5, 5]


def test_the_drawn_strata_line_escapes_a_category_s_control_characters(tmp_path: Path):
    """A case's category is data: ESC [2J in it would clear the terminal as label init prints the strata."""
    evil = [Case(id=f"e{k}", question="q", output="o", category="a\x1b[2J\u202eb") for k in range(4)]
    cases = write_cases(tmp_path / "cases.jsonl", evil + cases_by_category({"c": 4}))
    rubric = write_rubric(tmp_path / "rubric.toml")
    res = CliRunner().invoke(
        app,
        ["label", "init", "p", "--cases", str(cases), "--task", "passfail", "--rubric", str(rubric),
         "--db-url", f"sqlite:///{tmp_path / 'labels.db'}", "--select", "stratified", "--budget", "4"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.output and "\u202e" not in res.output and "\\x1b[2J" in res.output


def test_an_input_the_method_does_not_read_is_refused(tmp_path: Path):
    """--select random --run RUN and --select stratified --policy FILE took the input and ignored it."""
    cases = write_cases(tmp_path / "cases.jsonl", cases_by_category({"a": 4, "b": 4}))
    rubric = write_rubric(tmp_path / "rubric.toml")
    common = {"cases": cases, "task": "passfail", "rubric": rubric, "db_url": f"sqlite:///{tmp_path / 'l.db'}"}
    with pytest.raises(InputError, match="--select random"):
        juge.label_init("p", select="random", budget=4, run="r1", **common)
    with pytest.raises(InputError, match="not stratified"):
        juge.label_init("p", select="stratified", budget=4, policy=tmp_path / "policy.json", **common)
    assert not (tmp_path / "l.db").exists()
