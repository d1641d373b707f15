"""Pass or fail of each case of a stored run: the one definition `juge run`, `juge compare`
and `juge estimate` all count.

Definition (fail closed):

- A case FAILS when any deterministic check failed, or any single-answer judgment
  says FAIL (a score judge: its score is below ``threshold``; a per-criterion judge:
  any criterion below ``threshold``).
- Otherwise it is MISSING when any single-answer judgment is refused, unparsed, an
  error, or has a verdict that is neither PASS/FAIL nor a number; a missing case is
  never a pass and is counted on its own line.
- Otherwise it PASSES when at least one check or judgment was recorded for it (all
  checks passed and every judgment said PASS / scored at least ``threshold``).
- A case with no check and no single-answer judgment is MISSING.

Pairwise judgments (those with an order) say which of two answers is better, not
whether one passes; they are not part of this verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from juge.data.records import Case, Judgment
from juge.errors import InputError

CaseVerdict = Literal["pass", "fail", "missing"]


@dataclass
class CaseOutcome:
    """The verdict of one case and the evidence behind it."""

    verdict: CaseVerdict
    reasons: list[str] = field(default_factory=list)


def _score_of(verdict: object) -> object:
    """The value that passes or fails: "PASS"/"FAIL", a score, or for a per-criterion verdict
    ({criterion: score}) its lowest score, since every criterion must pass. These are the only
    shapes juge's strict parsers produce; anything else has no readable verdict (None)."""
    if isinstance(verdict, dict):
        scores = list(verdict.values())
        if scores and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in scores):
            return min(scores)
        return None
    return verdict


def judgment_passes(j: Judgment, threshold: float | None) -> bool | None:
    """True/False for a single-answer judgment, None when it has no readable verdict.

    Exactly "PASS" or "FAIL" map directly; a number (a score, or a per-criterion verdict's
    lowest score) passes when ``>= threshold`` (an error if no threshold was given, since a
    score alone does not say what passes). Anything else, including a number written as
    text, is unreadable: fail closed.
    """
    if j.outcome != "ok":
        return None
    value = _score_of(j.verdict)
    if value == "PASS":
        return True
    if value == "FAIL":
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if threshold is None:
            raise InputError(
                f"judge {j.judge!r} returns scores (e.g. {value!r} on item {j.item_id!r}); "
                "pass --threshold to say which score counts as a pass"
            )
        return float(value) >= threshold
    return None


SCORED_SETUPS = ("score", "criteria", "additive")


def expected_judges(
    cases: Iterable[Case], judges: Iterable[tuple[str, str | None]], *, count_scores: bool
) -> dict[str, set[str]]:
    """Per case, the judges whose verdict its pass/fail needs: every single-answer judge on a
    single-answer case (score-like judges only when `count_scores`); none on a pair."""
    names = {name for name, setup in judges if setup != "pairwise" and (count_scores or setup not in SCORED_SETUPS)}
    return {c.id: set() if c.is_pair else set(names) for c in cases}


def run_judge_setups(run_config: Mapping[str, object] | None) -> list[tuple[str, str | None]]:
    """(name, setup) of each judge in a stored run's config; an old config without setups gives None."""
    judges = (run_config or {}).get("judges")
    return [
        (j["name"], j.get("setup") if isinstance(j.get("setup"), str) else None)
        for j in (judges if isinstance(judges, list) else [])
        if isinstance(j, dict) and isinstance(j.get("name"), str)
    ]


def run_expected(
    cases: Iterable[Case], run_config: Mapping[str, object] | None, *, count_scores: bool
) -> dict[str, set[str]]:
    """`expected_judges` from a stored run's config (its `judges`: name and setup)."""
    return expected_judges(cases, run_judge_setups(run_config), count_scores=count_scores)


def counted_judgments(
    judgments: Iterable[Judgment], run_config: Mapping[str, object] | None, *, threshold: float | None
) -> tuple[list[Judgment], list[str]]:
    """The judgments a case's pass/fail counts, and the judges left out: without a threshold, score-like
    judges (the run summary's ``not_counted``) say nothing about pass or fail."""
    if threshold is not None:
        return list(judgments), []
    scored = {name for name, setup in run_judge_setups(run_config) if setup in SCORED_SETUPS}
    return [j for j in judgments if j.judge not in scored], sorted(scored)


def case_outcomes(
    item_ids: Iterable[str],
    judgments: Iterable[Judgment],
    checks: Mapping[str, Mapping[str, tuple[bool, str | None]]],
    *,
    threshold: float | None = None,
    expected: Mapping[str, set[str]] | None = None,
) -> dict[str, CaseOutcome]:
    """The verdict of every case in ``item_ids`` from its judgments and check results.

    `expected` names, per case, the judges that must have judged it (see `expected_judges`):
    a case one of them has not judged yet (an interrupted run) is missing, never a pass.
    """
    by_item: dict[str, list[Judgment]] = {}
    for j in judgments:
        if j.order is None:
            by_item.setdefault(j.item_id, []).append(j)
    return {
        item_id: case_outcome(
            by_item.get(item_id, []),
            checks.get(item_id, {}),
            threshold=threshold,
            expected=(expected or {}).get(item_id),
        )
        for item_id in item_ids
    }


def case_outcome(
    judgments: Iterable[Judgment],
    checks: Mapping[str, tuple[bool, str | None]],
    *,
    threshold: float | None = None,
    expected: set[str] | None = None,
) -> CaseOutcome:
    """The verdict of one case from its single-answer judgments (pairwise ones are skipped), its
    check results and the judges it needs (see `case_outcomes`)."""
    own = [j for j in judgments if j.order is None]
    failed, missing, evidence = [], [], 0
    for name, (passed, reason) in sorted(checks.items()):
        evidence += 1
        if not passed:
            failed.append(f"check {name} failed" + (f": {reason}" if reason else ""))
    judged = {j.judge for j in own}
    for name in sorted((expected or set()) - judged):
        missing.append(f"judge {name}: no judgment")
    for j in own:
        evidence += 1
        judged_pass = judgment_passes(j, threshold)
        tag = f"judge {j.judge}" + (f" (repeat {j.repeat})" if j.repeat else "")
        if judged_pass is None:
            missing.append(f"{tag}: {j.outcome if j.outcome != 'ok' else 'unreadable verdict'}")
        elif not judged_pass:
            failed.append(f"{tag} said FAIL ({j.verdict!r})")
    if failed:
        return CaseOutcome("fail", failed)
    if missing:
        return CaseOutcome("missing", missing)
    if evidence:
        return CaseOutcome("pass", [])
    return CaseOutcome("missing", ["no check or single-answer judgment recorded"])
