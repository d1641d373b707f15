"""Which cases of a run `juge show` prints (by outcome, by judge, at most N), and what it shows of each."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from juge.data.records import Case, Judgment
from juge.errors import InputError
from juge.runs.results import CheckOutcome, CombinedVerdict, ShownCase, ShownJudgment, ShownRun, ShowResult
from juge.runs.verdicts import judgment_passes, run_threshold

if TYPE_CHECKING:
    from juge.runs.results import Run

SHOW_OUTCOMES = ("unparsed", "refused", "error", "fail")
PAIR_MEANING = {
    "A": "answer 1 is better",
    "B": "answer 2 is better",
    "tie": "a tie",
    "inconsistent": "the verdict changed with the order: counts as a tie, goes to a person",
    "missing": "an order was refused, unparsed or failed",
}


def show(
    run: str | Run,
    *,
    db: str | Path | None = None,
    case: str | None = None,
    outcome: str | None = None,
    judge: str | None = None,
    limit: int | None = None,
) -> ShowResult:
    """A stored run case by case (``juge show``): each case's checks, its judgments with the raw text
    whole, and each pairwise judge's verdict over both orders. ``outcome`` keeps judgments that were
    ``unparsed``, ``refused`` or an ``error``, or cases that ``fail``; ``judge`` keeps one judge's
    judgments (and leaves the checks out); ``case`` one case; ``limit`` at most N cases
    (``n_matching`` counts them all). ``to_dict()`` is what ``juge show --json`` writes.

    >>> import juge
    >>> shown = juge.show("a1b2c3", db="juge.db", outcome="unparsed", limit=5)  # doctest: +SKIP
    >>> [j.text for c in shown.cases for j in c.judgments]  # doctest: +SKIP
    """
    from juge.judges.pairwise import combine_orders
    from juge.store import open_store

    if limit is not None and limit < 1:
        raise InputError(f"--limit {limit}: give 1 or more")
    run_id = run if isinstance(run, str) else run.run_id
    with open_store(db, must_exist=True) as store:
        stored = store.get_run(run_id)
        cases = store.run_cases(stored["id"])
        checks = store.check_results(stored["id"])
        judgments = store.judgments(stored["id"])
    selected = select_cases(
        cases,
        judgments,
        checks,
        outcome=outcome,
        judge=judge,
        case_id=case,
        min_score=run_threshold(stored["config"]),
    )
    shown = []
    for sel in selected[:limit]:
        letters: dict[tuple[str, int], dict[str, str | None]] = {}
        for j in sel.judgments:
            if j.order:
                letters.setdefault((j.judge, j.repeat), {})[j.order] = str(j.verdict) if j.outcome == "ok" else None
        pairs = []
        if outcome not in (
            "unparsed",
            "refused",
            "error",
        ):  # one order only: the combined verdict would read as missing
            for (name, repeat), by_order in letters.items():
                combined = combine_orders(by_order.get("12"), by_order.get("21")) or "missing"
                pairs.append(
                    CombinedVerdict(judge=name, repeat=repeat, verdict=combined, meaning=PAIR_MEANING.get(combined, ""))
                )
        shown.append(
            ShownCase(
                id=sel.case.id,
                category=sel.case.category,
                checks={}
                if judge is not None
                else {
                    name: CheckOutcome(passed=ok, reason=why)
                    for name, (ok, why) in sorted(checks.get(sel.case.id, {}).items())
                },
                judgments=[
                    ShownJudgment(
                        judge=j.judge,
                        model=j.model,
                        order=j.order,
                        repeat=j.repeat,
                        outcome=j.outcome,
                        verdict=j.verdict,
                        reason=j.reason,
                        text=j.text,
                    )
                    for j in sel.judgments
                ],
                pair_verdicts=pairs,
            )
        )
    return ShowResult(
        run=ShownRun(
            id=stored["id"],
            name=stored["name"],
            dataset_hash=stored["dataset_hash"],
            juge_version=stored["juge_version"],
        ),
        outcome=outcome,
        judge=judge,
        case=case,
        limit=limit,
        n_cases=len(cases),
        n_matching=len(selected),
        cases=shown,
    )


@dataclass(frozen=True)
class Selected:
    case: Case
    judgments: list[Judgment]


def select_cases(
    cases: Sequence[Case],
    judgments: Sequence[Judgment],
    checks: Mapping[str, Mapping[str, tuple[bool, str | None]]],
    *,
    outcome: str | None = None,
    judge: str | None = None,
    case_id: str | None = None,
    min_score: float | None = None,
) -> list[Selected]:
    """The cases to show with the judgments to print for each, in the run's order.

    `outcome` unparsed, refused or error keeps the judgments with that outcome (and their cases);
    fail keeps cases that fail: a failed check (unless `judge` narrows to one judge) or a verdict
    that fails the case (FAIL, or a score below the run's `min_score`), with all their judgments.
    `judge` keeps that judge's judgments only.
    """
    if outcome is not None and outcome not in SHOW_OUTCOMES:
        raise InputError(f"--outcome {outcome}: choose one of {', '.join(SHOW_OUTCOMES)}")
    names = {j.judge for j in judgments}
    if judge is not None and judge not in names:
        raise InputError(f"--judge {judge}: no judgment by that judge in this run (judges: {', '.join(sorted(names))})")
    by_item: dict[str, list[Judgment]] = {}
    for j in judgments:
        if judge is None or j.judge == judge:
            by_item.setdefault(j.item_id, []).append(j)
    out = []
    for case in cases:
        if case_id is not None and case.id != case_id:
            continue
        js = by_item.get(case.id, [])
        if outcome in ("unparsed", "refused", "error"):
            js = [j for j in js if j.outcome == outcome]
            if not js:
                continue
        elif outcome == "fail" and not _fails(js, checks.get(case.id, {}) if judge is None else {}, min_score):
            continue
        out.append(Selected(case, js))
    return out


def _fails(
    judgments: Sequence[Judgment], checks: Mapping[str, tuple[bool, str | None]], min_score: float | None
) -> bool:
    if any(not ok for ok, _ in checks.values()):
        return True
    for j in judgments:
        if j.order:  # a pairwise verdict never fails a case
            continue
        if min_score is None and j.outcome == "ok" and not isinstance(j.verdict, str):
            continue  # a score says nothing about passing without the run's min_score
        if judgment_passes(j, min_score) is False:
            return True
    return False
