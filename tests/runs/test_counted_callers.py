"""Every place that passes or fails a stored run's cases counts the judges `juge.verdicts.counted_judges`
says: the run summary, the run report's failing cases, `juge compare` and `juge estimate`. One run with a
pass/fail judge, a score judge, a pairwise judge and a judge from an old config (no setup), worked by hand."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import juge
from juge.data.records import Case, Judgment
from juge.reports.runs import failing_cases
from juge.runs.compare import compare_runs
from juge.runs.summary import summarize
from juge.store import Store

SINGLES = [f"c{i}" for i in range(6)]
GRADER = ["PASS", "FAIL", "PASS", "PASS", "PASS", "PASS"]
QUALITY = [5, 1, 4, 2, 5, 5]  # below 3 on c1 and c3
LEGACY = ["PASS", "PASS", "PASS", "PASS", "PASS", "FAIL"]
CONFIG = {
    "judges": [
        {"name": "grader", "setup": "passfail"},
        {"name": "quality", "setup": "score"},
        {"name": "pair", "setup": "pairwise"},
        {"name": "legacy"},  # an old run's config: no setup, so it counts
    ]
}
# Per threshold, the cases that fail: grader's c1 and legacy's c5; with a threshold, quality's c1 and c3 too.
# The pair case p0 passes on its check alone (a pairwise verdict never passes or fails it).
FAILED = {None: {"c1", "c5"}, 3.0: {"c1", "c3", "c5"}}


def _judgment(item: str, judge: str, verdict, order=None) -> Judgment:
    return Judgment(item_id=item, judge=judge, model="m", template=judge, template_hash="h", verdict=verdict,
                    outcome="ok", order=order)  # fmt: skip


def _run(store: Store, run_id: str) -> None:
    cases = [Case(id=i, question="q", output=f"answer {i}") for i in SINGLES]
    cases.append(Case(id="p0", question="q", output_1="x", output_2="y"))
    store.create_run(dataset_hash="d", juge_version="t", cases=cases, run_id=run_id, config=CONFIG)
    for i, item in enumerate(SINGLES):
        for judge, verdicts in (("grader", GRADER), ("quality", QUALITY), ("legacy", LEGACY)):
            store.save_judgment(run_id, _judgment(item, judge, verdicts[i]))
    store.save_judgment(run_id, _judgment("p0", "pair", "A", "12"))
    store.save_judgment(run_id, _judgment("p0", "pair", "B", "21"))
    store.save_checks(run_id, "p0", {"not_empty": (True, None)})


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "j.db"
    with Store(path) as store:
        _run(store, "a")
        _run(store, "b")
    return path


def _pass_rate(threshold: float | None) -> float:
    n_cases = len(SINGLES) + 1
    return (n_cases - len(FAILED[threshold])) / n_cases


@pytest.mark.parametrize("threshold", [None, 3.0])
def test_the_summary_and_the_reports_failing_cases(db, threshold) -> None:
    judges = [SimpleNamespace(name=j["name"], setup=j.get("setup")) for j in CONFIG["judges"]]
    with Store(db) as store:
        summary = summarize(store, "a", judges, threshold).to_dict()
        listed = failing_cases(store, "a", summary)
    n_failed = len(FAILED[threshold])
    assert (summary["cases_passed"], summary["cases_failed"], summary["cases_missing"]) == (
        len(SINGLES) + 1 - n_failed,
        n_failed,
        0,
    )
    assert summary["not_counted"] == ([] if threshold is not None else ["quality"])
    assert {c["item_id"]: c["verdict"] for c in listed} == dict.fromkeys(FAILED[threshold], "fail")
    counted = {"grader", "legacy"} | ({"quality"} if threshold is not None else set())
    assert {j["judge"] for c in listed for j in c["judgments"] if j["counted"]} == counted


@pytest.mark.parametrize("threshold", [None, 3.0])
def test_compare(db, threshold) -> None:
    with Store(db) as store:
        compared = compare_runs(store, "a", "b", threshold=threshold, n_resamples=50)
    assert compared.pass_rate_a.value == pytest.approx(_pass_rate(threshold))
    assert any("quality" in w for w in compared.warnings) == (threshold is None)


@pytest.mark.parametrize("threshold", [None, 3.0])
def test_estimate(db, threshold) -> None:
    labels = [{"item_id": i, "rater_id": "r", "label": "PASS"} for i in SINGLES]
    estimated = juge.estimate("a", labels, db=db, threshold=threshold, resamples=50)
    assert estimated.n_missing_verdict == 0
    assert estimated.judge_only.value == pytest.approx(_pass_rate(threshold))


def test_a_judge_whose_setup_is_unknown_counts_fail_closed(tmp_path) -> None:
    # Summarised from the store alone, a judge that only erred has no setup to infer: it still counts,
    # so the cases it did not judge are missing, never a pass on the other judge's word.
    with Store(tmp_path / "j.db") as store:
        store.create_run(
            dataset_hash="d", juge_version="t", cases=[Case(id=i, question="q", output="o") for i in SINGLES[:2]],
            run_id="a",
        )  # fmt: skip
        for item in SINGLES[:2]:
            store.save_judgment("a", _judgment(item, "grader", "PASS"))
            store.save_judgment(
                "a", Judgment(item_id=item, judge="down", model="m", template="t", outcome="error", text="timeout")
            )
        summary = summarize(store, "a").to_dict()
        assert summary["judges"]["down"]["setup"] is None
        assert (summary["cases_passed"], summary["cases_missing"]) == (0, 2)
        listed = failing_cases(store, "a", summary)
    assert [c["verdict"] for c in listed] == ["missing", "missing"]


@pytest.mark.parametrize(
    "setup, min_score, gated",
    [
        ("passfail", None, True),
        ("score", None, False),  # a score alone does not say what passes
        ("score", 3, True),
        ("criteria", None, False),
        ("pairwise", 3, False),  # a pairwise verdict never passes or fails a case
    ],
)
def test_a_pass_rate_gate_needs_a_counted_judge(tmp_path, setup, min_score, gated) -> None:
    from juge.config import load_eval
    from juge.errors import InputError
    from juge.runner import check_gate

    (tmp_path / "cases.jsonl").write_text('{"id": "a", "question": "q", "output": "o"}\n')
    gate = "min_pass_rate = 0.9" + (f"\nmin_score = {min_score}" if min_score is not None else "")
    judge = f'name = "j"\nsetup = "{setup}"\ndescription = "Good?"\nprovider = "scripted"'
    levels = '{ 1 = "poor", 2 = "fine", 3 = "great" }'
    if setup == "score":
        judge += f"\nlevels = {levels}"
    if setup == "criteria":
        judge += f'\ncriteria = {{ right = {{ description = "Right?", levels = {levels} }} }}'
    eval_path = tmp_path / "eval.toml"
    eval_path.write_text(f'cases = "cases.jsonl"\n[gate]\n{gate}\n[[judges]]\n{judge}\n')
    config = load_eval(eval_path)
    if gated:
        check_gate(config)
    else:
        with pytest.raises(InputError, match="gate.min_pass_rate"):
            check_gate(config)
