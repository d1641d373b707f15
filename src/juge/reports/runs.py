"""Report data for a stored run (`juge report --run`) and for a comparison of two runs (`--compare`).

Nothing here recomputes a figure that `juge run` or `juge compare` already produce: a run's
figures are `juge.runs.summary.summarize`'s (the summary stored when the run finished, else a fresh
`summarize`), a comparison is `juge.runs.compare.compare_runs`'s result unchanged. The report
adds only what a reader needs next to them: an exact binomial interval for each pass rate
(the cases are the units, so Clopper & Pearson 1934 applies), the versions, and the failed
and missing cases with the raw judge text (their verdicts are `juge.runs.verdicts.case_outcomes`
on the judges and threshold the summary counted, so the list matches its counts).

A run whose judges are all pairwise (and that has no check) passes or fails no case: its report
shows each judge's combined pair verdicts (summarize's ``pair_verdicts``: both orders agree ->
A/B/tie, differ -> inconsistent, an order without a verdict -> missing) instead, and lists the
inconsistent and missing pairs with both orders' raw texts.
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from juge import __version__
from juge.data.records import Judgment
from juge.judges.pairwise import combine_orders
from juge.runs.compare import compare_runs, raw_outputs
from juge.runs.summary import pass_rate_estimate, summarize
from juge.runs.verdicts import CountedJudges, case_outcomes, counted_judges, expected_judges
from juge.stats import clopper_pearson
from juge.stats.estimate import Estimate
from juge.store import Store

MAX_CASES = 200
FAILURE_OUTCOMES = ("refused", "unparsed", "error")


def binomial_estimate(k: int, n: int) -> dict[str, Any] | None:
    """``{"value": k/n, "low", "high", "n"}`` with the exact Clopper-Pearson 95 % interval; None when n = 0."""
    if not n:
        return None
    low, high = clopper_pearson(k, n)
    return {"value": k / n, "low": low, "high": high, "n": n}


def _dict(estimate: Estimate | None) -> dict[str, Any] | None:
    return estimate.to_dict() if estimate is not None else None


def _judge_rows(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """One judge of the summary: versions, then verdict counts and the failure outcomes on their own rows."""
    n = entry.get("n") or 0
    pairwise = entry.get("setup") == "pairwise"
    verdicts = (entry.get("pair_verdicts") if pairwise else entry.get("verdicts")) or {}
    per = sum(verdicts.values()) if pairwise else n  # pair verdicts are shares of pairs, not of calls
    outcomes = entry.get("outcomes") or {}
    return {
        "name": name,
        "setup": entry.get("setup"),
        "models": list(entry.get("model") or []),
        "template": entry.get("template"),
        "template_hash": entry.get("template_hash"),
        "n": n,
        "n_pairs": per if pairwise else None,
        "pairwise": pairwise,
        "verdicts": [{"name": str(k), "count": v, "share": v / per if per else None} for k, v in verdicts.items()],
        "outcomes": [
            {"name": k, "count": outcomes.get(k, 0), "share": outcomes.get(k, 0) / n if n else None}
            for k in ("ok", *FAILURE_OUTCOMES)
        ],
    }


def _judgment_row(j: Judgment, counted: bool) -> dict[str, Any]:
    return {
        "judge": j.judge,
        "model": j.model,
        "order": j.order,
        "repeat": j.repeat,
        "outcome": j.outcome,
        "verdict": j.verdict,
        "reason": j.reason,
        "text": j.text,
        "counted": counted,
    }


def summary_counted(summary: dict[str, Any]) -> CountedJudges:
    """`juge.runs.verdicts.counted_judges` on the judges (and their setups) and ``min_score`` of `summary`."""
    judges = summary.get("judges") or {}
    return counted_judges([(n, e.get("setup")) for n, e in judges.items()], threshold=summary.get("min_score"))


def failing_cases(store: Store, run_id: str, summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The cases `summary` counts as failed or missing, with why, the system output and every raw judge text.

    The verdict is `juge.runs.verdicts.case_outcomes` on the judgments and threshold the summary
    counted (`summary_counted`: its judges' setups and its ``min_score``): the one
    definition `summarize` uses, so the list matches its counts.
    """
    cases = store.run_cases(run_id)
    checks = store.check_results(run_id)
    judgments = store.judgments(run_id)
    counted = set(summary_counted(summary).counted)
    outcomes = case_outcomes(
        [c.id for c in cases],
        [j for j in judgments if j.judge in counted],
        checks,
        threshold=summary.get("min_score"),
        expected=expected_judges(cases, counted),
    )
    by_item: dict[str, list[Judgment]] = {}
    for j in judgments:
        by_item.setdefault(j.item_id, []).append(j)
    outputs = raw_outputs(store, run_id, cases)
    return [
        {
            "item_id": case.id,
            "category": case.category,
            "question": case.question,
            "verdict": outcome.verdict,
            "outputs": outputs.get(case.id, {}),
            "reasons": outcome.reasons,
            "judgments": [_judgment_row(j, j.judge in counted) for j in by_item.get(case.id, [])],
        }
        for case in cases
        if (outcome := outcomes[case.id]).verdict != "pass"
    ]


def is_pairwise_only(summary: dict[str, Any]) -> bool:
    """True when the run has judges, all pairwise, and no check: nothing in it passes or fails a case."""
    judges = summary.get("judges") or {}
    return bool(judges) and all(e.get("setup") == "pairwise" for e in judges.values()) and not summary.get("checks")


def pair_problems(store: Store, run_id: str, summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Per pairwise judge, the pairs (item and repeat) whose combined verdict is inconsistent or missing, with the
    question, both answers and both orders' raw judge texts; the verdict is the rule `summarize` counts with."""
    pairwise = {name for name, e in (summary.get("judges") or {}).items() if e.get("setup") == "pairwise"}
    cases = store.run_cases(run_id)
    by_id = {c.id: c for c in cases}
    calls: dict[tuple[str, str, int], list[Judgment]] = {}
    for j in store.judgments(run_id):
        if j.judge in pairwise:
            calls.setdefault((j.judge, j.item_id, j.repeat), []).append(j)
    outputs = raw_outputs(store, run_id, cases)
    order = {c.id: k for k, c in enumerate(cases)}
    rows = []
    for (judge, item_id, repeat), js in sorted(
        calls.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], -1), kv[0][2])
    ):
        letters = {j.order or "": j.verdict if j.outcome == "ok" and isinstance(j.verdict, str) else None for j in js}
        verdict = combine_orders(letters.get("12"), letters.get("21")) or "missing"
        if verdict not in ("inconsistent", "missing"):
            continue
        case = by_id.get(item_id)
        rows.append(
            {
                "item_id": item_id,
                "judge": judge,
                "repeat": repeat,
                "verdict": verdict,
                "category": case.category if case else None,
                "question": case.question if case else None,
                "outputs": outputs.get(item_id, {}),
                "judgments": [_judgment_row(j, True) for j in sorted(js, key=lambda j: j.order or "")],
            }
        )
    return rows


def _now(generated_at: datetime | None) -> str:
    return (generated_at or datetime.now(UTC)).isoformat(timespec="seconds")


def build_run_data(
    store: Store, run_id: str, *, max_cases: int = MAX_CASES, generated_at: datetime | None = None
) -> dict[str, Any]:
    """Report data for one run: its summary, intervals on its pass rates, versions and failing cases.

    Raises `juge.store.RunNotFound` for an unknown run id.
    """
    run = store.get_run(run_id)
    config = run["config"] or {}
    judge_configs = [j for j in config.get("judges") or [] if isinstance(j, dict)]
    setups = {j.get("name"): j.get("setup") for j in judge_configs}
    # A summary stored by a juge before cases had pass/fail/missing (no "cases_missing") is summarised again.
    stored = run["status"] == "done" and isinstance(run["summary"], dict) and "cases_missing" in run["summary"]
    summary = (
        run["summary"]
        if stored
        else summarize(
            store, run["id"], [SimpleNamespace(name=n, setup=s) for n, s in setups.items()], config.get("min_score")
        ).to_dict()
    )
    pairwise_only = is_pairwise_only(summary)
    failing = [] if pairwise_only else failing_cases(store, run["id"], summary)
    problems = pair_problems(store, run["id"], summary) if pairwise_only else []
    n_cases, n_passed = summary.get("n_cases") or 0, summary.get("cases_passed") or 0
    notes = []
    if not stored:
        notes.append(
            f"The run is {run['status']!r}: its figures were summarised now from what is stored"
            + (", and may change when it is resumed." if run["status"] != "done" else ".")
        )
    if summary.get("not_counted"):
        notes.append(
            f"Judges {', '.join(summary['not_counted'])} give scores and no score gate ([gate] min_score) "
            "was applied: they are summarised below but do not pass or fail a case."
        )
    return {
        "report": "run",
        "juge_version": __version__,
        "generated_at": _now(generated_at),
        "run": {
            "id": run["id"],
            "name": run["name"],
            "status": run["status"],
            "started_at": run["started_at"],
            "ended_at": run["ended_at"],
            "juge_version": run["juge_version"],
            "dataset_hash": run["dataset_hash"],
            "eval_file": config.get("eval_file"),
            "repeat": config.get("repeat"),
            "summary_source": "stored when the run finished" if stored else "summarised now from the stored calls",
        },
        "summary": summary,
        "checks": [
            {"name": name, "passed": c["passed"], "n": c["n"], "rate": binomial_estimate(c["passed"], c["n"])}
            for name, c in summary.get("checks", {}).items()
        ],
        "pass_rate": (_dict(pass_rate_estimate(n_passed, n_cases)) if summary.get("pass_rate") is not None else None),
        "cases_passed": n_passed,
        "cases_failed": summary.get("cases_failed"),
        "cases_missing": summary.get("cases_missing"),
        "min_score": summary.get("min_score"),
        "n_cases": n_cases,
        "calls": summary.get("calls"),
        "judges": [_judge_rows(name, entry) for name, entry in summary.get("judges", {}).items()],
        "n_failing": len(failing),
        "failing": failing[:max_cases],
        "pairwise_only": pairwise_only,
        "pair_verdicts": [
            {"judge": name, "n_pairs": sum(e["pair_verdicts"].values()), **e["pair_verdicts"]}
            for name, e in summary.get("judges", {}).items()
            if e.get("pair_verdicts")
        ],
        "n_pair_problems": len(problems),
        "pair_problems": problems[:max_cases],
        "notes": notes,
    }


def build_compare_data(
    store: Store,
    run_a: str,
    run_b: str,
    *,
    threshold: float | None = None,
    allow_different_judges: bool = False,
    n_resamples: int = 2000,
    seed: int = 0,
    generated_at: datetime | None = None,
) -> dict[str, Any]:
    """Report data for run B (new) against run A (old): `compare_runs`'s result, plus each run's juge version.

    Raises `juge.store.RunNotFound` for an unknown run id and `InputError` when the runs
    cannot be compared (see `compare_runs`).
    """
    result = compare_runs(
        store,
        run_a,
        run_b,
        threshold=threshold,
        allow_different_judges=allow_different_judges,
        n_resamples=n_resamples,
        seed=seed,
    ).to_dict()
    juge_versions = {side: store.get_run(result[f"run_{side}"]["id"])["juge_version"] for side in ("a", "b")}
    return {
        "report": "compare",
        "juge_version": __version__,
        "generated_at": _now(generated_at),
        "settings": {
            "threshold": threshold,
            "allow_different_judges": allow_different_judges,
            "n_resamples": n_resamples,
            "seed": seed,
        },
        "run_juge_versions": juge_versions,
        "compare": result,
    }
