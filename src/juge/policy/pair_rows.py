"""What a pairwise policy decides on, shared by its derivation and its cascade: a category's row (rule 3),
the reference-answer choice (rule 2), the paired difference of two judges' agreement with the majority, and
each item's confidence in its verdict. Below both, so neither imports the other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from juge.calibration.pairtable import PairItem, PairTable
from juge.calibration.pairwise import Bootstrap, ceiling, rater_pairs, reference_templates, vs_people
from juge.data.records import Judgment, RecordedCall
from juge.policy.confidence import SOURCES, item_confidence
from juge.policy.decision import decided_row, too_few
from juge.policy.file import DIGITS, r3
from juge.stats import paired_ratio_difference

CONFIDENCE_SOURCE = SOURCES["pairwise"]


def _agree_with_majority(items: Sequence[PairItem], key: str, keep: Sequence[bool]) -> np.ndarray:
    return np.array([k and it.judges[key].label == it.majority for it, k in zip(items, keep)], dtype=float)


def paired_majority_difference(items: Sequence[PairItem], key_a: str, key_b: str, boot: Bootstrap) -> dict[str, Any]:
    """Agreement with the majority of A minus B on the items where both have a verdict and there is a majority."""
    keep = [
        it.majority is not None and all(k in it.judges and it.judges[k].label is not None for k in (key_a, key_b))
        for it in items
    ]
    den = np.array(keep, dtype=float)
    num_a, num_b = _agree_with_majority(items, key_a, keep), _agree_with_majority(items, key_b, keep)
    n = int(den.sum())
    w = boot.weights(items)
    weighted = den if w is None else den * w  # Hajek ratios when items were drawn with unequal chances
    total = weighted.sum()
    return {
        "a": key_a,
        "b": key_b,
        "n_items": n,
        "agreement_a": float((num_a * weighted).sum() / total) if n else None,
        "agreement_b": float((num_b * weighted).sum() / total) if n else None,
        "difference": paired_ratio_difference(num_a, den, num_b, den, **boot.kwargs, item_weights=w).to_dict(),
    }


def _has_verdict(item: PairItem, key: str) -> bool:
    return key in item.judges and item.judges[key].label is not None


def reference_choice(
    items: Sequence[PairItem], table: PairTable, judge_key: str, boot: Bootstrap
) -> dict[str, dict[str, Any]]:
    """Rule 2, per category with reference answers: use the reference template if it agrees at least as often."""
    with_ref = [a for a, b in reference_templates(table) if b == judge_key]
    out: dict[str, dict[str, Any]] = {}
    if not with_ref:
        return out
    key_ref = with_ref[0]
    for category in sorted({it.category for it in items if it.has_reference}):
        cat_items = [it for it in items if it.category == category and it.has_reference]
        cmp = paired_majority_difference(cat_items, key_ref, judge_key, boot)
        with_ref_agrees, without_agrees = r3(cmp["agreement_a"]), r3(cmp["agreement_b"])
        use = (
            cmp["n_items"] > 0
            and with_ref_agrees is not None
            and without_agrees is not None
            and with_ref_agrees >= without_agrees
        )
        cmp["use_reference"] = bool(use)
        cmp["template"] = key_ref if use else judge_key
        out[category] = cmp
    return out


def _person_vs_person_counts(items: Sequence[PairItem]) -> tuple[np.ndarray, np.ndarray]:
    pairs = [rater_pairs(it) for it in items]
    return (
        np.array([sum(a == b for a, b in p) for p in pairs], dtype=float),
        np.array([len(p) for p in pairs], dtype=float),
    )


def _judge_vs_person_counts(items: Sequence[PairItem], key: str) -> tuple[np.ndarray, np.ndarray]:
    """Per item: votes equal to the judge's label, and votes (items where the judge has a verdict)."""
    labels = [it.judges[key].label for it in items]
    return (
        np.array([sum(v == label for _, v in it.votes) for it, label in zip(items, labels)], dtype=float),
        np.array([len(it.votes) for it in items], dtype=float),
    )


def category_row(items: Sequence[PairItem], key: str, *, margin: float, rule: str, boot: Bootstrap) -> dict[str, Any]:
    """Rule 3 on one category: the figures, the decision and the reason in plain words.

    Judge vs person and person vs person are both measured on the category's items where the judge has
    a verdict (``n_with_verdict`` of ``n_items``): the same items, so a judge's missing verdicts on hard
    items cannot make it look closer to the people than it is.
    """
    judged = [it for it in items if _has_verdict(it, key)]
    jp = vs_people(judged, key, boot)["agreement"]
    pp = ceiling(judged, boot)["agreement"]
    jp_num, jp_den = _judge_vs_person_counts(judged, key)
    pp_num, pp_den = _person_vs_person_counts(judged)
    diff = paired_ratio_difference(
        jp_num, jp_den, pp_num, pp_den, **boot.kwargs, item_weights=boot.weights(judged)
    ).to_dict()
    jp_r, pp_r = r3(jp["value"]), r3(pp["value"])
    gap = None if jp_r is None or pp_r is None else round(jp_r - pp_r, DIGITS)
    row = {
        "template": key,
        "n_items": len(items),
        "n_with_verdict": len(judged),
        "n_votes": sum(len(it.votes) for it in judged),
        "vs_people": jp,
        "ceiling": pp,
        "gap": gap,
        "difference": diff,
    }
    if gap is None:
        ok = False
        # the same rule reads dev at derive and holdout at the test: the text names neither
        reason = "no judge-vs-person or person-vs-person figure on these items (no verdicts or fewer than two raters per item)"
    elif rule == "lower-bound":
        low = r3(diff["low"])
        ok = low is not None and low > -margin
        reason = (
            f"lower bound of judge - person agreement is {low if low is not None else 'n/a'}, "
            f"{'above' if ok else 'not above'} -{margin:g}"
        )
    else:
        ok = gap >= -margin
        reason = (
            f"judge vs person {jp_r:.3f} vs person vs person {pp_r:.3f}: gap {gap:+.3f}, "
            f"{'within' if ok else 'more than'} the {margin:g} margin"
        )
    return decided_row(row, figures="judge" if ok else "person", reason=reason, too_few=too_few(len(judged), jp, pp))


def item_confidences(
    items: Sequence[PairItem], key_by_category: dict[str, str], judgments: Sequence[Judgment | RecordedCall]
) -> dict[str, float]:
    """Per item with a consistent verdict of its category's template: the judge's confidence in it
    (:func:`juge.policy.confidence.item_confidence`); items without one are left out."""
    ids = {it.item_id for it in items}
    calls: dict[tuple[str, str], list[Judgment | RecordedCall]] = {}
    on_item: dict[str, list[Judgment | RecordedCall]] = {}
    for j in judgments:
        if j.item_id in ids:
            calls.setdefault((f"{j.judge}/{j.template}", j.item_id), []).append(j)
            on_item.setdefault(j.item_id, []).append(j)
    out = {}
    for it in items:
        key = key_by_category.get(it.category)
        on = it.judges.get(key) if key else None
        if key is None or on is None or on.verdict not in ("A", "B", "tie"):
            continue
        out[it.item_id] = item_confidence(
            "pairwise", on.verdict, calls.get((key, it.item_id), []), members=on_item.get(it.item_id, [])
        )
    return out
