"""The sens/spec plug-in is computed whenever it can be (also with every case labelled), else says why not."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import recall_score

from juge.runs.corrected import corrected_pass_rate
from juge.verdicts import CaseOutcome


def study(truth: list[int], judge: list[int], n_labelled: int | None = None) -> dict:
    outcomes = {f"c{k}": CaseOutcome("pass" if j else "fail") for k, j in enumerate(judge)}
    labelled = range(len(truth) if n_labelled is None else n_labelled)
    human = {f"c{k}": float(truth[k]) for k in labelled}
    return corrected_pass_rate(outcomes, human, n_resamples=300, seed=0)


def test_plug_in_is_defined_when_every_case_is_labelled() -> None:
    rng = np.random.default_rng(3)
    truth = (rng.random(80) < 0.7).astype(int)
    judge = np.where(truth == 1, rng.random(80) < 0.9, rng.random(80) < 0.25).astype(int)
    rg = study(truth.tolist(), judge.tolist())["rogan_gladen"]
    assert rg["sensitivity"] == pytest.approx(recall_score(truth, judge, pos_label=1))
    assert rg["specificity"] == pytest.approx(recall_score(truth, judge, pos_label=0))
    # p is the judge's rate on the same (all labelled) cases, so the plug-in recovers the human rate exactly.
    assert rg["value"] == pytest.approx(truth.mean())
    assert rg["low"] <= truth.mean() <= rg["high"] and rg["n"] == 80
    assert rg["why_not"] is None


def test_plug_in_says_the_actual_reason_when_it_cannot_be_computed() -> None:
    assert "no labelled case is a human FAIL" in study([1] * 6, [1, 1, 0, 1, 1, 1])["rogan_gladen"]["why_not"]
    assert "no labelled case is a human PASS" in study([0] * 6, [1, 0, 0, 0, 0, 0])["rogan_gladen"]["why_not"]
    # A judge that is always wrong: sens + spec - 1 = -1.
    rg = study([1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1, 1, 0], n_labelled=6)["rogan_gladen"]
    assert rg["value"] is None and "no better than chance" in rg["why_not"]


def test_cli_prints_sens_and_spec_not_undefined_with_every_case_labelled(tmp_path) -> None:
    import typer
    from typer.testing import CliRunner

    from juge.commands import policy
    from juge.data.records import Case, Judgment
    from juge.store import Store

    truth = [1] * 16 + [0] * 4
    judge = [1] * 12 + [0] * 4 + [0, 0, 0, 1]  # sens 12/16 = 0.750, spec 3/4 = 0.750
    with Store(tmp_path / "j.db") as store:
        store.create_run(
            dataset_hash="d",
            juge_version="t",
            run_id="r1",
            cases=[Case(id=f"c{k}", question="q", output="o") for k in range(20)],
        )
        for k, j in enumerate(judge):
            v = "PASS" if j else "FAIL"
            store.save_judgment(
                "r1", Judgment(item_id=f"c{k}", judge="g", model="m", template="t", text=v, verdict=v, outcome="ok")
            )
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        "".join(
            f'{{"item_id": "c{k}", "rater_id": "r", "label": "{"pass" if t else "fail"}"}}\n'
            for k, t in enumerate(truth)
        )
    )
    app = typer.Typer()
    policy.register(app)
    res = CliRunner().invoke(
        app,
        ["estimate", "--run", "r1", "--labels", str(labels), "--db", str(tmp_path / "j.db"), "--resamples", "200"],
        env={"COLUMNS": "200"},
    )
    assert res.exit_code == 0, res.output
    assert "undefined" not in res.output
    assert "sens 0.750, spec 0.750" in res.output


def test_notes_say_whether_every_case_or_all_but_one_is_labelled():
    from juge.runs.corrected import corrected_pass_rate
    from juge.verdicts import CaseOutcome

    outcomes = {f"c{i}": CaseOutcome("pass" if i % 3 else "fail") for i in range(12)}
    every = corrected_pass_rate(outcomes, {f"c{i}": float(i % 2) for i in range(12)}, n_resamples=50)
    all_but_one = corrected_pass_rate(outcomes, {f"c{i}": float(i % 2) for i in range(11)}, n_resamples=50)
    assert any("every case of the run is labelled" in n for n in every["notes"])
    assert not any("every case" in n for n in all_but_one["notes"])
    assert any("only one case of the run is unlabelled" in n for n in all_but_one["notes"])
