"""Single-score and PASS/FAIL calibration: a judge's grade of one answer against people's.

Human truth (``truth``), named in the output:

- ``each`` (default, like the ceiling): every rater's label is compared with the
  judge's, pooled over items (an item with three raters gives three pairs);
- ``mean``: the mean of the raters' scores (scores only); agreement and kappa use the
  mean rounded half up to the nearest scale point, correlations use the mean itself;
- ``agree``: only the items where raters agree: two or more raters, all of whom gave
  the same label; that label is the truth (the output says how many items remain).
- ``gold``: one authoritative label per item (a benchmark's answer key); the figures are
  judge vs gold, and there is no person-vs-person ceiling to compare them with. A study
  whose every item holds one label is read so without being told.

Scores: Pearson and Spearman correlation, exact agreement, Cohen's kappa (plain and
quadratic-weighted, on the ordered scale points), Krippendorff's alpha (ordinal) of
the human raters with the judge added as one more rater (the ceiling's alpha is the
raters' alone), and, with a threshold, agreement and kappa on ``score >= threshold``;
the confusion matrix (rows people, columns judge) and the reliability curve (mean
human score per judge score, with interval and n).
PASS/FAIL: agreement, kappa, failures caught (recall on the human FAIL class, "caught
k of n"), false flags (judge FAIL where people said PASS) and the confusion matrix.
A set with no human FAIL says so instead of dividing by zero.
Intervals: percentile bootstrap over items, as in :mod:`juge.calibration.pairwise`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from juge import __version__
from juge.calibration.pairtable import judge_key
from juge.calibration.pairwise import Bootstrap, label_pairs, people_alpha
from juge.calibration.results import Calibration
from juge.data.labels import normalise_passfail
from juge.data.records import OUTCOMES, Case, HumanLabel, Judgment, PairSummary, RecordedCall, Vote
from juge.errors import InputError
from juge.judges.panel import members_of
from juge.stats import Estimate, confusion_table, ratio_estimate
from juge.stats.agreement import KappaWeights
from juge.stats.bootstrap import pair_kappa_estimates
from juge.stats.correlation import pearson_estimate, spearman_estimate

Kind = Literal["score", "passfail"]
Truth = Literal["each", "mean", "agree", "gold"]
TRUTHS: tuple[Truth, ...] = ("each", "mean", "agree", "gold")


def truth_of(value: str) -> Truth:
    """`value` as a Truth (what --truth takes); anything else is an input error."""
    for truth in TRUTHS:
        if truth == value:
            return truth
    raise InputError(f"--truth must be one of {list(TRUTHS)}, got {value!r}")


PASSFAIL = ("PASS", "FAIL")
MAX_FILLED_POINTS = 100


@dataclass
class GradeOnItem:
    """One judge key's grade of one item: the value (None when missing) and the outcome of each call."""

    value: float | str | None
    outcomes: list[str] = field(default_factory=list)
    text: str | None = None


@dataclass
class GradedItem:
    item_id: str
    group: str
    category: str
    split: str | None
    ratings: list[tuple[str, float | str]]
    judges: dict[str, GradeOnItem] = field(default_factory=dict)


@dataclass
class GradeTable:
    kind: Kind
    items: list[GradedItem]
    judges: dict[str, dict[str, Any]]
    sources: dict[str, str] = field(default_factory=dict)
    declared_scale: tuple[float, float] | None = None  # lowest and highest scale point (e.g. from --scale)

    def split(self, name: str | None) -> GradeTable:
        if name in (None, "all"):
            return self
        return replace(self, items=[it for it in self.items if it.split == name])


def _read_value(kind: Kind, verdict: Any) -> float | str | None:
    if isinstance(verdict, dict):
        verdict = next((verdict[k] for k in ("score", "verdict", "label") if k in verdict), None)
    if verdict is None:
        return None
    if kind == "passfail":
        return normalise_passfail(verdict)
    if isinstance(verdict, bool):
        return None
    try:
        value = float(verdict)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def is_score(verdict: Any) -> bool:
    """A judge's verdict that is a number (a score judge's grade), not a PASS/FAIL word."""
    if isinstance(verdict, dict):
        verdict = verdict.get("score")
    return isinstance(verdict, (int, float)) and not isinstance(verdict, bool)


def build_grade_table(
    kind: Kind,
    cases: Iterable[Case | PairSummary],
    labels: Iterable[HumanLabel | Vote],
    judgments: Iterable[Judgment | RecordedCall] = (),
    *,
    baselines: Mapping[str, Mapping[str, Any]] | None = None,
    sources: Mapping[str, str] | None = None,
    declared_scale: tuple[float, float] | None = None,
) -> GradeTable:
    """Per-item table of human ratings and judge grades (first call, repeat 0, is the grade).

    A call that is ok but whose verdict is not a number (scores) or PASS/FAIL is missing,
    never a grade. Items without any human rating are dropped. ``declared_scale`` is the
    scale's lowest and highest point (scores), when known (e.g. ``--scale Bad=1,...,Excellent=4``).
    """
    ratings: dict[str, list[tuple[str, float | str]]] = {}
    for lab in labels:
        value = _read_value(kind, lab.label)
        if value is None:
            raise InputError(
                f"human label {lab.label!r} of rater {lab.rater_id!r} on item {lab.item_id!r} is not "
                + ("PASS or FAIL" if kind == "passfail" else "a number (map words with --scale)")
            )
        ratings.setdefault(lab.item_id, []).append((lab.rater_id, value))
    items = [
        GradedItem(c.id, c.group, c.category or "(none)", c.split, ratings[c.id]) for c in cases if c.id in ratings
    ]
    by_id = {it.item_id: it for it in items}
    judges: dict[str, dict[str, Any]] = {}
    for j in judgments:
        if j.order is not None:
            raise InputError(
                f"judgment of {j.judge!r} on item {j.item_id!r} is pairwise (order {j.order}); "
                "this study grades single answers"
            )
        key = judge_key(j.judge, j.template)
        info = judges.setdefault(
            key, {"judge": j.judge, "template": j.template, "models": [], "template_hashes": [], "baseline": False}
        )
        if j.model not in info["models"]:
            info["models"].append(j.model)
        if j.template_hash and j.template_hash not in info["template_hashes"]:
            info["template_hashes"].append(j.template_hash)
        item = by_id.get(j.item_id)
        if item is None:
            continue
        grade = item.judges.setdefault(key, GradeOnItem(None))
        grade.outcomes.append(j.outcome)
        if j.repeat == 0:
            # a score is never a PASS/FAIL (score 1, the worst, would read as PASS): see scores_as_passfail
            readable = j.outcome == "ok" and not (kind == "passfail" and is_score(j.verdict))
            grade.value = _read_value(kind, j.verdict) if readable else None
            grade.text = j.text
            grade.text = j.text
    for name, values in (baselines or {}).items():
        judges[name] = {"judge": name, "template": None, "models": [], "template_hashes": [], "baseline": True}
        for item in items:
            if item.item_id in values:
                item.judges[name] = GradeOnItem(_read_value(kind, values[item.item_id]))
    return GradeTable(kind, items, judges, dict(sources or {}), declared_scale)


# ---- truth -------------------------------------------------------------------------------


def _round_half_up(x: float) -> float:
    return float(math.floor(x + 0.5))


def truth_pairs(item: GradedItem, truth: Truth) -> list[tuple[float | str, float | str]]:
    """(truth for agreement/kappa, truth for correlation) per comparison on one item."""
    values = [v for _, v in item.ratings]
    if truth in ("each", "gold"):  # gold: one label, checked by the study
        return [(v, v) for v in values]
    if truth == "mean":
        mean = float(np.mean([float(v) for v in values]))  # scores only (checked by the study)
        return [(_round_half_up(mean), mean)]
    if truth == "agree":
        return [(values[0], values[0])] if len(values) >= 2 and len(set(values)) == 1 else []
    raise InputError(f"--truth must be one of {list(TRUTHS)}, got {truth!r}")


def _scale(table: GradeTable, truth: Truth) -> list:
    """The ordered scale points for kappa and the confusion matrix.

    Every whole number from the declared lowest to highest point (``table.declared_scale``; else the
    lowest and highest value given), so a point nobody used keeps its place: quadratic weights are
    ``(i - j)^2`` over positions on this list, and leaving out 3 on a 1-5 scale would make 2 and 4
    neighbours. Any other value a rater or judge gave (and rounded means for truth 'mean') is added.
    A range wider than ``MAX_FILLED_POINTS`` (a stray value, not a rating scale) is not filled in.
    """
    if table.kind == "passfail":
        return list(PASSFAIL)
    values = {v for it in table.items for _, v in it.ratings}
    values |= {g.value for it in table.items for g in it.judges.values() if g.value is not None}
    if truth == "mean":
        values |= {_round_half_up(float(np.mean([float(v) for _, v in it.ratings]))) for it in table.items}
    numbers = [float(v) for v in values if not isinstance(v, str)]  # a score table holds no strings
    ends = table.declared_scale or ((min(numbers), max(numbers)) if numbers else None)
    if ends is not None and all(float(e).is_integer() for e in ends) and ends[1] - ends[0] <= MAX_FILLED_POINTS:
        values |= {float(p) for p in range(int(ends[0]), int(ends[1]) + 1)}
    return sorted(values)


# ---- figures -----------------------------------------------------------------------------


def _pooled(
    items: Sequence[GradedItem],
    pairs: Callable[[GradedItem], list[tuple[Any, Any]]],
    labels: list,
    boot: Bootstrap,
    *,
    weighted: bool,
) -> dict[str, Estimate]:
    per_item = [pairs(it) for it in items]
    num = [sum(a == b for a, b in p) for p in per_item]
    den = [len(p) for p in per_item]
    y1 = np.array([a for p in per_item for a, _ in p], dtype=object)
    y2 = np.array([b for p in per_item for _, b in p], dtype=object)
    index = np.array([i for i, p in enumerate(per_item) for _ in p], dtype=np.int64)
    weights: list[KappaWeights] = [None, "quadratic"] if weighted else [None]
    w = boot.weights(items)
    kappas = pair_kappa_estimates(
        y1, y2, index, labels, n_items=len(items), weights=weights, **boot.kwargs, item_weights=w
    )
    out = {"agreement": ratio_estimate(num, den, **boot.kwargs, item_weights=w), "kappa": kappas[0]}
    if weighted:
        out["weighted_kappa"] = kappas[1]
    return out


def _correlations(
    items: Sequence[GradedItem], pairs: Callable[[GradedItem], list[tuple[float, float]]], boot: Bootstrap
) -> dict[str, Estimate]:
    rows = [(i, a, b) for i, it in enumerate(items) for a, b in pairs(it)]
    clusters = np.array([r[0] for r in rows], dtype=np.int64)
    x = np.array([r[1] for r in rows], dtype=float)
    y = np.array([r[2] for r in rows], dtype=float)
    return {
        name: fn(x, y, clusters=clusters, **boot.kwargs)
        for name, fn in (("pearson", pearson_estimate), ("spearman", spearman_estimate))
    }


def _alpha(items: Sequence[GradedItem], key: str | None, boot: Bootstrap) -> Estimate:
    """Ordinal alpha of the raters, with the judge as one more rater when ``key`` is given (of a score study, whose
    items are never weighted: calibrate refuses one of an unequal-probability draw)."""
    alpha = people_alpha([_values([it])[0] + (_grade_values(it, key) if key else []) for it in items], "ordinal", boot)
    if alpha is None:
        raise ValueError("a score study's items are not weighted")
    return alpha


def _alpha_interval(items: Sequence[GradedItem], boot: Bootstrap) -> Estimate:
    alpha = people_alpha(_values(items), "interval", boot)
    if alpha is None:
        raise ValueError("a score study's items are not weighted")
    return alpha


def _rater_pairs(item: GradedItem) -> list[tuple[Any, Any]]:
    return label_pairs(item.ratings)


def _at_threshold(value: Any, threshold: float) -> str:
    return "at or above" if float(value) >= threshold else "below"


def score_ceiling(
    items: Sequence[GradedItem], labels: list, boot: Bootstrap, threshold: float | None
) -> dict[str, Any]:
    """Person vs person: all pairs of distinct raters on an item, pooled."""
    figures = _pooled(items, _rater_pairs, labels, boot, weighted=True)
    figures |= _correlations(items, lambda it: [(float(a), float(b)) for a, b in _rater_pairs(it)], boot)
    figures["krippendorff_alpha"] = _alpha(items, None, boot)
    figures["krippendorff_alpha_interval"] = _alpha_interval(items, boot)
    out: dict[str, Any] = {k: v.to_dict() for k, v in figures.items()}
    out["n_pairs"] = sum(len(_rater_pairs(it)) for it in items)
    if threshold is not None:
        binary = _pooled(
            items,
            lambda it: [(_at_threshold(a, threshold), _at_threshold(b, threshold)) for a, b in _rater_pairs(it)],
            ["below", "at or above"],
            boot,
            weighted=False,
        )
        out["at_threshold"] = {"threshold": threshold, **{k: v.to_dict() for k, v in binary.items()}}
    return out


def pooled_ceiling(items: Sequence[GradedItem], labels: list, boot: Bootstrap, *, weighted: bool) -> dict[str, Any]:
    """Person vs person agreement and kappa (quadratic-weighted too when ``weighted``), pooled pairs; for
    PASS/FAIL also what one person catches of another's FAIL votes and false flags (ordered pairs)."""
    figures = _pooled(items, _rater_pairs, labels, boot, weighted=weighted)
    alpha = (
        people_alpha(_values(items), "ordinal", boot)
        if weighted  # a score
        else people_alpha(_values(items), "nominal", boot, labels)
    )
    out = {
        **{k: v.to_dict() for k, v in figures.items()},
        "krippendorff_alpha": None if alpha is None else alpha.to_dict(),
        "n_pairs": sum(len(_rater_pairs(it)) for it in items),
    }
    if list(labels) == list(PASSFAIL):  # what one person catches of another's FAIL votes (ordered pairs)
        ordered = [[*_rater_pairs(it), *((b, a) for a, b in _rater_pairs(it))] for it in items]
        caught = _caught(ordered, "FAIL", boot, items)
        out["failures_caught"] = caught if caught["n"] else None
        out["false_flags"] = _caught(ordered, "PASS", boot, items)
    return out


def _grade_values(item: GradedItem, key: str) -> list[Any]:
    grade = item.judges.get(key)
    return [grade.value] if grade is not None and grade.value is not None else []


def _values(items: Sequence[GradedItem]) -> list[list[Any]]:
    return [[v for _, v in it.ratings] for it in items]


def _judge_pairs(
    key: str, truth: Truth, *, for_correlation: bool = False
) -> Callable[[GradedItem], list[tuple[Any, Any]]]:
    def pairs(it: GradedItem) -> list[tuple[Any, Any]]:
        grade = it.judges.get(key)
        if grade is None or grade.value is None:
            return []
        return [(grade.value, t[1] if for_correlation else t[0]) for t in truth_pairs(it, truth)]

    return pairs


def _counts(items: Sequence[GradedItem], key: str, kind: Kind) -> tuple[dict[str, int], dict[str, int] | None]:
    judged = [it.judges[key] for it in items if key in it.judges]
    if kind == "passfail":
        verdicts = {"PASS": 0, "FAIL": 0, "missing": 0}
        for g in judged:
            verdicts[g.value or "missing"] += 1  # type: ignore[index]
    else:
        verdicts = {"scored": sum(g.value is not None for g in judged), "missing": sum(g.value is None for g in judged)}
    outcomes = dict.fromkeys(OUTCOMES, 0)
    for g in judged:
        for o in g.outcomes:
            outcomes[o] += 1
    return verdicts, (outcomes if any(g.outcomes for g in judged) else None)


def _caught(
    per_item: list[list[tuple[Any, Any]]], human: str, boot: Bootstrap, items: Sequence[GradedItem] | None = None
) -> dict[str, Any]:
    """Among comparisons where people said `human`, how many the judge called FAIL (``k`` of ``n`` as drawn; with
    ``items``, the rate weighted as ``boot`` weights them)."""
    num = [sum(j == "FAIL" and h == human for j, h in p) for p in per_item]
    den = [sum(h == human for _, h in p) for p in per_item]
    rate = ratio_estimate(num, den, **boot.kwargs, item_weights=None if items is None else boot.weights(items))
    return {"k": int(sum(num)), "n": int(sum(den)), "rate": rate.to_dict()}


def _confusion(
    items: Sequence[GradedItem], pairs: Callable[[GradedItem], list[tuple[Any, Any]]], labels: list
) -> list[list[int]]:
    """Counts of (person, judge) label pairs, rows people and columns judge, in scale order."""
    flat = [p for it in items for p in pairs(it)]
    people = np.array([h for _, h in flat], dtype=object)
    judge = np.array([j for j, _ in flat], dtype=object)
    return confusion_table(people, judge, labels=labels).tolist()


def _reliability(
    items: Sequence[GradedItem], pairs: Callable[[GradedItem], list[tuple[Any, Any]]], boot: Bootstrap
) -> list[dict[str, Any]]:
    """Mean human score for each judge score (a reliability diagram for ordinal scores).

    Point s: ``sum(human over pairs with judge == s) / #pairs with judge == s``, the
    human side being the correlation truth (each rater, or the unrounded mean); the
    interval is the item bootstrap of that pooled ratio (DeGroot & Fienberg 1983).
    """
    per_item = [pairs(it) for it in items]
    item_of = np.array([i for i, p in enumerate(per_item) for _ in p], dtype=np.int64)
    judge = np.array([float(j) for p in per_item for j, _ in p])
    human = np.array([float(h) for p in per_item for _, h in p])
    points = []
    for score in np.unique(judge):
        at = judge == score
        num = np.bincount(item_of[at], weights=human[at], minlength=len(items))
        den = np.bincount(item_of[at], minlength=len(items))
        mean = ratio_estimate(num, den, **boot.kwargs).to_dict()
        points.append({"judge_score": float(score), "mean_human_score": mean})
    return points


def grade_judge_figures(
    items: Sequence[GradedItem],
    key: str,
    kind: Kind,
    truth: Truth,
    labels: list,
    boot: Bootstrap,
    threshold: float | None,
    *,
    detailed: bool = True,
) -> dict[str, Any]:
    """Figures of one judge key on one subset (``detailed=False``: the per-category subset)."""
    verdicts, outcomes = _counts(items, key, kind)
    pairs = _judge_pairs(key, truth)
    out: dict[str, Any] = {
        "n_items": sum(key in it.judges for it in items),
        "verdict_counts": verdicts,
        "outcomes": outcomes,
    }
    out |= {k: v.to_dict() for k, v in _pooled(items, pairs, labels, boot, weighted=kind == "score").items()}
    if kind == "score" and detailed:
        corr = _correlations(items, _judge_pairs(key, truth, for_correlation=True), boot)
        out |= {k: v.to_dict() for k, v in corr.items()}
        out["krippendorff_alpha"] = _alpha(items, key, boot).to_dict()
        out["confusion"] = {
            "labels": labels,
            "rows": "people",
            "columns": "judge",
            "matrix": _confusion(items, pairs, labels),
        }
        out["reliability"] = _reliability(items, _judge_pairs(key, truth, for_correlation=True), boot)
        if threshold is not None:
            binary = _pooled(
                items,
                lambda it: [(_at_threshold(a, threshold), _at_threshold(b, threshold)) for a, b in pairs(it)],
                ["below", "at or above"],
                boot,
                weighted=False,
            )
            out["at_threshold"] = {"threshold": threshold, **{k: v.to_dict() for k, v in binary.items()}}
    if kind == "passfail":
        if detailed:  # as for scores: the raters with the judge added as one more rater (nominal)
            with_judge = [_values([it])[0] + _grade_values(it, key) for it in items]
            alpha = people_alpha(with_judge, "nominal", boot, list(PASSFAIL))
            out["krippendorff_alpha"] = None if alpha is None else alpha.to_dict()
        per_item = [pairs(it) for it in items]
        failures = _caught(per_item, "FAIL", boot, items)
        out["failures_caught"] = failures if failures["n"] else None
        out["false_flags"] = _caught(per_item, "PASS", boot, items)
        matrix = _confusion(items, pairs, list(PASSFAIL))
        out["confusion"] = {"labels": list(PASSFAIL), "rows": "people", "columns": "judge", "matrix": matrix}
    return out


def passfail_disagreements(items: Sequence[GradedItem], key: str) -> list[dict[str, Any]]:
    """PASS/FAIL items where the judge's verdict differs from the people's strict majority, with the
    vote counts and the judge's raw text (for the report's failure cases)."""
    out = []
    for it in items:
        grade = it.judges.get(key)
        votes = {label: sum(v == label for _, v in it.ratings) for label in PASSFAIL}
        majority = next((label for label in PASSFAIL if 2 * votes[label] > sum(votes.values())), None)
        if grade is None or grade.value is None or majority is None or grade.value == majority:
            continue
        out.append(
            {
                "item_id": it.item_id,
                "category": it.category,
                "majority": majority,
                "verdict": grade.value,
                "votes": votes,
                "text": grade.text,
            }
        )
    return out


def grade_study(
    table: GradeTable,
    *,
    split: str | None = "dev",
    truth: Truth = "each",
    threshold: float | None = None,
    boot: Bootstrap = Bootstrap(),
    progress: Callable[[str, int, int], None] | None = None,
) -> Calibration:
    """The single-score or PASS/FAIL study on one split (``to_dict()`` is what ``juge calibrate --json`` writes)."""
    if truth not in TRUTHS:
        raise InputError(f"--truth must be one of {list(TRUTHS)}, got {truth!r}")
    if table.kind == "passfail" and truth == "mean":
        raise InputError("--truth mean needs numeric scores; for PASS/FAIL use 'each' or 'agree'")
    sub = table.split(split)
    items = sub.items
    labels = _scale(sub, truth)
    kind = table.kind
    categories = sorted({it.category for it in items})
    by_category = {c: [it for it in items if it.category == c] for c in categories}

    def ceiling_of(subset: Sequence[GradedItem]) -> dict[str, Any]:
        if kind == "score":
            return score_ceiling(subset, labels, boot, threshold)
        return pooled_ceiling(subset, labels, boot, weighted=False)

    n_truth = sum(bool(truth_pairs(it, truth)) for it in items)
    result: dict[str, Any] = {
        "kind": kind,
        "split": split or "all",
        "n_items": len(items),
        "n_votes": sum(len(it.ratings) for it in items),
        "n_raters": len({r for it in items for r, _ in it.ratings}),
        "truth": {"mode": truth, "n_items": n_truth},
        "scale": labels,
        "ceiling": ceiling_of(items),
    }
    notes = []
    if truth == "agree":
        notes.append(f"Only items where the people agree ({n_truth} of {len(items)} items remain).")
    if kind == "passfail" and not any(v == "FAIL" for it in items for _, v in it.ratings):
        notes.append(
            "No human FAIL in this set: failures caught cannot be measured (the set is probably too easy "
            "to tell whether the judge catches failures)."
        )
    judges: dict[str, Any] = {}
    for done, key in enumerate(sub.judges):
        if progress:
            progress(key, done, len(sub.judges))
        if not any(key in it.judges for it in items):
            continue
        figures = grade_judge_figures(items, key, kind, truth, labels, boot, threshold)
        if kind == "passfail":
            figures["disagreements"] = passfail_disagreements(items, key)
        figures["per_category"] = {
            c: {
                **grade_judge_figures(by_category[c], key, kind, truth, labels, boot, threshold, detailed=False),
                "ceiling": pooled_ceiling(by_category[c], labels, boot, weighted=kind == "score"),
            }
            for c in categories
            if any(key in it.judges for it in by_category[c])
        }
        judges[key] = figures
    result["judges"] = judges
    result["bootstrap"] = {"n_resamples": boot.n_resamples, "seed": boot.seed, "level": boot.level, "unit": "item"}
    result["versions"] = {
        "juge": __version__,
        "sources_sha256": dict(table.sources),
        "judges": {
            k: {**sub.judges[k], "models": sorted(sub.judges[k]["models"]), **members_of(sub.judges[k]["models"])}
            for k in judges
        },
    }
    if truth != "gold":  # one label per item: there is no ceiling to compare with
        notes.append("The ceiling is person vs person; compare it with the judge's figures against each person.")
    result["notes"] = notes
    return Calibration.model_validate(result)
