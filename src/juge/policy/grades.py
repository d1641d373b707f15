"""Policies for judges that grade one answer: PASS/FAIL, and a score with a threshold.

The same shape as the pairwise policy (:mod:`juge.policy.derivation`), with the figures that fit a grade:

1. The judge is the better candidate by :mod:`juge.calibration.better` (the rule calibrate and tune use):
   the highest kappa with each person on dev (quadratic-weighted for scores), and for PASS/FAIL a candidate
   that catches fewer failures than one person catches of another's never wins over one that does;
   compared on the items where every candidate has a grade; ties by agreement, then key.
2. (Reference prompts are a pairwise rule; a grade judge uses one template everywhere.)
3. Per category, on that category's dev items where the judge has a grade, against person vs person on
   the same items (every pair of distinct raters), compared as printed (3 decimals):

   - PASS/FAIL: the judge decides alone when its agreement AND its kappa with each person are within
     ``margin`` of person vs person, AND its *failures caught* (the share of human FAIL votes it calls
     FAIL) is not below what one person catches of another's FAILs (over ordered pairs of raters: among
     the FAIL votes of one, the share the other also called FAIL), AND, with ``min_recall``, not below
     that either. False flags (the share of human PASS votes it calls FAIL, and the people's own) are
     reported next to it. A category with no human FAIL on dev cannot show that the judge catches
     failures: it goes to a person.
   - Scores: the judge decides alone when its agreement at the threshold (``score >= threshold`` on both
     sides) AND its quadratic-weighted kappa with each person are within ``margin`` of person vs person.
     The threshold is ``threshold`` when given, else chosen on dev from the labels alone: the scale point
     at which people agree most with each other on pass/fail (kappa at the threshold, as printed; ties to
     the lower point), so the cut is one people can reproduce and the judge plays no part in choosing it.

4. An item whose judgment is refused, unparsed, an error or missing goes to a person (first, whatever
   its category).
5. A weekly audit, as for pairs.

6. ``rule="guarantee"``: items route by the judge's confidence (:mod:`juge.policy.confidence`), the threshold
   chosen on dev by fixed-sequence testing (:func:`juge.policy.guarantee.guarantee_block`); the guarantee bounds
   the disagreement with the people's majority (PASS/FAIL; for scores, pass/fail at the threshold); an item
   without a majority stays out of the walk. ``cascade``: the stages of :mod:`juge.policy.cascade`, each with
   rule 3 for its judge (:func:`derive_grade_cascade`).

``rule="lower-bound"`` is pairwise only (a grade category compares several figures, not one paired difference).
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from juge import __version__
from juge.calibration import better
from juge.calibration.grades import (
    PASSFAIL,
    GradedItem,
    GradeOnItem,
    GradeTable,
    Kind,
    _at_threshold,
    _caught,
    _judge_pairs,
    _pooled,
    _rater_pairs,
    _read_value,
    _scale,
    build_grade_table,
)
from juge.calibration.inputs import StudyInputs
from juge.calibration.pairwise import Bootstrap
from juge.data.records import Case, HumanLabel, Judgment, RecordedCall
from juge.errors import InputError
from juge.judges.panel import members_of
from juge.policy.conclusion import gap_conclusion, guarantee_conclusion, margin_gap, overall_conclusion
from juge.policy.confidence import SOURCES, item_confidence, missing_repeats, repeats_on, routed_confidence
from juge.policy.configurations import Agreement, Decided, Measure
from juge.policy.decision import decided_row, too_few
from juge.policy.file import (
    DIGITS,
    POLICY_FORMAT,
    SCHEMA_VERSION,
    no_split_error,
    policy_hash,
    r3,
    split_hash,
)
from juge.policy.guarantee import check_on_holdout, guarantee_block
from juge.policy.markdown import decision_cell, in_short, table_cell, too_few_paragraph, weighting_lines
from juge.policy.results import PolicyResult
from juge.policy.routed import (
    JUDGE,
    PERSON,
    REASON_MISSING,
    REASON_UNCALIBRATED,
    RouteDecision,
    category_route,
    check_versions,
    confidence_route,
)
from juge.stats import ratio_estimate

POLICY_KEY = "policy"


@dataclass
class GradeStudyData:
    """What a grade policy reads: items, human labels, recorded judgments of one kind, the files' hashes."""

    kind: Kind
    cases: list[Case]
    labels: list[HumanLabel]
    judgments: list[Judgment]
    baselines: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    declared_scale: tuple[float, float] | None = None

    def table(self) -> GradeTable:
        return build_grade_table(
            self.kind,
            self.cases,
            self.labels,
            self.judgments,
            baselines=self.baselines,
            sources=self.sources,
            declared_scale=self.declared_scale,
        )


def grade_study_data(inputs: StudyInputs) -> GradeStudyData:
    data = inputs.data
    if inputs.kind not in ("passfail", "score"):
        raise InputError(f"these items are a {inputs.kind} study, not PASS/FAIL or scores")
    kind: Kind = "passfail" if inputs.kind == "passfail" else "score"
    return GradeStudyData(
        kind,
        list(data.cases),  # type: ignore[arg-type]
        list(data.labels),  # type: ignore[arg-type]
        list(inputs.judgments),  # type: ignore[arg-type]
        dict(data.baselines),
        dict(data.sources),
        inputs.declared_scale,
    )


# ---- figures --------------------------------------------------------------------------------


def _has_grade(item: GradedItem, key: str) -> bool:
    return key in item.judges and item.judges[key].value is not None


def _ordered_rater_pairs(item: GradedItem) -> list[tuple[Any, Any]]:
    """(other, reference) for every ordered pair of distinct raters: one person's label against another's."""
    pairs = _rater_pairs(item)
    return pairs + [(b, a) for a, b in pairs]


def _threshold_pairs(pairs_of, threshold: float):
    return lambda it: [(_at_threshold(a, threshold), _at_threshold(b, threshold)) for a, b in pairs_of(it)]


def grade_figures(
    items: Sequence[GradedItem], key: str, kind: Kind, labels: list, boot: Bootstrap, threshold: float | None
) -> dict[str, Any]:
    """Judge vs each person and person vs person on the same items (those where the judge has a grade)."""
    judged = [it for it in items if _has_grade(it, key)]
    jp_pairs = _judge_pairs(key, "each")
    judge: dict[str, Any] = {
        k: v.to_dict() for k, v in _pooled(judged, jp_pairs, labels, boot, weighted=kind == "score").items()
    }
    people: dict[str, Any] = {
        k: v.to_dict() for k, v in _pooled(judged, _rater_pairs, labels, boot, weighted=kind == "score").items()
    }
    out: dict[str, Any] = {"n_items": len(items), "n_with_verdict": len(judged), "judge": judge, "people": people}
    out["n_votes"] = sum(len(it.ratings) for it in judged)
    if kind == "passfail":
        per_judge = [jp_pairs(it) for it in judged]
        per_people = [_ordered_rater_pairs(it) for it in judged]
        judge["failures_caught"] = _caught(per_judge, "FAIL", boot, judged)
        judge["false_flags"] = _caught(per_judge, "PASS", boot, judged)
        people["failures_caught"] = _caught(per_people, "FAIL", boot, judged)
        people["false_flags"] = _caught(per_people, "PASS", boot, judged)
    elif threshold is not None:
        binary = ["below", "at or above"]
        judge["at_threshold"] = {
            k: v.to_dict()
            for k, v in _pooled(judged, _threshold_pairs(jp_pairs, threshold), binary, boot, weighted=False).items()
        }
        people["at_threshold"] = {
            k: v.to_dict()
            for k, v in _pooled(judged, _threshold_pairs(_rater_pairs, threshold), binary, boot, weighted=False).items()
        }
    return out


def _gap(judge: dict[str, Any] | None, people: dict[str, Any] | None) -> float | None:
    j, p = r3((judge or {}).get("value")), r3((people or {}).get("value"))
    return None if j is None or p is None else round(j - p, DIGITS)


def decide(
    figures: dict[str, Any], kind: Kind, *, margin: float, min_recall: float | None
) -> tuple[str, str, dict[str, Any]]:
    """(decision, reason in words, the checks with their figures) for one category."""
    j, p = figures["judge"], figures["people"]
    if kind == "passfail":
        measures = [("agreement", j["agreement"], p["agreement"]), ("kappa", j["kappa"], p["kappa"])]
    else:
        at_j, at_p = j.get("at_threshold") or {}, p.get("at_threshold") or {}
        measures = [
            ("agreement at the threshold", at_j.get("agreement"), at_p.get("agreement")),
            ("weighted kappa", j["weighted_kappa"], p["weighted_kappa"]),
        ]
    checks: dict[str, Any] = {}
    words, ok = [], True
    for name, je, pe in measures:
        gap = _gap(je, pe)
        if gap is None:
            return (
                PERSON,
                f"no judge-vs-person or person-vs-person {name} (no grades, or fewer than two raters per item)",
                checks,
            )
        passed = gap >= -margin
        checks[name] = {"judge": r3(je["value"]), "people": r3(pe["value"]), "gap": gap, "ok": passed}
        ok &= passed
        words.append(
            f"{name} {r3(je['value']):.3f} vs {r3(pe['value']):.3f} ({gap:+.3f}, "
            f"{'within' if passed else 'more than'} the {margin:g} margin)"
        )
    if kind == "passfail":
        jr, pr = j["failures_caught"], p["failures_caught"]
        jv, pv = r3(jr["rate"]["value"]), r3(pr["rate"]["value"])
        if jv is None:
            return PERSON, "no human FAIL on dev: failures caught cannot be measured; " + "; ".join(words), checks
        if pv is None:
            return (
                PERSON,
                "no two people rated an item one of them called FAIL: the people's failures caught cannot be "
                "measured; " + "; ".join(words),
                checks,
            )
        bar = max(pv, min_recall) if min_recall is not None else pv
        passed = jv >= bar
        checks["failures caught"] = {"judge": jv, "people": pv, "min_recall": min_recall, "ok": passed}
        ok &= passed
        need = f"one person catches {pv:.3f} of another's" + (
            f", --min-recall {min_recall:g}" if min_recall is not None else ""
        )
        words.append(
            f"failures caught {jv:.3f} (caught {jr['k']} of {jr['n']}; {need}: {'not below' if passed else 'below'})"
        )
        words.append(
            f"false flags {r3(j['false_flags']['rate']['value'])} (people {r3(p['false_flags']['rate']['value'])})"
        )
    return (JUDGE if ok else PERSON), "; ".join(words), checks


def _num(e: dict[str, Any]) -> str:
    return "n/a" if e.get("value") is None else f"{e['value']:.3f}"


def category_row(
    items: Sequence[GradedItem],
    key: str,
    kind: Kind,
    labels: list,
    boot: Bootstrap,
    *,
    threshold: float | None,
    margin: float,
    min_recall: float | None,
) -> dict[str, Any]:
    """Rule 3 on one category (dev, or the same measured on holdout): figures, decision, reason."""
    figures = grade_figures(items, key, kind, labels, boot, threshold)
    decision, reason, checks = decide(figures, kind, margin=margin, min_recall=min_recall)
    # The headline pair (a report's "judge vs person" and "person vs person" columns): agreement, at the
    # threshold for scores.
    if kind == "passfail":
        jp, pp = figures["judge"]["agreement"], figures["people"]["agreement"]
    else:
        jp = (figures["judge"].get("at_threshold") or {}).get("agreement") or {}
        pp = (figures["people"].get("at_threshold") or {}).get("agreement") or {}
    row = {
        "template": key,
        **figures,
        "checks": checks,
        # The agreements under the keys a pairwise policy uses, so reports read either kind alike.
        "vs_people": jp,
        "ceiling": pp,
        "gap": _gap(jp, pp),
    }
    thin = too_few(figures["n_with_verdict"], figures["judge"]["agreement"], figures["people"]["agreement"])
    return decided_row(row, figures=decision, reason=reason, too_few=thin)


# ---- derive ---------------------------------------------------------------------------------


def choose_threshold(items: Sequence[GradedItem], scale: list, boot: Bootstrap) -> dict[str, Any]:
    """The scale point (above the lowest) at which people agree most with each other on pass/fail."""
    rows: list[dict[str, Any]] = []
    for t in scale[1:]:
        fig = _pooled(items, _threshold_pairs(_rater_pairs, float(t)), ["below", "at or above"], boot, weighted=False)
        rows.append({"threshold": float(t), "kappa": fig["kappa"].to_dict(), "agreement": fig["agreement"].to_dict()})
    usable = [r for r in rows if r["kappa"]["value"] is not None]
    if not usable:
        raise InputError(
            "cannot choose a threshold on dev: no item has two raters who gave a score (or the scale has one "
            "point); give --threshold N"
        )
    best = max(usable, key=lambda r: (r3(r["kappa"]["value"]), -r["threshold"]))
    return {"chosen": best["threshold"], "how": "people's kappa at the threshold on dev, highest", "candidates": rows}


def _candidates(table: GradeTable, names: Sequence[str] | None) -> list[str]:
    if names:
        keys = [k for k, info in table.judges.items() if k in names or info["judge"] in names]
        if not keys:
            raise InputError(f"--judge {', '.join(names)}: no such judge in the data; known: {', '.join(table.judges)}")
        return keys
    keys = [k for k, info in table.judges.items() if not info["baseline"]]
    if not keys:
        raise InputError("no judge in the judgments to derive a policy for")
    return keys


def choose_grade_judge(
    items: Sequence[GradedItem], candidates: Sequence[str], kind: Kind, labels: list, boot: Bootstrap
) -> dict[str, Any]:
    """Rule 1 by :mod:`juge.calibration.better` (the rule calibrate and tune use): weighted kappa for
    scores; for PASS/FAIL kappa, and a candidate that catches fewer failures than one person catches of
    another's never wins. Ties by agreement, then key."""
    shared = [it for it in items if all(_has_grade(it, k) for k in candidates)]
    if not shared:
        raise InputError("no dev item on which every candidate judge has a grade; name the candidates with --judge")
    main = better.measure(kind)
    bar = _people_caught(shared, boot) if kind == "passfail" else None
    rows: list[dict[str, Any]] = []
    for key in sorted(candidates):
        n = sum(_has_grade(it, key) for it in items)
        vs_people: dict[str, Any] = {
            k: v.to_dict()
            for k, v in _pooled(shared, _judge_pairs(key, "each"), labels, boot, weighted=kind == "score").items()
        }
        if kind == "passfail":
            per_item = [_judge_pairs(key, "each")(it) for it in shared]
            vs_people["failures_caught"] = _caught(per_item, "FAIL", boot, shared)
            vs_people["false_flags"] = _caught(per_item, "PASS", boot, shared)
        rows.append(
            {
                "key": key,
                "coverage": {"value": n / len(items), "n_with_verdict": n, "n_items": len(items)},
                "vs_people": vs_people,
            }
        )
    merits = [
        better.Merit(
            r["vs_people"][main]["value"],
            r["vs_people"]["agreement"]["value"],
            (r["vs_people"].get("failures_caught") or {}).get("rate", {}).get("value"),
            bar,
            kind == "passfail",
        )
        for r in rows
    ]
    rows = [rows[i] for i in better.order(merits)]
    return {
        "by": main,
        "candidates": rows,
        "references": _references(shared, kind, labels, boot),
        "n_shared_items": len(shared),
        "chosen": rows[0]["key"],
        "runner_up": rows[1]["key"] if len(rows) > 1 else None,
    }


def _references(items: Sequence[GradedItem], kind: Kind, labels: list, boot: Bootstrap) -> list[dict[str, Any]]:
    """The rows beside the candidates, on the same items, that make no call: person vs person, and a trivial
    judge (always PASS for PASS/FAIL, else the people's most common label on dev)."""
    weighted = kind == "score"
    people: dict[str, Any] = {
        k: v.to_dict() for k, v in _pooled(items, _rater_pairs, labels, boot, weighted=weighted).items()
    }
    votes = [v for it in items for _, v in it.ratings]
    trivial: float | str | None = "PASS"
    name = "always PASS"
    if kind != "passfail":
        trivial = Counter(votes).most_common(1)[0][0] if votes else None
        name = f"majority label (always {trivial:g})" if isinstance(trivial, float) else "majority label"

    def always(it: GradedItem) -> list[tuple[Any, Any]]:
        return [(trivial, v) for _, v in it.ratings] if trivial is not None else []

    baseline: dict[str, Any] = {
        k: v.to_dict() for k, v in _pooled(items, always, labels, boot, weighted=weighted).items()
    }
    if kind == "passfail":
        ordered = [_ordered_rater_pairs(it) for it in items]
        people["failures_caught"], people["false_flags"] = (
            _caught(ordered, "FAIL", boot, items),
            _caught(ordered, "PASS", boot, items),
        )
        constant = [always(it) for it in items]
        baseline["failures_caught"] = _caught(constant, "FAIL", boot, items)
        baseline["false_flags"] = _caught(constant, "PASS", boot, items)
    return [{"key": "person vs person", "vs_people": people}, {"key": name, "vs_people": baseline}]


def _people_caught(items: Sequence[GradedItem], boot: Bootstrap) -> float | None:
    """What one person catches of another's FAIL votes on `items` (ordered pairs of raters; each item counting as
    ``boot`` weights it)."""
    per_item = [[a for a, b in _ordered_rater_pairs(it) if b == "FAIL"] for it in items]
    given = boot.weights(items)
    w = [1.0] * len(items) if given is None else given.tolist()
    den = sum(wi * len(f) for wi, f in zip(w, per_item))
    return sum(wi * f.count("FAIL") for wi, f in zip(w, per_item)) / den if den else None


def majority_side(item: GradedItem, kind: Kind, threshold: float | None) -> str | float | None:
    """The people's majority on an item: PASS/FAIL, or for scores the side of the pass threshold (``below`` /
    ``at or above``); None on a tie."""
    votes = [v if kind == "passfail" else _at_threshold(v, float(threshold or 0)) for _, v in item.ratings]
    counts = Counter(votes).most_common(2)
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def grade_disagrees(item: GradedItem, key: str, kind: Kind, threshold: float | None) -> bool | None:
    """Whether the judge's grade differs from the people's majority (for scores: on which side of the pass
    threshold); None without a grade or a majority. What the guarantee bounds for a grade judge."""
    grade = item.judges.get(key)
    majority = majority_side(item, kind, threshold)
    if grade is None or grade.value is None or majority is None:
        return None
    mine = grade.value if kind == "passfail" else _at_threshold(grade.value, float(threshold or 0))
    return mine != majority


def grade_confidences(
    items: Sequence[GradedItem],
    key: str,
    kind: Kind,
    judgments: Iterable[Judgment | RecordedCall],
    threshold: float | None,
    scale: Sequence[Any],
) -> list[float | None]:
    """Per item the judge's confidence in its grade (:func:`juge.policy.confidence.item_confidence` over every
    call of ``key`` there, repeats included); None without a grade."""
    ids = {it.item_id for it in items}
    calls: dict[str, list[Judgment | RecordedCall]] = {}
    on_item: dict[str, list[Judgment | RecordedCall]] = {}
    for j in judgments:
        if j.item_id in ids:
            on_item.setdefault(j.item_id, []).append(j)
            if f"{j.judge}/{j.template}" == key:
                calls.setdefault(j.item_id, []).append(j)
    out: list[float | None] = []
    for it in items:
        grade = it.judges.get(key)
        if grade is None or grade.value is None:
            out.append(None)
            continue
        mine, others = calls.get(it.item_id, []), on_item.get(it.item_id, [])
        out.append(item_confidence(kind, grade.value, mine, threshold=threshold, scale=scale, members=others))
    return out


def grade_stage_key(table: GradeTable, name: str) -> str:
    """The judge key of one cascade stage: a key as given, or the judge's only template."""
    keys = [k for k, info in table.judges.items() if k == name or info["judge"] == name]
    if not keys:
        raise InputError(f"--cascade {name}: no such judge in the data; known: {', '.join(table.judges)}")
    if len(keys) > 1:
        raise InputError(f"--cascade {name}: the judge has several prompts ({', '.join(keys)}); name one")
    return keys[0]


def derive_grade_cascade(
    items: Sequence[GradedItem],
    table: GradeTable,
    judgments: Sequence[Judgment | RecordedCall],
    names: Sequence[str],
    kind: Kind,
    labels: list,
    boot: Bootstrap,
    *,
    threshold: float | None,
    margin: float,
    min_recall: float | None,
    target: float,
    confidence: float,
    prices: Mapping[str, Mapping[str, float]] | None = None,
    minutes_per_label: float | None = None,
    minute_price: float | None = None,
) -> dict[str, Any]:
    """The cascade block of a grade policy: per stage the category rule (rule 3 for that judge), then the
    confidences in the categories it may decide; the walk, the configurations and the choice are the pairwise
    ones (:func:`juge.policy.cascade.configured_cascade`), agreement measured by :func:`grade_measure`."""
    from juge.judges.panel import PANEL_MODEL
    from juge.policy.cascade import configured_cascade
    from juge.policy.configurations import MINUTES_PER_LABEL

    others = []  # every other judge with one template: the configurations compare with it alone
    for name in sorted({info["judge"] for info in table.judges.values()} - set(names)):
        try:
            grade_stage_key(table, name)
        except InputError:  # several prompts: the user names one with --cascade
            continue
        others.append(name)
    blocks = {
        n: _grade_stage_block(
            items, table, judgments, n, kind, labels, boot, threshold=threshold, margin=margin, min_recall=min_recall
        )
        for n in [*names, *others]
    }
    panels = {
        n for n, b in blocks.items() if any(m.startswith(PANEL_MODEL) for m in table.judges[b[0]["judge"]]["models"])
    }
    return configured_cascade(
        items, judgments, names, blocks, measure=grade_measure(items, kind, labels, threshold, boot), panels=panels,
        rule="margin", source=SOURCES[kind], target=target, confidence=confidence, boot=boot, prices=prices,
        minutes_per_label=MINUTES_PER_LABEL if minutes_per_label is None else minutes_per_label,
        minute_price=minute_price,
    )  # fmt: skip


def _grade_stage_block(
    items: Sequence[GradedItem],
    table: GradeTable,
    judgments: Sequence[Judgment | RecordedCall],
    name: str,
    kind: Kind,
    labels: list,
    boot: Bootstrap,
    *,
    threshold: float | None,
    margin: float,
    min_recall: float | None,
) -> tuple[dict[str, Any], list[float | None], list[bool | None]]:
    """One grade judge as a stage: its category rows, and per dev item its confidence (None: it may not decide
    the item) and whether it disagrees with the majority (None: no majority, or it may not decide)."""
    from juge.policy.configurations import category_allows

    categories = sorted({it.category for it in items})
    key = grade_stage_key(table, name)
    rows = {
        c: category_row(
            [it for it in items if it.category == c],
            key,
            kind,
            labels,
            boot,
            threshold=threshold,
            margin=margin,
            min_recall=min_recall,
        )  # fmt: skip
        for c in categories
    }
    allowed = {c for c, r in rows.items() if category_allows(c, r)}
    conf = grade_confidences(items, key, kind, judgments, threshold, labels)
    conf = [c if it.category in allowed else None for it, c in zip(items, conf)]
    disagrees = [None if c is None else grade_disagrees(it, key, kind, threshold) for it, c in zip(items, conf)]
    repeats = repeats_on(judgments, [key], {it.item_id for it in items})
    stage = {"name": name, "judge": key, "templates_by_category": dict.fromkeys(categories, key),
             "reference": {}, "categories": rows, "repeats": repeats}  # fmt: skip
    return stage, conf, disagrees


def derive_grade_policy(
    data: GradeStudyData,
    *,
    split: str = "dev",
    margin: float = 0.05,
    rule: str = "margin",
    min_recall: float | None = None,
    threshold: float | None = None,
    judges: Sequence[str] | None = None,
    audit_n: int = 10,
    boot: Bootstrap = Bootstrap(),
    target: float = 0.9,
    confidence: float = 0.9,
    cascade: Sequence[str] | None = None,
    prices: Mapping[str, Mapping[str, float]] | None = None,
    minutes_per_label: float | None = None,
    minute_price: float | None = None,
) -> dict[str, Any]:
    """A PASS/FAIL or score policy on the dev split (see the module's rules), as the policy file's dict; with
    ``rule="guarantee"`` items route by confidence (rule 6), with ``cascade`` (judge names, cheapest first) a
    cascade of those judges (:mod:`juge.policy.cascade`)."""
    if rule not in ("margin", "guarantee"):
        raise InputError(
            f"--rule {rule}: PASS/FAIL and score policies use the margin or the guarantee rule (lower-bound is "
            "for pairwise judges)"
        )
    if cascade and rule == "guarantee":
        raise InputError(
            "--cascade already routes each stage by confidence with a guarantee; its --rule is the category "
            "rule of each stage: margin (the default)"
        )
    if cascade and judges:
        raise InputError("--cascade names the judges of its stages; leave out --judge")
    if not 0 <= margin < 1:
        raise InputError(f"--margin {margin}: must be between 0 and 1")
    if min_recall is not None and not 0 <= min_recall <= 1:
        raise InputError(f"--min-recall {min_recall}: must be a share between 0 and 1")
    if min_recall is not None and data.kind != "passfail":
        raise InputError("--min-recall applies to PASS/FAIL judges (failures caught)")
    if threshold is not None and data.kind != "score":
        raise InputError("--threshold applies to score judges")
    if threshold is not None and not math.isfinite(threshold):  # NaN passes no score: every item a fail
        raise InputError(f"--threshold must be a finite score, got {threshold:g}")
    table = data.table()
    sub = table.split(split)
    items = sub.items
    if not items:
        raise no_split_error(split, data.cases)
    labels = _scale(sub, "each")
    threshold_choice = None
    if data.kind == "score" and threshold is None:
        threshold_choice = choose_threshold(items, labels, boot)
        threshold = threshold_choice["chosen"]
    if cascade:
        judges = [grade_stage_key(sub, cascade[0])]
    selection = choose_grade_judge(items, _candidates(sub, judges), data.kind, labels, boot)
    key = selection["chosen"]
    categories = sorted({it.category for it in items})
    per_category = {
        c: category_row(
            [it for it in items if it.category == c],
            key,
            data.kind,
            labels,
            boot,
            threshold=threshold,
            margin=margin,
            min_recall=min_recall,
        )
        for c in categories
    }
    guarantee = cascade_block = None
    if rule == "guarantee":
        guarantee = guarantee_block(
            grade_confidences(items, key, data.kind, data.judgments, threshold, labels),
            [grade_disagrees(it, key, data.kind, threshold) for it in items],
            target=target, confidence=confidence, source=SOURCES[data.kind],
            repeats=repeats_on(data.judgments, [key], {it.item_id for it in items}),
        )  # fmt: skip
    if cascade:
        cascade_block = derive_grade_cascade(
            items, sub, data.judgments, cascade, data.kind, labels, boot, threshold=threshold, margin=margin,
            min_recall=min_recall, target=target, confidence=confidence, prices=prices,
            minutes_per_label=minutes_per_label, minute_price=minute_price,
        )  # fmt: skip
    used_keys = sorted({key} | {s["judge"] for s in (cascade_block or {}).get("stages", [])})
    dev_cases = [c for c in data.cases if c.id in {it.item_id for it in items}]
    policy: dict[str, Any] = {
        "kind": "juge-policy",
        "format": POLICY_FORMAT,
        "schema_version": SCHEMA_VERSION,
        "judge_kind": data.kind,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "juge_version": __version__,
        "rule": rule,
        "margin": margin,
        "min_recall": min_recall,
        "threshold": threshold,
        "threshold_choice": threshold_choice,
        "scale": labels,
        "judge": key,
        "templates_by_category": dict.fromkeys(categories, key),
        "judges": {
            k: {
                **sub.judges[k],
                "models": sorted(list(sub.judges[k]["models"])),
                "template_hashes": sorted(list(sub.judges[k]["template_hashes"])),
                **members_of(sub.judges[k]["models"]),
            }
            for k in used_keys
        },
        "dev": {
            "split": split,
            "data_hash": split_hash(dev_cases, data.labels),
            "n_items": len(items),
            "n_votes": sum(len(it.ratings) for it in items),
            "groups": sorted({it.group for it in items}),
            "sources_sha256": dict(data.sources),
        },
        "selection": selection,
        "reference": {},
        "categories": per_category,
        "guarantee": guarantee,
        **({"cascade": cascade_block} if cascade_block else {}),
        "audit": {"n": audit_n, "every": "week"},
        "bootstrap": {"n_resamples": boot.n_resamples, "seed": boot.seed, "level": boot.level, "unit": "item"},
    }
    policy["policy_hash"] = policy_hash(policy)
    policy["status"] = "untested"  # juge.policy.status: no holdout test yet
    return policy


# ---- route ----------------------------------------------------------------------------------


def route_grade_item(
    policy: PolicyResult, item_id: str, category: str | None, judgments: Iterable[Judgment]
) -> RouteDecision:
    """Route one single-answer item with its judgments: item-level reasons first, then the category."""
    category = category or "(none)"
    key = policy.templates_by_category.get(category)
    if key is None:
        return RouteDecision(
            item_id, category, PERSON, REASON_UNCALIBRATED, f"the policy has no dev figures for category {category!r}",
            None, None,
        )  # fmt: skip
    judgments = [j for j in judgments if j.item_id == item_id]
    calls = [j for j in judgments if f"{j.judge}/{j.template}" == key]
    if not calls:
        info = policy.judges[key]
        return RouteDecision(
            item_id, category, PERSON, REASON_MISSING,
            f"no judgment from the policy's judge {info.judge!r} with template {info.template!r}", None, key,
        )  # fmt: skip
    check_versions(policy, key, calls)
    first = min(calls, key=lambda j: j.repeat)
    kind = _kind(policy)
    value = _read_value(kind, first.verdict) if first.outcome == "ok" else None
    if value is None:
        problem = (
            first.outcome
            if first.outcome != "ok"
            else f"verdict {first.verdict!r} is not " + ("PASS or FAIL" if kind == "passfail" else "a score")
        )
        return RouteDecision(item_id, category, PERSON, REASON_MISSING, problem, None, key)
    verdict, passes = _verdict(policy, value)
    if policy.rule == "guarantee":
        g = policy.guarantee
        short = missing_repeats(calls, None if g is None else g.repeats)
        if short:
            return RouteDecision(item_id, category, PERSON, REASON_MISSING, short, verdict, key, passes=passes)
        conf = routed_confidence(policy, verdict, calls, judgments)
        return confidence_route(
            item_id, category, verdict, key, conf, None if g is None else g.threshold, passes=passes
        )
    decided = policy.decision(category)
    assert decided is not None  # templates_by_category and categories name the same categories
    route, why = category_route(decided)
    return RouteDecision(item_id, category, route, why, f"{category}: {decided.reason}", verdict, key, passes=passes)


def _kind(policy: PolicyResult) -> Kind:
    """A grade policy's kind (a pairwise one is routed by :mod:`juge.policy.route`)."""
    return "score" if policy.judge_kind == "score" else "passfail"


def _verdict(policy: PolicyResult, value: float | str) -> tuple[str, bool]:
    if policy.judge_kind == "passfail":
        return str(value), value == "PASS"
    score = float(value)
    return (f"{score:g}", policy.threshold is not None and score >= policy.threshold)


# ---- holdout --------------------------------------------------------------------------------


def grade_holdout_items(policy: PolicyResult, data: GradeStudyData, split: str) -> tuple[GradeTable, list]:
    if data.kind != policy.judge_kind:
        raise InputError(f"the policy is for a {policy.judge_kind} judge, these items are a {data.kind} study")
    table = data.table().split(split)
    return table, table.items


def _test_figures(
    items: Sequence[GradedItem], decided: set[str], kind: Kind, labels: list, boot: Bootstrap, threshold: float | None
) -> dict[str, Any]:
    judged = [it for it in items if it.item_id in decided]
    on_judged = grade_figures(judged, POLICY_KEY, kind, labels, boot, threshold)
    everywhere = grade_figures(items, POLICY_KEY, kind, labels, boot, threshold)
    return {
        "n_items": len(items),
        "judge_decides": ratio_estimate(
            [it.item_id in decided for it in items], [1] * len(items), **boot.kwargs, item_weights=boot.weights(items)
        ).to_dict(),
        "on_judged_items": {
            "vs_people": on_judged["judge"],
            "ceiling": on_judged["people"]["agreement"],
            "people": on_judged["people"],
            "vs_majority": None,
        },
        "no_policy": {
            "vs_people": everywhere["judge"],
            "ceiling": everywhere["people"]["agreement"],
            "people": everywhere["people"],
            "vs_majority": None,
        },
    }


def _holdout_labels(policy: PolicyResult, table: GradeTable) -> list:
    """The grades a holdout's figures count: PASS/FAIL, or the scale seen there and the policy's."""
    if _kind(policy) == "score":
        return sorted(set(_scale(table, "each")) | set(policy.scale or ()))
    return list(PASSFAIL)


def grade_measure(
    items: Sequence[GradedItem], kind: Kind, labels: list, threshold: float | None, boot: Bootstrap
) -> Measure:
    """Grade agreement on the items a configuration decides (:data:`juge.policy.configurations.Measure`): the
    deciding template's grade against the majority (:func:`grade_disagrees`, its pass/fail side for scores) and
    against each person (agreement, at the pass threshold for scores), as a grade policy's holdout test reads it."""

    def measure(decided: Sequence[Decided]) -> Agreement:
        on: list[GradedItem] = []
        wrong: list[bool | None] = []
        for it, d in zip(items, decided):
            grade = it.judges.get(d.template or "") if d.stage is not None else None
            if grade is None or grade.value is None:
                wrong.append(None)
                continue
            c = copy.copy(it)
            c.judges = {POLICY_KEY: grade}
            on.append(c)
            wrong.append(grade_disagrees(c, POLICY_KEY, kind, threshold))
        judge = grade_figures(on, POLICY_KEY, kind, labels, boot, threshold)["judge"]
        rated = [not w for w in wrong if w is not None]
        vs_majority = ratio_estimate(rated, [1] * len(rated), **boot.kwargs).to_dict()
        return Agreement(vs_majority, judge.get("at_threshold", judge).get("agreement"), wrong)

    return measure


def grade_policy_measure(
    policy: PolicyResult, table: GradeTable, items: Sequence[GradedItem], boot: Bootstrap
) -> Measure:
    """:func:`grade_measure` with a grade policy's kind, pass threshold and holdout grades."""
    return grade_measure(items, _kind(policy), _holdout_labels(policy, table), policy.threshold, boot)


def grade_holdout_figures(
    policy: PolicyResult,
    data: GradeStudyData,
    table: GradeTable,
    items: list[GradedItem],
    decisions: Sequence[RouteDecision],
    boot: Bootstrap,
    prices: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, Any]:
    """The holdout figures and conclusion of a grade policy (the recording is :mod:`juge.policy.holdout`'s):
    ``decisions`` are ``items``' routes, in order, from the one router (:func:`juge.policy.route.route_item`, which
    imports this module, so the caller routes); ``prices`` for a cascade's cost per item."""
    kind, threshold = _kind(policy), policy.threshold
    labels = _holdout_labels(policy, table)
    for it, d in zip(items, decisions):
        if d.template and d.template in it.judges:
            it.judges[POLICY_KEY] = it.judges[d.template]
        else:
            it.judges[POLICY_KEY] = GradeOnItem(None)
    decided = {d.item_id for d in decisions if d.route == JUDGE}
    figures: dict[str, Any] = {
        "decisions": dict(sorted(Counter(d.label for d in decisions).items())),
        **_test_figures(items, decided, kind, labels, boot, threshold),
        "threshold": threshold,
        "per_category": {},
        "items": [d.to_dict() for d in decisions],
        "guarantee": None,
    }
    conclusions = {}
    for c in sorted({it.category for it in items}):
        cat_items = [it for it in items if it.category == c]
        row = category_row(
            cat_items, POLICY_KEY, kind, labels, boot,
            threshold=threshold, margin=policy.margin, min_recall=policy.min_recall,
        )  # fmt: skip
        dev = policy.decision(c)
        dev_row = policy.categories.get(c)
        conclusion = gap_conclusion(dev, None if dev_row is None else dev_row.gap, row, rule="margin")
        if dev and dev.route == JUDGE and row["by_figures"] != JUDGE:
            conclusion["reason"] = "NOT HELD: " + row["reason"]
        conclusions[c] = conclusion
        figures["per_category"][c] = {
            **_test_figures(cat_items, decided, kind, labels, boot, threshold),
            "decisions": dict(sorted(Counter(d.label for d in decisions if d.category == c).items())),
            "holdout_gap": {k: row[k] for k in ("n_with_verdict", "judge", "people", "checks", "gap")},
            "conclusion": conclusion,
        }
    judged = figures["on_judged_items"]
    main = "agreement" if kind == "passfail" else "weighted_kappa"
    overall_gap = margin_gap(judged["vs_people"][main], judged["people"][main], policy.margin)
    conclusion = overall_conclusion(conclusions, overall_gap)
    if policy.rule == "guarantee" or policy.cascade is not None:
        # Checked as the pairwise guarantee is: disagreement with the majority on the items decided alone.
        wrong = [grade_disagrees(it, POLICY_KEY, kind, threshold) if it.item_id in decided else None for it in items]
        rated = [not w for w in wrong if w is not None]
        vs_majority = ratio_estimate(rated, [1] * len(rated), **boot.kwargs).to_dict()
        if policy.cascade is not None:
            from juge.policy.cascade import cascade_on_holdout

            vs_people = judged["vs_people"].get("at_threshold", judged["vs_people"])["agreement"]
            figures["cascade"] = cascade_on_holdout(
                policy, decisions, wrong, data.judgments, vs_majority=vs_majority, vs_people=vs_people,
                level=boot.level, prices=prices,
            )  # fmt: skip
            held = figures["cascade"]["guarantee"]["held"]
        else:
            g = policy.guarantee
            assert g is not None  # a guarantee policy carries its walk
            figures["guarantee"] = check_on_holdout(
                g.threshold, [it.item_id in decided for it in items], wrong, target=g.target, confidence=boot.level
            )
            held = figures["guarantee"]["held"]
        judged["vs_majority"] = {"agreement": vs_majority}  # the shape of a pairwise test's
        conclusion = guarantee_conclusion(held, cascade=policy.cascade is not None)
    figures["conclusion"] = {**conclusion, "on_judged_items": overall_gap}
    figures["_summary"] = {
        "decisions": figures["decisions"],
        "judge_decides": figures["judge_decides"],
        "held": figures["conclusion"]["held"],
    }
    return figures


def _confidence_in_short(p: PolicyResult) -> list[str]:
    """The "in short" lines: by category (rule 3), or by confidence (--rule guarantee, a cascade below)."""
    g = p.guarantee
    if p.rule == "guarantee" and g is not None:
        source = f" Confidence: {g.confidence_source}." if g.confidence_source else ""
        if g.threshold is None:
            return [f"- Rule `guarantee`: no confidence threshold meets the target on dev, so **every item goes to a "
                    f"person**.{source}"]  # fmt: skip
        return [
            f"- Rule `guarantee`: the judge decides alone items with confidence >= {g.threshold:.3f} "
            f"({g.coverage or 0.0:.0%} of all dev items); the rest go to a person. Disagreement with the people's "
            f"majority at most {1 - g.target:.0%} with {g.confidence:.0%} confidence (fixed-sequence test; Jung, "
            f"Brahman & Choi, ICLR 2025).{source} The category table below is for information only."
        ]
    if p.cascade is not None:
        return ["- A cascade (section below): each stage decides the items it may, the rest go on, then to a "
                "person. The category table below is stage 1's."]  # fmt: skip
    return in_short(p)


def grade_policy_markdown(policy: PolicyResult) -> str:
    """JUDGE_POLICY.md for a PASS/FAIL or score judge: the rules in words with the dev figures behind them."""
    p = policy
    kind = p.judge_kind
    info = p.judges[p.judge]
    what = "PASS/FAIL" if kind == "passfail" else f"score (a case passes at {p.threshold:g} or above)"
    lines = [
        "# Judge policy",
        "",
        f"A {what} judge, derived {p.created_at} by juge {p.juge_version} on the `{p.dev.split}` split: "
        f"{p.dev.n_items} items, {p.dev.n_votes} human labels. Dev data hash "
        f"`{(p.dev.data_hash or '')[:16]}`, policy hash `{p.policy_hash[:16]}`. Every figure was measured on dev, "
        "where the rules were chosen: quote the holdout figures of `juge policy test`.",
        "",
        "## In short",
        "",
        f"- The judge is **{table_cell(p.judge)}** (model {table_cell(', '.join(info.models))}).",
        *_confidence_in_short(p),
        "- Any item whose judgment was refused, unparsed, an error or missing goes to a person.",
        f"- Every week a person reads {p.audit.n} random decisions the judge made alone (`juge audit-sample`).",
        *weighting_lines(p),
        "",
        "## Which categories the judge may decide",
        "",
    ]
    if kind == "passfail":
        lines.append(
            f"The judge decides a category alone when its agreement and its kappa with each person are within "
            f"{p.margin:g} of person vs person, and it catches at least as many failures (human FAIL votes it "
            "calls FAIL) as one person catches of another's"
            + (f", and at least {p.min_recall:g}" if p.min_recall is not None else "")
            + ". False flags (human PASS votes it calls FAIL) are shown next to it."
        )
    else:
        choice = p.threshold_choice
        lines.append(
            f"The judge decides a category alone when its agreement at the threshold (score >= {p.threshold:g} on "
            f"both sides) and its quadratic-weighted kappa with each person are within {p.margin:g} of person vs "
            "person."
            + (
                " The threshold was chosen on dev from the labels alone: the point at which people agree most with "
                "each other on pass/fail."
                if choice
                else " The threshold was given (--threshold)."
            )
        )
    lines += ["", "| category | items | judged | decision | figures |", "|---|---|---|---|---|"]
    for c, r in p.categories.items():
        lines.append(
            f"| {table_cell(c)} | {r.n_items} | {r.n_with_verdict} | {decision_cell(p, c)} | {table_cell(r.reason)} |"
        )
    lines += too_few_paragraph(p)
    lines += [
        "",
        "## What this policy must not be used for",
        "",
        f"- Another judge model or prompt version: it holds for model {table_cell(', '.join(info.models))} and the "
        "template hashes in policy.json; `juge route` refuses other versions.",
        "- Categories not in the table above (such items go to a person).",
        "- Claims that an answer is correct: a judge verdict is a model output, never a human label.",
        "",
        "## When to recalibrate",
        "",
        "- The judge's model, prompt template or parser changes; the items change; the weekly audit disagrees with "
        "the judge clearly more often than on dev; in any case every few months.",
        "",
    ]
    return "\n".join(lines)
