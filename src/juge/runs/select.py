"""Which cases of a run `juge show` prints: by outcome, by judge, at most N."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from juge.data.records import Case, Judgment
from juge.errors import InputError
from juge.verdicts import judgment_passes

SHOW_OUTCOMES = ("unparsed", "refused", "error", "fail")


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
