"""The weekly audit read back (``juge audit status``): every audit draw of a policy (the policy file's ``audits``)
against the labels people gave its items, per week and cumulatively, per category and overall, with the
anytime-valid drift test of :mod:`juge.stats.sequential` (docs/calibration.md, "The weekly audit").

Pure: the caller reads the labels (the label store lives above this layer) and hands them in by project.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from juge.data.labels import normalise_passfail
from juge.data.records import HumanLabel
from juge.files import write_atomic
from juge.judges.pairwise import as_agreement_label
from juge.policy.results import (
    AuditBatch,
    AuditedDecision,
    AuditGroup,
    AuditOutcome,
    AuditRecord,
    AuditStatus,
    AuditWeek,
    PolicyResult,
)
from juge.stats.estimate import Estimate
from juge.stats.sequential import (
    betting_confidence_sequence,
    drift_eprocess,
    items_to_alarm,
    items_to_clear,
)

METHOD = (
    "drift: betting e-process against 'agreement at or above the bar' (discounted aGRAPA bets, alarm at 1/level, "
    "Ville's inequality); band: hedged betting confidence sequence; Waudby-Smith & Ramdas, JRSS B 2024, "
    "arXiv:2010.09686 (docs/calibration.md, 'The weekly audit')"
)


def iso_week(when: datetime) -> str:
    """The ISO week of a moment, e.g. 2026-W49."""
    year, week, _ = when.isocalendar()
    return f"{year}-W{week:02d}"


def audit_record(
    run_id: str,
    seed: int,
    sample: Sequence[AuditedDecision],
    *,
    label_project: str | None = None,
    drawn_at: datetime | None = None,
) -> AuditRecord:
    """The policy file's record of one draw."""
    when = drawn_at or datetime.now(UTC)
    return AuditRecord.model_validate(
        {
            "drawn_at": when.isoformat(timespec="seconds"),
            "week": iso_week(when),
            "run_id": run_id,
            "seed": seed,
            "label_project": label_project,
            "items": [{"item_id": d.item_id, "category": d.category, "verdict": d.verdict} for d in sample],
        }
    )


def record_audit(path: Path, record: AuditRecord) -> bool:
    """Append a draw to the policy file's ``audits`` (outside its hash, as its holdout tests). The same draw again
    (same run, seed, project and items: the week's sample shown twice) is not recorded twice; returns whether
    this one was new."""
    document = json.loads(path.read_text(encoding="utf-8"))
    earlier = document.get("audits") or []
    new = record.to_dict()

    def same(old: dict[str, Any]) -> bool:
        keys = ("run_id", "seed", "label_project", "items")
        return all(old.get(k) == new.get(k) for k in keys)

    if any(same(old) for old in earlier):
        return False
    document["audits"] = [*earlier, new]
    write_atomic(path, json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n")
    return True


def agrees(policy: PolicyResult, verdict: str | None, label: Any) -> bool | None:
    """Whether the judge's verdict agrees with one person's label, as the policy measured it on dev (PASS/FAIL and
    pairs: the same label, an inconsistent pair counting as a tie; scores: the same side of the threshold); None
    when either cannot be read."""
    if verdict is None or label is None:
        return None
    if policy.judge_kind == "passfail":
        v, p = normalise_passfail(verdict), normalise_passfail(label)
        return None if v is None or p is None else v == p
    if policy.judge_kind == "pairwise":
        person = str(label).strip()
        person = {"a": "A", "b": "B", "tie": "tie", "c": "tie"}.get(person.lower(), person)
        return None if person not in ("A", "B", "tie") else as_agreement_label(verdict) == person  # type: ignore[arg-type]
    try:
        v_score, p_score = float(verdict), float(label)
    except (TypeError, ValueError):
        return None
    if policy.threshold is None:
        return v_score == p_score
    return (v_score >= float(policy.threshold)) == (p_score >= float(policy.threshold))


@dataclass(frozen=True)
class _Item:
    week: str
    category: str
    bar: float | None
    agreement: float  # share of the people the judge agrees with
    n_labels: int


def _bar(policy: PolicyResult, category: str) -> tuple[float | None, float | None]:
    row = policy.categories.get(category)
    ceiling = row.ceiling.value if row is not None and row.ceiling is not None else None
    if ceiling is None:
        return None, None
    bar = float(ceiling) - float(policy.margin)
    return float(ceiling), bar if 0 < bar < 1 else None


def _estimate(x: np.ndarray, low: float | None, high: float | None) -> Estimate:
    return Estimate(float(x.mean()) if x.size else None, low, high, n=int(x.size))


def _group(
    items: Sequence[_Item],
    *,
    level: float,
    ceiling: float | None,
    margin: float,
    category: bool,
) -> AuditGroup:
    """Figures, band, drift test and outcome of one category (or of all together)."""
    x = np.array([it.agreement for it in items])
    bars = [it.bar for it in items]
    has_bar = bool(items) and all(b is not None for b in bars)
    b = np.array(bars, dtype=float) if has_bar else np.full(len(items), np.nan)
    low, high = betting_confidence_sequence(x, alpha=level) if x.size else (np.empty(0), np.empty(0))
    wealth = drift_eprocess(x, b) if has_bar and x.size else np.ones(len(items))
    weeks: list[AuditWeek] = []
    drifted_in = None
    order = list(dict.fromkeys(it.week for it in items))
    end = 0
    for week in order:
        this = [i for i, it in enumerate(items) if it.week == week]
        end = max(this) + 1
        peak = float(wealth[:end].max())
        if drifted_in is None and peak >= 1 / level:
            drifted_in = week
        weeks.append(
            AuditWeek(
                week=week,
                n_items=len(this),
                agreement=float(x[this].mean()),
                cumulative=_estimate(x[:end], float(low[end - 1]), float(high[end - 1])),
                bar=float(b[:end].mean()) if has_bar else None,
                evidence=float(wealth[end - 1]),
            )
        )
    bar = float(b.mean()) if has_bar else (ceiling - margin if ceiling is not None else None)
    agreement = _estimate(x, float(low[-1]) if x.size else None, float(high[-1]) if x.size else None)
    evidence = float(wealth.max()) if x.size else 1.0
    outcome: AuditOutcome
    to_decide = None
    if drifted_in is not None:
        outcome = "drifted"
        reason = (
            f"from {drifted_in} on, the judge agrees with people less than the bar {bar:.3f} "
            f"(e-value {evidence:.1f} >= {1 / level:.0f}); now {agreement.value:.3f} on {x.size} items"
        )
    elif not has_bar:
        outcome = "too few labels yet"
        reason = (
            "no labelled audited item yet"
            if not x.size
            else "the policy has no person-vs-person figure to hold "
            + ("this category" if category else "every category")
            + " to, so no decision"
        )
    elif agreement.low is not None and bar is not None and agreement.low >= bar:
        outcome = "holding"
        reason = (
            f"agreement {agreement.value:.3f} on {x.size} items, its band [{agreement.low:.3f}, "
            f"{agreement.high:.3f}] above the bar {bar:.3f}"
        )
    else:
        outcome = "too few labels yet"
        assert bar is not None and agreement.value is not None
        if agreement.value >= bar:
            to_decide = items_to_clear(x, bar, alpha=level)
            what = "clear the bar"
        else:
            to_decide = items_to_alarm(x, b, alpha=level)
            what = "call it drifted"
        reason = (
            f"agreement {agreement.value:.3f} on {x.size} items, band [{agreement.low:.3f}, "
            f"{agreement.high:.3f}] around the bar {bar:.3f}; "
            + (
                f"about {to_decide} labelled items in all would {what} if it stayed so"
                if to_decide is not None
                else "it is too close to the bar to decide on any likely number of items"
            )
        )
    return AuditGroup(
        ceiling=ceiling,
        margin=margin,
        bar=bar,
        n_items=int(x.size),
        n_labels=sum(it.n_labels for it in items),
        agreement=agreement,
        level=level,
        evidence=evidence,
        outcome=outcome,
        drifted_in=drifted_in,
        items_to_decide=to_decide,
        reason=reason,
        weeks=weeks,
    )


def audit_figures(
    policy: PolicyResult,
    labels: Mapping[str, Sequence[HumanLabel]],
    *,
    alpha: float = 0.05,
) -> AuditStatus:
    """Every audit draw of ``policy`` read against ``labels`` (the people's labels, by labelling project).

    Each item counts once (at its first draw), in draw order; its agreement is the share of its labels the judge's
    verdict agrees with (:func:`agrees`). The error level ``alpha`` is split: with several categories, half goes
    to all of them together and half is shared equally among the categories (Bonferroni), so the chance of any
    false drift alarm stays at most ``alpha``.
    """
    if not 0 < alpha < 1:
        from juge.errors import InputError

        raise InputError(f"--alpha {alpha}: give a share between 0 and 1")
    by_project: dict[str, dict[str, list[HumanLabel]]] = {}
    for project, rows in labels.items():
        for lab in rows:
            by_project.setdefault(project, {}).setdefault(lab.item_id, []).append(lab)
    notes: list[str] = []
    seen: set[tuple[str | None, str]] = set()
    items: list[_Item] = []
    batches: list[AuditBatch] = []
    unreadable = 0
    for record in policy.audits:
        labelled = 0
        for drawn in record.items:
            key = (record.label_project, drawn.item_id)
            if key in seen:
                continue
            seen.add(key)
            votes = [
                a
                for lab in by_project.get(record.label_project or "", {}).get(drawn.item_id, [])
                if (a := agrees(policy, drawn.verdict, lab.label)) is not None
            ]
            unreadable += len(by_project.get(record.label_project or "", {}).get(drawn.item_id, [])) - len(votes)
            if not votes:
                continue
            labelled += 1
            items.append(
                _Item(record.week, drawn.category, _bar(policy, drawn.category)[1], sum(votes) / len(votes), len(votes))
            )
        batches.append(
            AuditBatch(
                week=record.week,
                drawn_at=record.drawn_at,
                run_id=record.run_id,
                seed=record.seed,
                label_project=record.label_project,
                n_items=len(record.items),
                n_labelled=labelled,
            )
        )
    if unreadable:
        notes.append(f"{unreadable} labels could not be compared with the judge's verdict and are left out")
    terminal_only = sum(b.label_project is None for b in batches)
    if terminal_only:
        notes.append(
            f"{terminal_only} audit draws went to no labelling project (no --label-project): their items have no "
            "labels here"
        )
    categories = list(dict.fromkeys(it.category for it in items))
    several = len(categories) > 1
    margin = float(policy.margin)
    per_category = {
        c: _group(
            [it for it in items if it.category == c],
            level=alpha / (2 * len(categories)) if several else alpha,
            ceiling=_bar(policy, c)[0],
            margin=margin,
            category=True,
        )
        for c in categories
    }
    no_bar = [c for c in categories if _bar(policy, c)[1] is None]
    if no_bar:
        notes.append(f"no bar for {', '.join(no_bar)} (the policy has no person-vs-person figure there)")
    with_bar = [it for it in items if it.bar is not None]
    overall = _group(with_bar, level=alpha / 2 if several else alpha, ceiling=None, margin=margin, category=False)
    drifted = [c for c, g in per_category.items() if g.outcome == "drifted"]
    if overall.outcome == "drifted" or drifted:
        outcome: AuditOutcome = "drifted"
        where = f"in {', '.join(drifted)}" if drifted else "over all categories together"
        reason = (
            f"{where}: the judge no longer agrees with people as the policy requires. Stop routing to it "
            "there: measure the judge again (juge drift on the anchor set) and derive a new policy"
        )
    elif overall.outcome == "holding":
        outcome = "holding"
        reason = f"{overall.reason}: keep auditing each week"
    else:
        outcome = "too few labels yet"
        reason = overall.reason + (
            "; label the audited items (juge label), or draw more each week (juge audit-sample -n)"
            if items
            else ": draw audits into a labelling project (juge audit-sample --label-project NAME) and label them"
        )
    return AuditStatus(
        policy_hash=policy.policy_hash,
        judge=policy.judge,
        judge_kind=policy.judge_kind,
        alpha=alpha,
        method=METHOD,
        outcome=outcome,
        reason=reason,
        overall=overall,
        categories=per_category,
        batches=batches,
        notes=notes,
    )
