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
- A panel's judgment (an eval file's ``[[panels]]``) stands for its members': on a case the panel has judged,
  its members' own judgments are not part of the verdict.

Pairwise judgments (those with an order) say which of two answers is better, not
whether one passes; they are not part of this verdict.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from juge.data.records import Case, Judgment
from juge.errors import InputError
from juge.judges.panel import panel_members

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


@dataclass(frozen=True)
class CountedJudges:
    """Which judges pass or fail a case (see `counted_judges`), each list in the order given."""

    counted: tuple[str, ...] = ()
    # Score-like judges without a threshold: summarised, named in a run summary's ``not_counted``.
    not_counted: tuple[str, ...] = ()
    # Pairwise judges say which of two answers is better, never whether one passes.
    pairwise: tuple[str, ...] = ()


def counted_judges(judges: Iterable[tuple[str, str | None]], *, threshold: float | None) -> CountedJudges:
    """The one rule for whose verdicts pass or fail a case, over (judge name, setup) pairs.

    Pairwise judges never count; score-like judges (`SCORED_SETUPS`) count only with a
    ``threshold`` (a score alone does not say what passes); every other judge counts, an
    unknown setup (None: an old run's config) included, so its verdicts are read fail closed.
    A name given twice keeps its first setup.
    """
    setups: dict[str, str | None] = {}
    for name, setup in judges:
        setups.setdefault(name, setup)
    counted, not_counted, pairwise = [], [], []
    for name, setup in setups.items():
        if setup == "pairwise":
            pairwise.append(name)
        elif setup in SCORED_SETUPS and threshold is None:
            not_counted.append(name)
        else:
            counted.append(name)
    return CountedJudges(tuple(counted), tuple(not_counted), tuple(pairwise))


def expected_judges(cases: Iterable[Case], counted: Iterable[str]) -> dict[str, set[str]]:
    """Per case, the judges whose verdict its pass/fail needs: every `counted` judge (see
    `counted_judges`) on a single-answer case; none on a pair."""
    names = set(counted)
    return {c.id: set() if c.is_pair else set(names) for c in cases}


def run_threshold(run_config: Mapping[str, object] | None, given: float | None = None) -> float | None:
    """The score at which a stored run's cases pass: ``given`` (``--threshold``), else the eval's
    ``[gate] min_score`` the run recorded, as its own summary counted them."""
    if given is not None:
        if not math.isfinite(given):  # NaN passes no score and fails none: every case would count as a fail
            raise InputError(f"--threshold must be a finite score, got {given:g}")
        return given
    value = (run_config or {}).get("min_score")
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def run_judge_setups(run_config: Mapping[str, object] | None) -> list[tuple[str, str | None]]:
    """(name, setup) of each judge (and panel) in a stored run's config; an old config without setups gives
    None."""
    found = []
    for key in ("judges", "panels"):
        judges = (run_config or {}).get(key)
        found += [
            (j["name"], j.get("setup") if isinstance(j.get("setup"), str) else None)
            for j in (judges if isinstance(judges, list) else [])
            if isinstance(j, dict) and isinstance(j.get("name"), str)
        ]
    return found


def run_outcomes(
    cases: Sequence[Case],
    judgments: Sequence[Judgment],
    checks: Mapping[str, Mapping[str, tuple[bool, str | None]]],
    run_config: Mapping[str, object] | None,
    *,
    threshold: float | None,
) -> tuple[dict[str, CaseOutcome], list[str]]:
    """The verdict of every case of a stored run at ``threshold`` (what `juge compare` and `juge estimate`
    count), and the judges not counted (score-like ones without a threshold), sorted.

    The judges are the run config's (with their setups); a judge found only in the judgments (an old
    config) counts. A case needs every counted judge of the config (an interrupted run: missing).
    """
    configured = run_judge_setups(run_config)
    rule = counted_judges([*configured, *((j.judge, None) for j in judgments)], threshold=threshold)
    counted = set(rule.counted)
    outcomes = case_outcomes(
        [c.id for c in cases],
        [j for j in judgments if j.judge in counted],
        checks,
        threshold=threshold,
        expected=expected_judges(cases, counted_judges(configured, threshold=threshold).counted),
    )
    return outcomes, sorted(rule.not_counted)


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
    # A panel's verdict stands for its members' (they voted in it): a member alone neither fails nor passes the case.
    voted = {m.split("/", 1)[0] for j in own for m in panel_members(j.model) or ()}
    if voted:
        own = [j for j in own if j.judge not in voted]
        expected = (expected or set()) - voted
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
