"""A run's summary: per-check pass rates, per-judge verdicts and outcomes, pass/fail/missing per case.

It reads the store only, so reports and comparisons use it without importing the engine.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from juge.data.records import Judgment
from juge.judges.pairwise import combine_orders
from juge.store import Store
from juge.verdicts import SCORED_SETUPS, case_outcomes, expected_judges


def summarize(
    store: Store, run_id: str, judges: Sequence[Any] | None = None, min_score: float | None = None
) -> dict[str, Any]:
    """Per-check pass rates, per-judge verdicts and outcomes, and pass/fail/missing per case.

    A case's verdict follows :func:`juge.verdicts.case_outcomes` (fail closed: a refused,
    unparsed or failed judgment makes the case `missing`, never a pass). Score, criteria
    and additive judges count toward it only when `min_score` is set (the eval file's
    `[gate] min_score`); otherwise they are summarised but named under `not_counted`.
    Pairwise verdicts are summarised and never pass or fail a case.
    """
    cases = store.run_cases(run_id)
    checks = store.check_results(run_id)
    judgments = store.judgments(run_id)
    setups = {j.name: j.setup for j in judges or []}

    check_counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for results in checks.values():
        for name, (ok, _) in results.items():
            check_counts[name][0] += int(ok)
            check_counts[name][1] += 1

    per_judge: dict[str, dict[str, Any]] = {}
    by_judge: dict[str, list[Judgment]] = defaultdict(list)
    for j in judgments:
        by_judge[j.judge].append(j)
    not_counted = []
    counted: list[Judgment] = []
    for name, js in by_judge.items():
        setup = setups.get(name) or _infer_setup(js)
        outcomes = Counter(j.outcome for j in js)
        verdicts: Counter[str] = Counter()
        for j in js:
            if j.outcome != "ok":
                continue
            if isinstance(j.verdict, dict):  # per-criterion JSON: count each criterion's value
                verdicts.update(f"{k} = {v}" for k, v in j.verdict.items())
            else:
                verdicts[str(j.verdict)] += 1
        entry: dict[str, Any] = {
            "setup": setup,
            "n": len(js),
            "model": sorted({j.model for j in js}),
            "template": js[0].template,
            "template_hash": js[0].template_hash,
            "outcomes": {k: outcomes.get(k, 0) for k in ("ok", "refused", "unparsed", "error")},
            "verdicts": dict(sorted(verdicts.items())),
        }
        if setup == "pairwise":
            letters: dict[tuple[str, int], dict[str, Any]] = defaultdict(dict)
            for j in js:
                letters[(j.item_id, j.repeat)][j.order or ""] = j.verdict if j.outcome == "ok" else None
            combined = Counter(combine_orders(o.get("12"), o.get("21")) or "missing" for o in letters.values())
            entry["pair_verdicts"] = {k: combined.get(k, 0) for k in ("A", "B", "tie", "inconsistent", "missing")}
        elif setup in SCORED_SETUPS and min_score is None:
            not_counted.append(name)
        else:
            counted.extend(js)
        per_judge[name] = entry
    for judge in judges or []:  # a judge that has not judged anything yet (an interrupted run) is listed too
        if judge.name not in per_judge:
            per_judge[judge.name] = {
                "setup": judge.setup,
                "n": 0,
                "model": [],
                "template": "",
                "template_hash": "",
                "outcomes": dict.fromkeys(("ok", "refused", "unparsed", "error"), 0),
                "verdicts": {},
            }
            if judge.setup in SCORED_SETUPS and min_score is None:
                not_counted.append(judge.name)
    outputs = store.outputs(run_id)
    # Money spent by this run: cached answers cost nothing now, and a failed call has no price.
    cost = _cost_summary(
        [j.cost for j in judgments if j.outcome != "error"],
        [o["cost"] for o in outputs.values() if o["outcome"] != "error"],
    )
    system_errors = sum(1 for o in outputs.values() if o["outcome"] == "error")
    # The judges a case needs: from the eval's judges when known (a case a judge has not reached
    # yet is missing), else from the judgments stored.
    known = [(j.name, j.setup) for j in judges] if judges else [(n, e["setup"]) for n, e in per_judge.items()]
    expected = expected_judges(cases, known, count_scores=min_score is not None)
    outcomes_by_case = case_outcomes([c.id for c in cases], counted, checks, threshold=min_score, expected=expected)
    tally = Counter(o.verdict for o in outcomes_by_case.values())
    n_cases = len(cases)
    has_evidence = bool(checks) or bool(counted)
    return {
        "run_id": run_id,
        "n_cases": n_cases,
        "checks": {
            name: {"passed": p, "n": n, "rate": p / n if n else None} for name, (p, n) in sorted(check_counts.items())
        },
        "judges": per_judge,
        "cases_passed": tally.get("pass", 0),
        "cases_failed": tally.get("fail", 0),
        "cases_missing": tally.get("missing", 0),
        "pass_rate": tally.get("pass", 0) / n_cases if n_cases and has_evidence else None,
        "min_score": min_score,
        "not_counted": not_counted,
        "system_errors": system_errors,
        "cost": cost,
        "calls": store.count_calls(run_id),
    }


def _cost_summary(judge_costs: Sequence[float | None], system_costs: Sequence[float | None]) -> dict[str, Any]:
    """Known cost in US$ of judges and of the system under test, and how many calls had no price."""
    known = [c for c in [*judge_costs, *system_costs] if c is not None]
    return {
        "judges": sum(c for c in judge_costs if c is not None),
        "system": sum(c for c in system_costs if c is not None),
        "total": sum(known),
        "unpriced": sum(1 for c in [*judge_costs, *system_costs] if c is None),
    }


def _infer_setup(js: Sequence[Judgment]) -> str | None:
    """The setup of a judge known only from its stored judgments."""
    if any(j.order for j in js):
        return "pairwise"
    values = [j.verdict for j in js if j.outcome == "ok"]
    if any(isinstance(v, dict) for v in values):
        return "criteria"
    if any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "score"
    return "passfail" if values else None
