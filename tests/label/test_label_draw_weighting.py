"""Labels of a `juge label init --select` draw carry it through `juge label export`, and every command that reads
labels either weights them by 1 / chance or refuses them: never an unequal-probability draw read as a random sample."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from test_label_selection import store_run
from typer.testing import CliRunner

import juge
from cli_helpers import juge_main as app
from juge.data.draw import label_draw
from juge.data.records import Case, HumanLabel
from juge.errors import InputError
from juge.label.db import LabelStore
from label_helpers import write_cases, write_rubric


def _drawn_project(tmp_path: Path, select: str, budget: int = 120) -> tuple[dict, Path, str, dict[str, bool]]:
    """A score run over 600 cases (every third near the threshold, where the judge is unreliable), a label
    project of the cases `select` drew, every drawn case labelled once with its truth. Returns the selection,
    the run's store, the project's URL and the truth."""
    rng = np.random.default_rng(9)
    cases, scores, truth = [], {}, {}
    for k in range(600):
        item = f"c{k}"
        near = k % 3 == 0
        truth[item] = bool(rng.random() < (0.5 if near else 0.8))
        right = rng.random() < (0.6 if near else 0.95)
        passes = truth[item] if right else not truth[item]
        scores[item] = (7 if passes else 6) if near else (9 if passes else 2)
        cases.append(Case(id=item, question="q", output="o", category="a" if k < 300 else "b"))
    run_db = store_run(tmp_path / "j.db", scores, cases, config={"min_score": 7})
    db_url = f"sqlite:///{tmp_path / 'labels.db'}"
    init = juge.label_init(
        "p", cases=write_cases(tmp_path / "cases.jsonl", cases), task="passfail",
        rubric=write_rubric(tmp_path / "rubric.toml"), overlap=0.0, db_url=db_url, select=select,  # type: ignore[arg-type]
        budget=budget, **({} if select == "random" else {"run": "r1", "run_db": run_db}),  # random needs no run
    )  # fmt: skip
    token = juge.label_add_rater("ann", project="p", db_url=db_url).token
    store = LabelStore(db_url)
    rater = store.rater_by_token(token)
    assert rater is not None
    while (a := store.next_assignment(rater)) is not None:
        store.save_label(rater, a.id, "PASS" if truth[a.case.id] else "FAIL")
    store.close()
    assert init.selection is not None
    return init.selection.model_dump(), run_db, db_url, truth


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_export_carries_each_label_s_draw_and_chance(tmp_path: Path, suffix: str):
    selection, _, db_url, _ = _drawn_project(tmp_path, "decisive")
    out = tmp_path / f"labels{suffix}"
    juge.label_export("p", output=out, db_url=db_url)
    text = out.read_text(encoding="utf-8")
    rows = (
        [json.loads(line) for line in text.splitlines()]
        if suffix == ".jsonl"
        else list(csv.DictReader(text.splitlines()))
    )
    assert rows and {r["item_id"] for r in rows} == set(selection["probabilities"])
    for r in rows:
        assert r["selection"] == "decisive"
        assert float(r["selection_probability"]) == pytest.approx(selection["probabilities"][r["item_id"]])
    # Read back as every command reads labels: the draw is known, with unequal chances.
    draw = label_draw(juge.calibration_inputs(items=tmp_path / "cases.jsonl", labels=out, kind="passfail").data.labels)  # type: ignore[arg-type]
    assert draw is not None and draw.method == "decisive" and draw.unequal
    assert draw.probabilities == pytest.approx(selection["probabilities"])


def _refused(res, out: Path) -> None:
    assert res.exit_code == 2, res.output
    assert not out.exists()  # nothing written
    assert "decisive draw" in res.output and "juge estimate --selection" in res.output


@pytest.mark.parametrize(
    "command",
    [
        [
            "policy",
            "derive",
            "--items",
            "{cases}",
            "--run",
            "r1",
            "--db",
            "{db}",
            "-o",
            "{tmp}/P.md",
            "--rule",
            "guarantee",
        ],  # a margin policy weights them (tests/policy/test_policy_weighted_draw.py)
        ["plan", "--items", "{cases}", "--run", "r1", "--db", "{db}"],
        ["plan", "--run", "r1", "--db", "{db}", "--width", "0.1"],
    ],
    ids=["derive-guarantee", "plan", "plan-width"],
)
def test_commands_refuse_labels_of_an_unequal_draw(tmp_path: Path, command: list[str]):
    """No figure that counts every label alike is computed over a decisive draw's labels: exit 2, no --json."""
    _, run_db, db_url, _ = _drawn_project(tmp_path, "decisive")
    labels = tmp_path / "labels.csv"
    juge.label_export("p", output=labels, db_url=db_url)
    out = tmp_path / "out.json"
    args = [a.format(cases=tmp_path / "cases.jsonl", db=run_db, tmp=tmp_path) for a in command]
    res = CliRunner().invoke(app, [*args, "--labels", str(labels), "--json", str(out)])
    _refused(res, out)


def test_estimate_asks_for_the_selection_of_exported_labels_of_an_unequal_draw(tmp_path: Path):
    _, run_db, db_url, _ = _drawn_project(tmp_path, "decisive")
    labels = tmp_path / "labels.jsonl"
    juge.label_export("p", output=labels, db_url=db_url)
    with pytest.raises(InputError, match="--selection"):
        juge.estimate("r1", labels, db=run_db)


def test_a_random_draw_s_labels_need_no_weighting(tmp_path: Path):
    _, run_db, db_url, _ = _drawn_project(tmp_path, "random")
    labels = tmp_path / "labels.jsonl"
    juge.label_export("p", output=labels, db_url=db_url)
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(app, ["calibrate", "--items", str(tmp_path / "cases.jsonl"), "--run", "r1", "--db",
                                   str(run_db), "--labels", str(labels), "--json", str(out), "--resamples", "50",
                                   "--threshold", "7"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["weighting"] == "equal-probability"
    plain = [
        {k: v for k, v in json.loads(line).items() if not k.startswith("selection")}
        for line in labels.read_text().splitlines()
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in plain))
    cal = juge.calibrate(items=tmp_path / "cases.jsonl", run="r1", db=run_db, labels=labels, resamples=50, threshold=7)
    assert cal.weighting == "none"


def test_label_draw_from_a_selection_file_and_mixed_labels():
    labels = [HumanLabel(item_id=i, rater_id="r", label="PASS") for i in ("x1", "x2", "y1")]
    stratified = {"method": "stratified", "strata": [{"stratum": "x", "probability": 0.5},
                                                     {"stratum": "y", "probability": 0.1}]}  # fmt: skip
    draw = label_draw(labels, selection={"selection": stratified}, categories={"x1": "x", "x2": "x", "y1": "y"})
    assert draw is not None and draw.unequal and draw.probabilities == {"x1": 0.5, "x2": 0.5, "y1": 0.1}
    assert draw.weights(["x1", "y1"]) == pytest.approx([2.0, 10.0])
    proportional = {"method": "stratified", "strata": [{"stratum": "x", "probability": 0.2},
                                                       {"stratum": "y", "probability": 0.2}]}  # fmt: skip
    assert not label_draw(labels, selection=proportional).unequal  # type: ignore[union-attr]
    assert label_draw(labels) is None
    drawn = [lab.model_copy(update={"selection": "decisive", "selection_probability": p})
             for lab, p in zip(labels, (0.2, 0.8, 0.2))]  # fmt: skip
    with pytest.raises(InputError, match="carry no selection_probability"):
        label_draw([*drawn, HumanLabel(item_id="z", rater_id="r", label="PASS")])
    with pytest.raises(InputError, match="several draws"):
        label_draw([*drawn, drawn[0].model_copy(update={"selection": "random"})])


def test_calibrate_weights_a_pass_fail_study_of_a_decisive_draw(tmp_path: Path):
    """The exported labels of a decisive draw: PASS/FAIL agreement is the Hajek ratio (by hand), near the agreement
    over all 600 cases; read as a random sample it leans to the near-threshold cases the draw favoured."""
    selection, run_db, db_url, truth = _drawn_project(tmp_path, "decisive", budget=200)
    labels = tmp_path / "labels.csv"
    juge.label_export("p", output=labels, db_url=db_url)
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(app, ["calibrate", "--items", str(tmp_path / "cases.jsonl"), "--run", "r1", "--db",
                                   str(run_db), "--labels", str(labels), "--threshold", "7", "--split", "all",
                                   "--resamples", "200", "--json", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    cal = json.loads(out.read_text())
    assert cal["weighting"] == "inverse-probability" and cal["kind"] == "passfail"
    figures = cal["judges"][next(iter(cal["judges"]))]
    assert figures["krippendorff_alpha"] is None  # not weighted: left out
    from juge.store import Store

    with Store(run_db) as store:
        said = {j.item_id: float(j.verdict) >= 7 for j in store.judgments("r1")}
    chance = selection["probabilities"]
    hand = sum((said[i] == truth[i]) / p for i, p in chance.items()) / sum(1 / p for p in chance.values())
    assert figures["agreement"]["value"] == pytest.approx(hand)
    everywhere = np.mean([said[i] == truth[i] for i in truth])
    plain = np.mean([said[i] == truth[i] for i in chance])
    assert abs(hand - everywhere) < abs(plain - everywhere)


def test_calibrate_refuses_a_score_study_of_a_decisive_draw(tmp_path: Path):
    selection, run_db, _, _ = _drawn_project(tmp_path, "decisive")
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"item_id": i, "rater_id": "r", "label": 5, "selection": "decisive",
                                          "selection_probability": p}) + "\n"
                              for i, p in selection["probabilities"].items()))  # fmt: skip
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(app, ["calibrate", "--items", str(tmp_path / "cases.jsonl"), "--run", "r1", "--db",
                                   str(run_db), "--labels", str(labels), "--kind", "score", "--json", str(out)])  # fmt: skip
    _refused(res, out)
