"""Pairwise calibration: can a judge stand in for a person, where not, and why.

Definitions (issue 3; the tests pin them on hand-worked cases):

- Verdict from two orders: see :mod:`juge.judges.pairwise`. ``inconsistent`` counts
  as ``tie`` in every agreement figure; a missing verdict (either order refused,
  unparsed, an error or absent) is counted on its own line and excluded.
- Ceiling (person vs person): every pair of distinct raters on the same item (all
  combinations, in the order the votes are listed), pooled over items. Agreement =
  share of equal labels; Cohen's kappa on the pooled pairs (first rater of the pair
  as rows, second as columns, categories A/B/tie); agreement without ties = the
  same over pairs where neither rater said tie; Krippendorff's alpha (nominal) of
  the votes.
- Majority: the label with strictly the most votes; an item with a tie for the top
  has no majority and is left out of every majority comparison (``n_without_majority``).
- Judge vs majority: over items with a majority and a verdict. Judge vs people: every
  human vote against the judge's verdict on that item, pooled. The majority figure
  is never compared with the ceiling (the ceiling is person vs person).
- Intervals: percentile bootstrap over items (all votes/pairs of an item move
  together), seeded, 2,000 resamples, 95 %. A difference is one paired bootstrap
  (``paired_ratio_difference``): both figures are recomputed on the same resampled items.
- Order flip rate: inconsistent verdicts / items with a verdict. Among inconsistent
  items, how often the answer shown first (A in both orders) or second (B in both
  orders) won both times.
- Length bias: among decisive verdicts (A or B) on answers of unequal length, the
  share that picks the longer answer, for the human majority and for each judge; and
  where a decisive judge contradicts a decisive majority, how often it took the longer.
- Self-consistency: among items where a judge was asked again in the same order
  (repeat > 0), the share whose letter changed.
- Reference: a judge's template that uses a reference answer against the same judge
  without it, on the same items (both verdicts present), as a paired difference.
  Two judges with the same template are compared the same way (``differences``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from juge import __version__
from juge.calibration.pairtable import LABELS, ORDERS, PairItem, PairTable
from juge.calibration.results import Calibration
from juge.data.records import OUTCOMES
from juge.stats import Estimate, kappa_estimate, pair_tables, paired_ratio_difference, ratio_estimate
from juge.stats.alpha import alpha_estimate

VERDICTS = ("A", "B", "tie", "inconsistent", "missing")


@dataclass(frozen=True)
class Bootstrap:
    """How intervals are formed: resamples, seed and confidence level."""

    n_resamples: int = 2000
    seed: int = 0
    level: float = 0.95
    item_weights: Mapping[str, float] | None = None  # 1 / chance of items of an unequal-probability draw, by id

    @property
    def kwargs(self) -> dict[str, Any]:
        return {"n_resamples": self.n_resamples, "seed": self.seed, "level": self.level}

    def weights(self, items: Sequence[Any]) -> np.ndarray | None:
        """Each item's weight in a Hajek ratio (None: every item counts alike)."""
        return None if self.item_weights is None else np.array([self.item_weights[it.item_id] for it in items])


def _est(e: Estimate | None) -> dict[str, Any] | None:
    return None if e is None else e.to_dict()


def _label(item: PairItem, key: str) -> str | None:
    on = item.judges.get(key)
    return on.label if on else None


def _agreement_and_kappa(
    items: Sequence[PairItem], pairs: Callable[[PairItem], list[tuple[str, str]]], boot: Bootstrap
) -> dict[str, Estimate]:
    """Pooled agreement and Cohen's kappa over per-item lists of (row label, column label) pairs."""
    per_item = [pairs(it) for it in items]
    num = np.array([sum(a == b for a, b in p) for p in per_item], dtype=float)
    den = np.array([len(p) for p in per_item], dtype=float)
    y1 = [a for p in per_item for a, _ in p]
    y2 = [b for p in per_item for _, b in p]
    index = np.array([i for i, p in enumerate(per_item) for _ in p], dtype=np.int64)
    tables = pair_tables(
        np.array(y1, dtype=object), np.array(y2, dtype=object), index, list(LABELS), n_items=len(items)
    )
    w = boot.weights(items)
    return {
        "agreement": ratio_estimate(num, den, **boot.kwargs, item_weights=w),
        "kappa": kappa_estimate(tables, **boot.kwargs, item_weights=w),
    }


def label_pairs(votes: Sequence[tuple[str, Any]]) -> list[tuple[Any, Any]]:
    """Every pair of distinct raters' labels from (rater, label) votes, in the order they are listed."""
    return [(a, b) for (_, a), (_, b) in combinations(votes, 2)]


def rater_pairs(item: PairItem) -> list[tuple[str, str]]:
    """Every pair of distinct raters' labels on one pairwise item."""
    return label_pairs(item.votes)


def ceiling(items: Sequence[PairItem], boot: Bootstrap = Bootstrap()) -> dict[str, Any]:
    """Person vs person: agreement, kappa and agreement without ties over all rater pairs, pooled."""
    figures = _agreement_and_kappa(items, rater_pairs, boot)
    no_ties = [[(a, b) for a, b in rater_pairs(it) if "tie" not in (a, b)] for it in items]
    without = ratio_estimate(
        [sum(a == b for a, b in p) for p in no_ties], [len(p) for p in no_ties], **boot.kwargs,
        item_weights=boot.weights(items),
    )  # fmt: skip
    return {
        "agreement": _est(figures["agreement"]),
        "kappa": _est(figures["kappa"]),
        "krippendorff_alpha": _est(people_alpha([[v for _, v in it.votes] for it in items], "nominal", boot, LABELS)),
        "agreement_without_ties": _est(without),
        "n_pairs": sum(len(rater_pairs(it)) for it in items),
    }


def people_alpha(
    per_item: Sequence[Sequence[Any]], level: str, boot: Bootstrap, order: Sequence[Any] | None = None
) -> Estimate | None:
    """Krippendorff's alpha among the people (nominal for A/B/tie and PASS/FAIL, ordinal or interval for scores).
    None in a study of weighted items: alpha's coincidences are not weighted, so it is left out, not given unweighted."""
    if boot.item_weights is not None:
        return None
    return alpha_estimate(
        per_item,
        level=level,  # type: ignore[arg-type]
        order=order,
        n_resamples=boot.n_resamples,
        seed=boot.seed,
        confidence=boot.level,
    )


def vs_majority(items: Sequence[PairItem], key: str, boot: Bootstrap = Bootstrap()) -> dict[str, Any]:
    """Judge vs the majority label, over items with a majority and a verdict."""

    def pairs(it: PairItem) -> list[tuple[str, str]]:
        label, majority = _label(it, key), it.majority
        return [(label, majority)] if label is not None and majority is not None else []

    return {k: v.to_dict() for k, v in _agreement_and_kappa(items, pairs, boot).items()}


def vs_people(items: Sequence[PairItem], key: str, boot: Bootstrap = Bootstrap()) -> dict[str, Any]:
    """Judge vs each person: every human vote against the judge's verdict on that item, pooled."""

    def pairs(it: PairItem) -> list[tuple[str, str]]:
        label = _label(it, key)
        return [] if label is None else [(label, vote) for _, vote in it.votes]

    return {k: v.to_dict() for k, v in _agreement_and_kappa(items, pairs, boot).items()}


def verdict_counts(items: Iterable[PairItem], key: str) -> dict[str, int]:
    """A, B, tie, inconsistent and missing verdicts over the items this key judged."""
    counts = dict.fromkeys(VERDICTS, 0)
    for it in items:
        if key in it.judges:
            counts[it.judges[key].verdict or "missing"] += 1
    return counts


def outcome_counts(items: Iterable[PairItem], key: str) -> dict[str, int] | None:
    """Calls by outcome (ok, refused, unparsed, error; every order and repeat); None for baselines."""
    counts = dict.fromkeys(OUTCOMES, 0)
    seen = False
    for it in items:
        on = it.judges.get(key)
        for calls in on.calls.values() if on else ():
            for call in calls:
                seen = True
                counts[call.outcome] += 1
    return counts if seen else None


def order_flip_rate(items: Sequence[PairItem], key: str, boot: Bootstrap = Bootstrap()) -> Estimate:
    """Share of items with a verdict whose verdict is inconsistent (the two orders disagree)."""
    verdicts = [it.judges[key].verdict if key in it.judges else None for it in items]
    return ratio_estimate(
        [v == "inconsistent" for v in verdicts], [v is not None for v in verdicts], **boot.kwargs,
        item_weights=boot.weights(items),
    )  # fmt: skip


def inconsistent_patterns(items: Iterable[PairItem], key: str) -> dict[str, int] | None:
    """Among inconsistent items: the answer shown first won both times (letter A in both orders),
    shown second won both times (B in both), or one order said tie. None without per-order letters."""
    out = {"n": 0, "shown_first_won_both": 0, "shown_second_won_both": 0, "tie_in_one_order": 0}
    has_letters = False
    for it in items:
        on = it.judges.get(key)
        if on is None or not on.calls:
            continue
        has_letters = True
        if on.verdict != "inconsistent":
            continue
        out["n"] += 1
        letters = {on.letter(o) for o in ORDERS}
        if letters == {"A"}:
            out["shown_first_won_both"] += 1
        elif letters == {"B"}:
            out["shown_second_won_both"] += 1
        else:
            out["tie_in_one_order"] += 1
    return out if has_letters else None


def _picks_longer(items: Sequence[PairItem], decision: Callable[[PairItem], str | None], boot: Bootstrap) -> Estimate:
    decided = [decision(it) if it.longer is not None else None for it in items]
    decisive = [d in ("A", "B") for d in decided]
    took_longer = [ok and d == it.longer for ok, d, it in zip(decisive, decided, items)]
    return ratio_estimate(took_longer, decisive, **boot.kwargs, item_weights=boot.weights(items))


def picks_longer(items: Sequence[PairItem], key: str, boot: Bootstrap = Bootstrap()) -> Estimate:
    """Among the judge's decisive verdicts on answers of unequal length, the share for the longer answer."""
    return _picks_longer(items, lambda it: _label(it, key), boot)


def majority_picks_longer(items: Sequence[PairItem], boot: Bootstrap = Bootstrap()) -> Estimate:
    """The same share for the human majority (items with a decisive majority)."""
    return _picks_longer(items, lambda it: it.majority, boot)


def picks_longer_against_majority(items: Sequence[PairItem], key: str, boot: Bootstrap = Bootstrap()) -> Estimate:
    """Where a decisive verdict contradicts a decisive majority: the share that took the longer answer."""

    def decision(it: PairItem) -> str | None:
        label = _label(it, key)
        return label if it.majority in ("A", "B") and label in ("A", "B") and label != it.majority else None

    return _picks_longer(items, decision, boot)


def self_consistency(items: Sequence[PairItem], key: str, boot: Bootstrap = Bootstrap()) -> Estimate | None:
    """Among items asked more than once in the same order, the share whose letter changed; None if none was."""
    changed, asked = [], []
    for it in items:
        on = it.judges.get(key)
        repeated = [calls for calls in (on.calls.values() if on else ()) if len(calls) > 1]
        asked.append(bool(repeated))
        changed.append(any(len({c.letter for c in calls}) > 1 for calls in repeated))
    if not any(asked):
        return None
    return ratio_estimate(changed, asked, **boot.kwargs, item_weights=boot.weights(items))


def disagreements(items: Iterable[PairItem], key: str) -> list[dict[str, Any]]:
    """Items where the judge's label differs from the majority, with the raw text of each order."""
    out = []
    for it in items:
        on = it.judges.get(key)
        if on is None or on.label is None or it.majority is None or on.label == it.majority:
            continue
        out.append(
            {
                "item_id": it.item_id,
                "category": it.category,
                "majority": it.majority,
                "verdict": on.verdict,
                "votes": dict(sorted({lab: sum(v == lab for _, v in it.votes) for lab in LABELS}.items())),
                "letters": {o: on.letter(o) for o in ORDERS} if on.calls else None,
                "texts": {o: on.text(o) for o in ORDERS} if on.calls else None,
            }
        )
    return out


def judge_figures(
    items: Sequence[PairItem], key: str, both_orders: bool, boot: Bootstrap = Bootstrap()
) -> dict[str, Any]:
    """Every figure of one judge key on one subset of items (no per-category breakdown)."""
    judged = [it for it in items if key in it.judges]
    flip = order_flip_rate(items, key, boot) if both_orders else None
    repeat = self_consistency(items, key, boot)
    return {
        "n_items": len(judged),
        "verdict_counts": verdict_counts(judged, key),
        "outcomes": outcome_counts(judged, key),
        "vs_majority": vs_majority(items, key, boot),
        "vs_people": vs_people(items, key, boot),
        "order_flip_rate": _est(flip),
        "inconsistent_patterns": inconsistent_patterns(judged, key) if both_orders else None,
        "picks_longer": picks_longer(items, key, boot).to_dict(),
        "picks_longer_against_majority": picks_longer_against_majority(items, key, boot).to_dict(),
        "self_consistency": _est(repeat),
    }


def reference_templates(table: PairTable) -> list[tuple[str, str]]:
    """(key with reference, key without) pairs of the same judge, detected from the data.

    A template uses the reference when every item it judged has a reference answer and
    the same judge has another template that also judged items without one.
    """
    by_judge: dict[str, list[str]] = {}
    for key, info in table.judges.items():
        if not info.baseline:
            by_judge.setdefault(info.judge, []).append(key)
    pairs = []
    for keys in by_judge.values():
        judged = {k: table.judged_by(k) for k in keys}
        with_ref = [k for k in keys if judged[k] and all(it.has_reference for it in judged[k])]
        without = [k for k in keys if any(not it.has_reference for it in judged[k])]
        pairs += [(a, b) for a in with_ref for b in without]
    return pairs


def paired_vs_people(
    items: Sequence[PairItem], key_a: str, key_b: str, boot: Bootstrap = Bootstrap()
) -> tuple[int, Estimate, Estimate, Estimate]:
    """Agreement with people of two keys on the items where both have a verdict, and ``A - B``.

    Returns (number of items, A's agreement, B's agreement, paired difference): both
    ratios are recomputed on the same resampled items.
    """

    def counts(key: str) -> np.ndarray:
        rows = []
        for it in items:
            label_a, label_b, label = _label(it, key_a), _label(it, key_b), _label(it, key)
            both = label_a is not None and label_b is not None
            rows.append((sum(v == label for _, v in it.votes), len(it.votes)) if both else (0, 0))
        return np.array(rows, dtype=float).reshape(-1, 2).T

    num_a, den_a = counts(key_a)
    num_b, den_b = counts(key_b)
    w = boot.weights(items)
    return (
        int(np.count_nonzero(den_a)),
        ratio_estimate(num_a, den_a, **boot.kwargs, item_weights=w),
        ratio_estimate(num_b, den_b, **boot.kwargs, item_weights=w),
        paired_ratio_difference(num_a, den_a, num_b, den_b, **boot.kwargs, item_weights=w),
    )


def reference_comparison(
    items: Sequence[PairItem], key_with: str, key_without: str, boot: Bootstrap = Bootstrap()
) -> dict[str, Any]:
    """Agreement with people with and without the reference answer, on the same items, paired."""
    n, with_ref, without, difference = paired_vs_people(items, key_with, key_without, boot)
    return {
        "with_reference": key_with,
        "without_reference": key_without,
        "n_items": n,
        "vs_people_with": with_ref.to_dict(),
        "vs_people_without": without.to_dict(),
        "difference": difference.to_dict(),
    }


def judge_differences(
    table: PairTable, items: Sequence[PairItem], boot: Bootstrap = Bootstrap()
) -> list[dict[str, Any]]:
    """Paired differences in agreement with people between judges that used the same template."""
    by_template: dict[str, list[str]] = {}
    for key, info in table.judges.items():
        if not info.baseline and info.template is not None:
            by_template.setdefault(info.template, []).append(key)
    out = []
    for keys in by_template.values():
        for key_a, key_b in combinations(sorted(keys), 2):
            n, a, b, difference = paired_vs_people(items, key_a, key_b, boot)
            out.append(
                {
                    "a": key_a,
                    "b": key_b,
                    "n_items": n,
                    "vs_people_a": a.to_dict(),
                    "vs_people_b": b.to_dict(),
                    "difference": difference.to_dict(),
                }
            )
    return out


def people_summary(items: Sequence[PairItem], boot: Bootstrap = Bootstrap()) -> dict[str, Any]:
    """Counts and the person-vs-person figures of one subset."""
    return {
        "n_items": len(items),
        "n_votes": sum(len(it.votes) for it in items),
        "n_raters": len({r for it in items for r, _ in it.votes}),
        "ceiling": ceiling(items, boot),
        "n_without_majority": sum(it.majority is None for it in items),
        "majority_picks_longer": majority_picks_longer(items, boot).to_dict(),
    }


def pairwise_study(
    table: PairTable,
    *,
    split: str | None = "dev",
    boot: Bootstrap = Bootstrap(),
    progress: Callable[[str, int, int], None] | None = None,
) -> Calibration:
    """The whole pairwise study on one split (``to_dict()`` is the JSON written by ``juge calibrate --json``).

    Top-level keys: kind, split, n_items, n_votes, n_raters, ceiling, n_without_majority,
    majority_picks_longer, per_category (people figures per category), judges (per key:
    n_items, verdict_counts, outcomes, vs_majority, vs_people, order_flip_rate,
    inconsistent_patterns, picks_longer, picks_longer_against_majority, self_consistency,
    per_category, disagreements), reference (with vs without a reference answer, paired),
    differences (judges with the same template, paired), bootstrap, versions, notes.
    ``progress(key, done, total)`` is called before each judge key.
    """
    sub = table.split(split)
    items = sub.items
    categories = sub.categories()
    by_category = {c: [it for it in items if it.category == c] for c in categories}
    people = {c: people_summary(by_category[c], boot) for c in categories}
    result: dict[str, Any] = {"kind": "pairwise", "split": split or "all", **people_summary(items, boot)}
    result["per_category"] = people
    judges: dict[str, Any] = {}
    for done, (key, info) in enumerate(sub.judges.items()):
        if progress:
            progress(key, done, len(sub.judges))
        if not sub.judged_by(key):
            continue
        figures = judge_figures(items, key, info.both_orders, boot)
        figures["per_category"] = {}
        for c in categories:
            if not any(key in it.judges for it in by_category[c]):
                continue
            cat = judge_figures(by_category[c], key, info.both_orders, boot)
            cat["ceiling"] = people[c]["ceiling"]
            figures["per_category"][c] = cat
        figures["disagreements"] = disagreements(items, key)
        judges[key] = figures
    result["judges"] = judges
    result["reference"] = [
        reference_comparison(items, a, b, boot) for a, b in reference_templates(sub) if a in judges and b in judges
    ]
    result["differences"] = [d for d in judge_differences(sub, items, boot) if d["n_items"]]
    result["bootstrap"] = {"n_resamples": boot.n_resamples, "seed": boot.seed, "level": boot.level, "unit": "item"}
    result["versions"] = {
        "juge": __version__,
        "sources_sha256": dict(table.sources),
        "judges": {k: sub.judges[k].to_dict() for k in judges},
    }
    result["notes"] = [
        "The ceiling is person vs person; compare it with judge vs person, never with judge vs majority.",
        "An inconsistent verdict (the two orders disagree) counts as a tie in agreement figures; "
        "a missing verdict is excluded and counted on its own line (missing verdicts).",
        f"{result['n_without_majority']} of {result['n_items']} items have no majority (a tie for the top) "
        "and are left out of every majority comparison.",
    ]
    return Calibration.model_validate(result)
