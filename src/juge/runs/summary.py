"""A run's summary: per-check pass rates, per-judge verdicts and outcomes, pass/fail/missing per case.

It reads the store only, so reports and comparisons use it without importing the engine. It never
holds a run whole: per-judge facts come from SQL aggregates, and the judgments, check results and
cases are read in item order side by side, one item at a time.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from itertools import groupby
from operator import attrgetter
from typing import Any

from juge.data.records import Judgment
from juge.judges.pairwise import combine_orders
from juge.judges.panel import panel_members
from juge.judges.parsers import reason_code
from juge.runs.results import RunSummary
from juge.runs.verdicts import case_outcome, counted_judges
from juge.stats.estimate import Estimate
from juge.store import Store

OUTCOMES = ("ok", "refused", "unparsed", "error")
PAIR_VERDICTS = ("A", "B", "tie", "inconsistent", "missing")


def summarize(
    store: Store, run_id: str, judges: Sequence[Any] | None = None, min_score: float | None = None
) -> RunSummary:
    """Per-check pass rates, per-judge verdicts and outcomes, and pass/fail/missing per case.

    A case's verdict follows :func:`juge.runs.verdicts.case_outcomes` (fail closed: a refused,
    unparsed or failed judgment makes the case `missing`, never a pass). Score, criteria
    and additive judges count toward it only when `min_score` is set (the eval file's
    `[gate] min_score`); otherwise they are summarised but named under `not_counted`.
    Pairwise verdicts are summarised and never pass or fail a case.
    """
    setups = {j.name: j.setup for j in judges or []}
    per_judge: dict[str, dict[str, Any]] = {}
    for row in store.judge_overview(run_id):
        name = row["judge"]
        per_judge[name] = {
            "setup": setups.get(name) or _infer_setup(row),
            "n": row["n"],
            "model": row["models"],
            "template": row["template"],
            "template_hash": row["template_hash"],
            "outcomes": {k: row["outcomes"].get(k, 0) for k in OUTCOMES},
            "verdicts": {},
        }
    for judge in judges or []:  # a judge that has not judged anything yet (an interrupted run) is listed too
        if judge.name not in per_judge:
            per_judge[judge.name] = {
                "setup": judge.setup,
                "n": 0,
                "model": [],
                "template": "",
                "template_hash": "",
                "outcomes": dict.fromkeys(OUTCOMES, 0),
                "verdicts": {},
            }
    rule = counted_judges([(n, e["setup"]) for n, e in per_judge.items()], threshold=min_score)
    pairwise, counted_names = set(rule.pairwise), set(rule.counted)
    # The judges a case needs: from the eval's judges when known (a case a judge has not reached
    # yet is missing), else from the judgments stored.
    needed = (
        set(counted_judges([(j.name, j.setup) for j in judges], threshold=min_score).counted)
        if judges
        else counted_names
    )

    verdicts: dict[str, Counter[str]] = defaultdict(Counter)
    pair_verdicts: dict[str, Counter[str]] = defaultdict(Counter)
    unparsed_reasons: dict[str, Counter[str]] = defaultdict(Counter)
    check_counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    tally: Counter[str] = Counter()
    judge_cost, judge_unpriced, n_cases, any_counted = 0.0, 0, 0, False
    tokens_in = tokens_out = 0
    for is_pair, js, checks in _items(store, run_id):
        for name, (ok, _) in checks.items():
            check_counts[name][0] += int(ok)
            check_counts[name][1] += 1
        letters: dict[tuple[str, int], dict[str, Any]] = defaultdict(dict)
        counted = []
        for j in js:
            paid = panel_members(j.model) is None  # a panel's tokens and cost are its members', counted as theirs
            tokens_in += (j.tokens_in or 0) if paid else 0
            tokens_out += (j.tokens_out or 0) if paid else 0
            if j.outcome != "error" and paid:
                if j.cost is None:
                    judge_unpriced += 1
                else:
                    judge_cost += j.cost
            if j.outcome == "unparsed":
                unparsed_reasons[j.judge][reason_code(j.reason)] += 1
            if j.outcome == "ok":
                if isinstance(j.verdict, dict):  # per-criterion JSON: count each criterion's value
                    verdicts[j.judge].update(f"{k} = {v}" for k, v in j.verdict.items())
                else:
                    verdicts[j.judge][str(j.verdict)] += 1
            if j.judge in pairwise:
                letters[(j.judge, j.repeat)][j.order or ""] = j.verdict if j.outcome == "ok" else None
            elif j.judge in counted_names:
                counted.append(j)
        for (name, _), orders in letters.items():
            pair_verdicts[name][combine_orders(orders.get("12"), orders.get("21")) or "missing"] += 1
        any_counted = any_counted or bool(counted)
        if is_pair is None:  # judgments or checks of an item that is not among the run's cases
            continue
        n_cases += 1
        outcome = case_outcome(counted, checks, threshold=min_score, expected=set() if is_pair else needed)
        tally[outcome.verdict] += 1
    for name, entry in per_judge.items():
        entry["verdicts"] = dict(sorted(verdicts[name].items()))
        entry["unparsed_reasons"] = dict(sorted(unparsed_reasons[name].items()))
        if name in pairwise:
            entry["pair_verdicts"] = {k: pair_verdicts[name].get(k, 0) for k in PAIR_VERDICTS}
    outputs = store.output_totals(run_id)
    # Money spent by this run: cached answers cost nothing now, and a failed call has no price.
    cost = {
        "judges": judge_cost,
        "system": outputs["cost"],
        "total": judge_cost + outputs["cost"],
        "unpriced": judge_unpriced + outputs["unpriced"],
        "judge_tokens_in": tokens_in,
        "judge_tokens_out": tokens_out,
    }
    has_evidence = bool(check_counts) or any_counted
    if not has_evidence and not needed:
        tally.clear()  # nothing grades a case (pairwise only, or scores without min_score): none is missing
    return RunSummary.model_validate(
        {
            "run_id": run_id,
            "n_cases": n_cases,
            "checks": {
                name: {"passed": p, "n": n, "rate": p / n if n else None}
                for name, (p, n) in sorted(check_counts.items())
            },
            "judges": per_judge,
            "cases_passed": tally.get("pass", 0),
            "cases_failed": tally.get("fail", 0),
            "cases_missing": tally.get("missing", 0),
            "pass_rate": tally.get("pass", 0) / n_cases if n_cases and has_evidence else None,
            "min_score": min_score,
            "not_counted": list(rule.not_counted),
            "system_errors": outputs["errors"],
            "cost": cost,
            "calls": store.count_calls(run_id),
        }
    )


def pass_rate_estimate(passed: int, n_cases: int, *, confidence: float = 0.95) -> Estimate | None:
    """A run's pass rate (``passed`` cases of ``n_cases``) with its exact (Clopper-Pearson) interval: the one
    figure the run report shows and ``[gate] min_pass_rate_lower`` reads when no labels correct it. None
    without cases."""
    from juge.stats.exact import clopper_pearson  # scipy: on call

    if not n_cases:
        return None
    low, high = clopper_pearson(passed, n_cases, confidence=confidence)
    return Estimate(passed / n_cases, low, high, n_cases)


def _items(
    store: Store, run_id: str
) -> Iterator[tuple[bool | None, list[Judgment], dict[str, tuple[bool, str | None]]]]:
    """Per item id, in order, over the run's cases, judgments and check results: (is a pair, or None
    for an item that is not a case of the run; its judgments; its check results)."""
    cases = store.iter_case_kinds_by_item(run_id)
    judgments = groupby(store.iter_judgments_by_item(run_id), key=attrgetter("item_id"))
    checks = store.iter_check_results_by_item(run_id)
    case, group, check = next(cases, None), next(judgments, None), next(checks, None)
    while case is not None or group is not None or check is not None:
        item = min(x[0] for x in (case, group, check) if x is not None)
        is_pair, js, results = None, [], {}
        if case is not None and case[0] == item:
            is_pair, case = case[1], next(cases, None)
        if group is not None and group[0] == item:
            js, group = list(group[1]), next(judgments, None)
        if check is not None and check[0] == item:
            results, check = check[1], next(checks, None)
        yield is_pair, js, results


def _infer_setup(row: dict[str, Any]) -> str | None:
    """The setup of a judge known only from its stored judgments (see `Store.judge_overview`)."""
    if row["any_order"]:
        return "pairwise"
    if row["any_object"]:
        return "criteria"
    if row["any_number"]:
        return "score"
    return "passfail" if row["outcomes"].get("ok") else None
