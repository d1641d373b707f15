"""`juge compare`: two runs of the same cases, transitions, paired difference, McNemar, refusal."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
from juge.data.records import Case, Judgment
from juge.errors import InputError
from juge.runs.compare import compare_runs
from juge.store import Store


def make_run(
    store: Store,
    verdicts: list[str | None],
    *,
    outputs_tag: str,
    template_hash: str = "h1",
    run_id: str,
    questions: list[str] | None = None,
    failed_check: set[int] = frozenset(),
) -> str:
    """A run whose case i gets judge verdict verdicts[i] (None = unparsed) and a passing length check."""
    cases = [
        Case(id=f"c{i}", question=(questions or [f"q{i}"] * len(verdicts))[i], output=f"{outputs_tag} answer {i}")
        for i in range(len(verdicts))
    ]
    store.create_run(dataset_hash="d", juge_version="test", cases=cases, run_id=run_id)
    for i, v in enumerate(verdicts):
        store.save_judgment(
            run_id,
            Judgment(
                item_id=f"c{i}",
                judge="grader",
                model="m-2026-01",
                template="passfail",
                template_hash=template_hash,
                text=f"<p>reasoning {outputs_tag} {i}</p> VERDICT: {v}",
                verdict=v,
                outcome="ok" if v else "unparsed",
            ),
        )
        store.save_checks(run_id, f"c{i}", {"not_empty": (i not in failed_check, None)})
    return run_id


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "juge.db") as s:
        yield s


def test_transitions_difference_and_mcnemar(store):
    rng = np.random.default_rng(0)
    a = rng.random(60) < 0.6
    b = a.copy()
    b[:12] = ~b[:12]  # 12 cases change
    va = ["PASS" if x else "FAIL" for x in a]
    vb = ["PASS" if x else "FAIL" for x in b]
    vb[59] = None  # unparsed in B: excluded from the pair, counted
    make_run(store, va, outputs_tag="old", run_id="runA")
    make_run(store, vb, outputs_tag="new", run_id="runB")
    result = compare_runs(store, "runA", "runB", n_resamples=500)
    pf = int((a[:59] & ~b[:59]).sum())
    fp = int((~a[:59] & b[:59]).sum())
    assert result["transitions"]["pass_to_fail"] == pf and result["transitions"]["fail_to_pass"] == fp
    assert pf + fp == 12
    assert result["n_paired"] == 59 and result["n_missing_verdict"] == 1
    assert result["mcnemar_p"] == pytest.approx(binomtest(pf, pf + fp, 0.5).pvalue)
    diff = result["difference_b_minus_a"]
    assert diff["value"] == pytest.approx((b[:59].sum() - a[:59].sum()) / 59)
    assert diff["low"] <= diff["value"] <= diff["high"]
    # Changed cases carry both raw outputs and the judge's raw text; the missing one is listed too.
    assert len(result["changed"]) == 13
    first = next(c for c in result["changed"] if c["item_id"] == "c0")
    assert first["a"]["outputs"] == {"output": "old answer 0"}
    assert first["b"]["outputs"] == {"output": "new answer 0"}
    assert "reasoning new 0" in first["b"]["judgments"][0]["text"]
    assert result["comparable"] and not result["warnings"]


def test_a_failed_check_fails_the_case_even_when_the_judge_says_pass(store):
    make_run(store, ["PASS", "PASS"], outputs_tag="old", run_id="a")
    make_run(store, ["PASS", "PASS"], outputs_tag="new", run_id="b", failed_check={1})
    result = compare_runs(store, "a", "b", n_resamples=200)
    assert result["transitions"]["pass_to_fail"] == 1
    assert result["changed"][0]["b"]["reasons"] == ["check not_empty failed"]


def test_refuses_different_judge_versions_unless_allowed(store):
    make_run(store, ["PASS", "FAIL"], outputs_tag="old", run_id="a")
    make_run(store, ["PASS", "PASS"], outputs_tag="new", run_id="b", template_hash="h2")
    with pytest.raises(InputError, match="different judge versions"):
        compare_runs(store, "a", "b")
    result = compare_runs(store, "a", "b", allow_different_judges=True, n_resamples=200)
    assert not result["comparable"] and result["forced"]
    assert result["warnings"][0].startswith("NOT COMPARABLE")


def test_cases_with_different_inputs_are_left_out(store):
    make_run(store, ["PASS", "FAIL", "PASS"], outputs_tag="old", run_id="a", questions=["x", "y", "z"])
    make_run(store, ["FAIL", "PASS", "PASS"], outputs_tag="new", run_id="b", questions=["x", "changed", "z"])
    result = compare_runs(store, "a", "b", n_resamples=200)
    assert result["n_inputs_differ"] == 1 and result["n_paired"] == 2
    assert [c["item_id"] for c in result["changed"]] == ["c0"]


def test_cli_compare_exit_codes_and_json(store, tmp_path):
    make_run(store, ["PASS", "FAIL", "PASS"], outputs_tag="old", run_id="a")
    make_run(store, ["FAIL", "FAIL", "PASS"], outputs_tag="<script>x</script>", run_id="b")
    make_run(store, ["PASS", "FAIL", "PASS"], outputs_tag="other", run_id="c", template_hash="zz")
    db = str(store.path)
    runner = CliRunner()
    out = tmp_path / "cmp.json"
    res = runner.invoke(app, ["compare", "a", "b", "--db", db, "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "pass→fail" in res.output and "<script>x</script> answer 0" in res.output
    assert json.loads(out.read_text())["transitions"]["pass_to_fail"] == 1
    res = runner.invoke(app, ["compare", "a", "c", "--db", db])
    assert res.exit_code == 2 and "different judge versions" in res.output
    res = runner.invoke(app, ["compare", "a", "c", "--db", db, "--allow-different-judges"])
    assert res.exit_code == 0 and "NOT COMPARABLE" in res.output
    res = runner.invoke(app, ["compare", "a", "nope", "--db", db])
    assert res.exit_code == 2 and "no run 'nope'" in res.output


def test_runs_without_any_pass_fail_verdict_are_an_input_error(store):
    for run_id in ("a", "b"):
        store.create_run(
            dataset_hash="d",
            juge_version="t",
            run_id=run_id,
            cases=[Case(id="c0", question="q", output_1="x", output_2="y")],
        )
        store.save_judgment(
            run_id, Judgment(item_id="c0", judge="pair", model="m", template="t", order="12", verdict="A", outcome="ok")
        )
    with pytest.raises(InputError, match="pairwise judgments"):
        compare_runs(store, "a", "b")


def test_score_judges_count_only_with_a_threshold(store):
    # The run summary leaves a score judge out of pass/fail without min_score; compare does the same.
    config = {"judges": [{"name": "grader", "setup": "passfail"}, {"name": "quality", "setup": "score"}]}
    verdicts = {"a": ["PASS", "PASS", "FAIL", "PASS"], "b": ["PASS", "FAIL", "FAIL", "PASS"]}
    scores = {"a": [5, 1, 4, 2], "b": [5, 4, 4, 1]}
    for run_id in ("a", "b"):
        make_run(store, verdicts[run_id], outputs_tag=run_id, run_id=run_id)
        for i, s in enumerate(scores[run_id]):
            store.save_judgment(
                run_id,
                Judgment(item_id=f"c{i}", judge="quality", model="m", template="score", verdict=s, outcome="ok"),
            )
    with store.transaction() as c:
        c.execute("UPDATE runs SET config = ?", (json.dumps(config),))
    plain = compare_runs(store, "a", "b", n_resamples=50)
    assert (plain.pass_rate_a.value, plain.pass_rate_b.value) == (0.75, 0.5)  # grader alone
    assert any("quality" in w for w in plain.warnings)
    scored = compare_runs(store, "a", "b", threshold=3, n_resamples=50)
    assert (scored.pass_rate_a.value, scored.pass_rate_b.value) == (0.25, 0.25)  # both must pass: c0 alone in each
