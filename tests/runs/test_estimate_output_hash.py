"""Labels made on other answers than a run's outputs are left out (estimate, calibrate --run, policy inputs).

The run in these tests had a [system]: its case records hold the old answers, the outputs table the new
ones. Labels carry `output_hash` = `Case.output_hash()` of the answer the person saw.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cli_helpers import juge_main
from juge.calibration.inputs import labels_on_these_outputs, load_inputs, with_run_outputs
from juge.data.records import Case, HumanLabel, Judgment
from juge.errors import InputError
from juge.store import Store

N = 40


def app() -> typer.Typer:
    return juge_main  # through juge.cli.main: an input error exits 2


def old_case(k: int) -> Case:
    return Case(id=f"c{k}", question="q", output=f"old answer {k}")


def stored_run(db: Path, *, regenerated: range) -> None:
    """Run r1: N cases; the system wrote a new output for the cases in `regenerated` (others: same text).

    Old answers 0..19 were good (people said pass), 20..39 bad; the judge passes exactly the cases whose
    CURRENT output is good: new outputs are all good.
    """
    with Store(db) as store:
        store.create_run(dataset_hash="d", juge_version="t", run_id="r1", cases=[old_case(k) for k in range(N)])
        for k in range(N):
            new = k in regenerated
            store.save_output("r1", f"c{k}", "output", f"new answer {k}" if new else f"old answer {k}", "sys", "ok")
            verdict = "PASS" if new or k < 20 else "FAIL"
            store.save_judgment(
                "r1",
                Judgment(
                    item_id=f"c{k}", judge="g", model="m", template="t", text=verdict, verdict=verdict, outcome="ok"
                ),
            )


def old_labels(path: Path, *, with_hash: bool = True) -> Path:
    rows = []
    for k in range(N):
        row = {"item_id": f"c{k}", "rater_id": "ann", "label": "pass" if k < 20 else "fail"}
        if with_hash:
            row["output_hash"] = old_case(k).output_hash()
        rows.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_only_labels_whose_hash_matches_the_run_output_are_kept() -> None:
    cases = with_run_outputs(
        [old_case(k) for k in range(3)], {("c1", "output"): {"text": "new answer 1"}, ("c2", "output"): {"text": None}}
    )
    assert [c.output for c in cases] == ["old answer 0", "new answer 1", "old answer 2"]
    labels = [
        HumanLabel(item_id=f"c{k}", rater_id="r", label="pass", output_hash=old_case(k).output_hash()) for k in range(3)
    ] + [HumanLabel(item_id="c0", rater_id="s", label="pass")]
    kept, warnings, notes = labels_on_these_outputs(labels, cases, source="L")
    assert [(lab.item_id, lab.rater_id) for lab in kept] == [("c0", "r"), ("c2", "r"), ("c0", "s")]
    assert len(warnings) == 1 and "1 labels on 1 items" in warnings[0] and "'c1'" in warnings[0]
    assert notes == ["L: 1 of 3 labels carry no output_hash, so juge cannot check they were made on these outputs"]
    with pytest.raises(InputError, match="no label is left"):
        labels_on_these_outputs(labels[1:2], cases)


def test_estimate_leaves_out_labels_on_old_outputs(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    stored_run(db, regenerated=range(20, 30))
    labels = old_labels(tmp_path / "labels.jsonl")
    res = CliRunner().invoke(
        app(),
        [
            "estimate",
            "--run",
            "r1",
            "--labels",
            str(labels),
            "--db",
            str(db),
            "--json",
            str(tmp_path / "e.json"),
            "--resamples",
            "200",
        ],
    )
    assert res.exit_code == 0, res.output
    saved = json.loads((tmp_path / "e.json").read_text())
    # The 10 labels on c20..c29 were about the old (bad) answers: left out, so the human-only rate is
    # 20 pass of the 30 labels left, not 20 of 40.
    assert saved["n_labelled"] == 30
    assert saved["human_only"]["value"] == pytest.approx(20 / 30)
    assert "10 labels on 10 items" in res.output and "'c20'" in res.output
    assert saved["warnings"] and "output_hash differs" in saved["warnings"][0]


def test_estimate_exits_2_when_every_label_is_on_other_outputs_and_notes_labels_without_hash(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    stored_run(db, regenerated=range(N))
    res = CliRunner().invoke(
        app(), ["estimate", "--run", "r1", "--labels", str(old_labels(tmp_path / "l.jsonl")), "--db", str(db)]
    )
    assert res.exit_code == 2 and "no label is left" in res.output
    res = CliRunner().invoke(
        app(),
        [
            "estimate",
            "--run",
            "r1",
            "--db",
            str(db),
            "--resamples",
            "200",
            "--labels",
            str(old_labels(tmp_path / "nohash.jsonl", with_hash=False)),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "40 of 40 labels carry no output_hash" in " ".join(res.output.split())


def test_calibrate_run_leaves_out_labels_on_old_outputs(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    stored_run(db, regenerated=range(20, 30))
    labels = old_labels(tmp_path / "labels.jsonl")
    out_json = tmp_path / "cal.json"
    res = CliRunner().invoke(
        app(),
        [
            "calibrate",
            "--run",
            "r1",
            "--labels",
            str(labels),
            "--db",
            str(db),
            "--json",
            str(out_json),
            "--resamples",
            "50",
        ],
    )
    assert res.exit_code == 0, res.output
    result = json.loads(out_json.read_text())
    # On the 30 labels left the judge agrees with the person on every item (kappa 1); with the stale
    # labels joined in it would disagree on c20..c29.
    agreement = result["judges"]["g/t"]["agreement"]
    assert agreement["n"] == 30 and agreement["value"] == pytest.approx(1.0)
    assert any("output_hash differs" in note for note in result["notes"])
    assert res.output.count("output_hash differs") == 1  # said once, as a warning, not again as a note


def test_pairwise_labels_keep_their_hash_through_the_policy_inputs(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    pairs = [Case(id=f"p{k}", output_1="a", output_2=f"b{k}", category="c") for k in range(3)]
    with Store(db) as store:
        store.create_run(dataset_hash="d", juge_version="t", run_id="r2", cases=pairs)
        for k in range(3):
            for order, letter in (("12", "B"), ("21", "A")):
                store.save_judgment(
                    "r2",
                    Judgment(
                        item_id=f"p{k}", judge="j", model="m", template="t", order=order, verdict=letter, outcome="ok"
                    ),
                )
    stale = Case(id="p0", output_1="a", output_2="an older b0").output_hash()
    rows = [
        {"item_id": "p0", "rater_id": "x", "label": "B", "output_hash": stale},
        {"item_id": "p1", "rater_id": "x", "label": "B", "output_hash": pairs[1].output_hash()},
        {"item_id": "p2", "rater_id": "x", "label": "B"},
    ]
    labels = tmp_path / "pl.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    inputs = load_inputs(run="r2", db=db, labels=labels, kind="pairwise")
    assert sorted(lab.item_id for lab in inputs.data.labels) == ["p1", "p2"]
    assert len(inputs.warnings) == 1 and "'p0'" in inputs.warnings[0]
    assert any("1 of 2 labels carry no output_hash" in n for n in inputs.notices)
