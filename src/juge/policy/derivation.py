"""A judge policy derived on dev data: which judge, which prompt per category, and what goes to a person.

Rules (every one carries the dev numbers behind it in the policy file):

1. The judge is the candidate with the highest agreement with each person on dev (the rule
   :mod:`juge.calibration.better` gives pairwise judges in calibrate, policy and tune; ties by
   agreement with the majority), compared on the shared items: those with a majority where every candidate has
   a verdict (each candidate's coverage, items with a verdict / dev items, is reported
   next to it). Candidates are the judges in the judgments, with the template that covers
   every item (not a reference-only template, and no baseline such as ``gpt4_2023``
   or "longer answer" unless named). The runner-up is reported with the paired
   difference in agreement with the majority on the shared items and its interval.
2. In a category with reference answers, the judge's reference template is used if
   it agrees with the majority at least as often as the plain one on that
   category's dev items (paired bootstrap of the difference reported).
3. A category goes to a person when judge-vs-person agreement is lower than
   person-vs-person agreement by more than the margin, both on that category's dev
   items where the judge has a verdict (the same items for both), compared as printed
   (rounded to 3 decimals): ``round(jp, 3) - round(pp, 3) < -margin``. With
   ``rule="lower-bound"``: a person unless the lower bound of the paired interval of
   ``jp - pp`` is above ``-margin``.
4. An item whose verdict changes with the order, or whose judgment is refused,
   unparsed or missing, goes to a person (applied when routing, before rule 3).
5. A weekly audit: a person reads N random judge decisions (``juge audit-sample``).
6. ``rule="guarantee"``: items route by the judge's confidence instead of by
   category; the threshold is the fixed-sequence choice of ``juge.policy.guarantee``.

A category whose judge-vs-person or person-vs-person figure rests on fewer than ``MIN_PAIRS`` (30)
pairs, or on fewer than ``MIN_ITEMS`` (10) judged items, has too few items to decide: it goes to a
person whatever its figures say, and carries ``too_few`` (the reason) beside what the figures alone
say (``by_figures``); :mod:`juge.policy.decision` is that rule, read by every command. With 30 pairs
a 95 % interval of an agreement near 0.8 is still about +-0.15 wide, three times a 0.05 margin;
below it one rater pair more or less can flip the decision.

Decisions read dev only. Ties in rule 1 are broken by judge-vs-person agreement,
then by key name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from juge import __version__
from juge.calibration import better
from juge.calibration.inputs import StudyInputs
from juge.calibration.pairtable import LONGER_ANSWER, PairItem, PairTable, build_pair_table
from juge.calibration.pairwise import Bootstrap, ceiling, reference_templates, vs_majority, vs_people
from juge.calibration.results import Agreement
from juge.data.draw import Weighting
from juge.data.records import Case, HumanLabel, Judgment, RecordedCall
from juge.errors import InputError
from juge.policy.confidence import repeats_on
from juge.policy.configurations import MINUTES_PER_LABEL, routing_note
from juge.policy.file import (
    POLICY_FORMAT,
    SCHEMA_VERSION,
    no_split_error,
    policy_hash,
    read_policy,
    split_hash,
)
from juge.policy.grades import GradeStudyData, derive_grade_policy, grade_policy_markdown
from juge.policy.guarantee import guarantee_block
from juge.policy.markdown import decision_cell, in_short, table_cell, too_few_paragraph, weighting_lines
from juge.policy.pair_rows import (
    CONFIDENCE_SOURCE,
    _has_verdict,
    category_row,
    item_confidences,
    paired_majority_difference,
    reference_choice,
)
from juge.policy.results import Coverage, PolicyResult
from juge.stats.estimate import format_estimate

RULES = ("margin", "lower-bound", "guarantee")


@dataclass
class PairStudyData:
    """What a policy reads: pairs, human votes, recorded judgments, and the hashes of the files."""

    cases: list[Case]
    labels: list[HumanLabel]
    judgments: Sequence[Judgment | RecordedCall]
    baselines: dict[str, dict[str, Any]]
    sources: dict[str, str]

    def table(self) -> PairTable:
        try:
            return build_pair_table(
                self.cases, self.labels, self.judgments, baselines=self.baselines, sources=self.sources
            )
        except ValueError as exc:
            raise InputError(str(exc)) from None


def pair_study_data(inputs: StudyInputs) -> PairStudyData:
    """The policy's view of what ``juge.calibration.inputs.load_inputs`` read; policies are for pairwise judges."""
    if inputs.kind != "pairwise":
        raise InputError(
            f"juge policy supports pairwise judges for now (two answers per item, votes A/B/tie); "
            f"these items are a {inputs.kind} study"
        )
    data = inputs.data
    return PairStudyData(data.full_cases(), data.full_labels(), inputs.judgments, data.baselines, data.sources)


def candidate_keys(table: PairTable, names: Sequence[str] | None) -> list[str]:
    """Judge keys that may become the judge: named ones (judge name or key), else every non-baseline,
    non-reference-only key."""
    if names:
        keys = [k for k, info in table.judges.items() if k in names or info.judge in names]
        reference_only = {a for a, _ in reference_templates(table)}
        keys = [k for k in keys if k not in reference_only or k in names]
        missing = [n for n in names if not any(k == n or table.judges[k].judge == n for k in table.judges)]
        if missing:
            raise InputError(
                f"--judge {', '.join(missing)}: no such judge in the data; known: {', '.join(table.judges)}"
            )
        return keys
    reference_only = {a for a, _ in reference_templates(table)}
    keys = [k for k, info in table.judges.items() if not info.baseline and k not in reference_only]
    if not keys:
        raise InputError(
            "no judge in the judgments to derive a policy for (baselines count only when named with --judge)"
        )
    return keys


def choose_judge(items: Sequence[PairItem], candidates: Sequence[str], boot: Bootstrap) -> dict[str, Any]:
    """Rule 1: the better candidate by :mod:`juge.calibration.better` (the rule calibrate and tune use):
    the highest agreement with each person (as printed; ties by agreement with the majority, then key),
    with the runner-up.

    Candidates are compared on the shared items: those with a majority where every candidate has a
    verdict, so a judge that fails to answer the hard items gains nothing. Each candidate's coverage
    (dev items with a verdict / dev items) is reported next to it.
    """
    shared = [it for it in items if it.majority is not None and all(_has_verdict(it, k) for k in candidates)]
    if not shared:
        raise InputError(
            "no dev item with a majority on which every candidate judge has a verdict; name the "
            "candidates to compare with --judge"
        )
    rows: list[dict[str, Any]] = []
    for key in candidates:
        n_verdicts = sum(_has_verdict(it, key) for it in items)
        rows.append(
            {
                "key": key,
                "coverage": {"value": n_verdicts / len(items), "n_with_verdict": n_verdicts, "n_items": len(items)},
                "vs_majority": vs_majority(shared, key, boot),
                "vs_people": vs_people(shared, key, boot),
            }
        )
    rows.sort(key=lambda r: r["key"])
    merits = [better.Merit(r["vs_people"]["agreement"]["value"], r["vs_majority"]["agreement"]["value"]) for r in rows]
    rows = [rows[i] for i in better.order(merits)]
    chosen = rows[0]
    people = ceiling(shared, boot)
    references: list[dict[str, Any]] = [
        {"key": "person vs person", "vs_people": {"agreement": people["agreement"], "kappa": people["kappa"]}}
    ]
    if all(_has_verdict(it, LONGER_ANSWER) for it in shared):  # the trivial judge, on the same items
        references.append(
            {
                "key": LONGER_ANSWER,
                "vs_majority": vs_majority(shared, LONGER_ANSWER, boot),
                "vs_people": vs_people(shared, LONGER_ANSWER, boot),
            }
        )
    out: dict[str, Any] = {
        "candidates": rows,
        "references": references,
        "n_shared_items": len(shared),
        "chosen": chosen["key"],
        "runner_up": None,
        "difference": None,
    }
    if len(rows) > 1:
        out["runner_up"] = rows[1]["key"]
        out["difference"] = paired_majority_difference(shared, chosen["key"], rows[1]["key"], boot)
    return out


def guarantee_rule(
    items: Sequence[PairItem],
    key_by_category: dict[str, str],
    judgments: Sequence[Judgment | RecordedCall],
    *,
    target: float,
    confidence: float,
) -> dict[str, Any]:
    """Rule 6 on dev: item confidences of the policy's judge, then the fixed-sequence threshold
    (:func:`juge.policy.guarantee.guarantee_block`).

    Only items the judge could decide alone enter the threshold walk: a consistent verdict (both orders
    agree; an inconsistent or missing one always goes to a person, rule 4) and a human majority to check
    it against. Coverage is over all dev items: ``n_covered`` (consistent verdict, confidence >= threshold,
    with or without a majority) / ``n_items``.
    """
    by_id = item_confidences(items, key_by_category, judgments)
    wrong = [
        None
        if it.item_id not in by_id or it.majority is None
        else it.judges[key_by_category[it.category]].label != it.majority
        for it in items
    ]
    repeats = repeats_on(judgments, set(key_by_category.values()), {it.item_id for it in items})
    return guarantee_block(
        [by_id.get(it.item_id) for it in items], wrong, target=target, confidence=confidence, source=CONFIDENCE_SOURCE,
        repeats=repeats,
    )  # fmt: skip


def derive_policy(
    data: PairStudyData,
    *,
    split: str = "dev",
    margin: float = 0.05,
    rule: str = "margin",
    target: float = 0.9,
    confidence: float = 0.9,
    judges: Sequence[str] | None = None,
    audit_n: int = 10,
    boot: Bootstrap = Bootstrap(),
    cascade: Sequence[str] | None = None,
    prices: Mapping[str, Mapping[str, float]] | None = None,
    minutes_per_label: float = MINUTES_PER_LABEL,
    minute_price: float | None = None,
) -> dict[str, Any]:
    """Derive the policy on one split (dev) and return it as the versioned JSON document; with ``cascade``
    (judge names, cheapest first) a cascade of those judges (:mod:`juge.policy.cascade`), every configuration
    it considered priced with ``prices`` and ``minutes_per_label`` (:mod:`juge.policy.configurations`)."""
    if rule not in RULES:
        raise InputError(f"--rule {rule!r}: use one of {', '.join(RULES)}")
    if cascade and rule == "guarantee":
        raise InputError(
            "--cascade already routes each stage by confidence with a guarantee; its --rule is the category "
            "rule of each stage: margin (default) or lower-bound"
        )
    if cascade and judges:
        raise InputError("--cascade names the judges of its stages; leave out --judge")
    if not 0 <= margin < 1:
        raise InputError(f"--margin {margin}: must be between 0 and 1")
    table = data.table()
    sub = table.split(split)
    if not sub.items:
        raise no_split_error(split, data.cases)
    items = sub.items
    if cascade:
        from juge.policy.cascade import stage_key

        judges = [stage_key(sub, cascade[0])]
    selection = choose_judge(items, candidate_keys(sub, judges), boot)
    key = selection["chosen"]
    reference = reference_choice(items, sub, key, boot)
    categories = sub.categories()
    key_by_category = {c: reference[c]["template"] if c in reference else key for c in categories}
    per_category = {
        c: category_row(
            [it for it in items if it.category == c],
            key_by_category[c],
            margin=margin,
            rule="lower-bound" if rule == "lower-bound" else "margin",
            boot=boot,
        )
        for c in categories
    }
    cascade_block = None
    if cascade:
        from juge.policy.cascade import derive_cascade

        cascade_block = derive_cascade(
            items, sub, data.judgments, cascade, margin=margin, rule=rule, target=target, confidence=confidence,
            boot=boot, prices=prices, minutes_per_label=minutes_per_label, minute_price=minute_price,
        )  # fmt: skip
    used_keys = sorted(
        set(key_by_category.values())
        | {k for s in (cascade_block or {}).get("stages", []) for k in s["templates_by_category"].values()}
    )
    dev_cases = [c for c in data.cases if c.split == split and c.id in {it.item_id for it in items}]
    policy: dict[str, Any] = {
        "kind": "juge-policy",
        "format": POLICY_FORMAT,
        "schema_version": SCHEMA_VERSION,
        "judge_kind": "pairwise",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "juge_version": __version__,
        "rule": rule,
        "margin": margin,
        "judge": key,
        "templates_by_category": key_by_category,
        "judges": {k: sub.judges[k].to_dict() for k in used_keys},
        "dev": {
            "split": split,
            "data_hash": split_hash(dev_cases, data.labels),
            "n_items": len(items),
            "n_votes": sum(len(it.votes) for it in items),
            "n_without_majority": sum(it.majority is None for it in items),
            "groups": sorted({it.group for it in items}),
            "sources_sha256": dict(data.sources),
        },
        "selection": selection,
        "reference": reference,
        "categories": per_category,
        "guarantee": None,
        **({"cascade": cascade_block} if cascade_block else {}),
        "audit": {"n": audit_n, "every": "week"},
        "bootstrap": {"n_resamples": boot.n_resamples, "seed": boot.seed, "level": boot.level, "unit": "item"},
    }
    if rule == "guarantee":
        policy["guarantee"] = guarantee_rule(
            items, key_by_category, data.judgments, target=target, confidence=confidence
        )
    policy["policy_hash"] = policy_hash(policy)
    policy["status"] = "untested"  # juge.policy.status: no holdout test yet
    return policy


def policy_markdown(policy: PolicyResult | Mapping[str, Any]) -> str:
    """JUDGE_POLICY.md: the rules in plain words, the numbers behind each, limits, and when to recalibrate.
    Categories and judge names are data: their control and bidi characters are shown as ``⟨U+XXXX⟩``."""
    from juge.visible import visible_text

    return visible_text(_policy_markdown(policy))


def _policy_markdown(policy: PolicyResult | Mapping[str, Any]) -> str:
    p = PolicyResult.of(policy)
    if p.judge_kind != "pairwise":
        text = grade_policy_markdown(p)
        return text if p.cascade is None else text + "\n".join(cascade_markdown(p)) + "\n"
    key = p.judge
    info = p.judges[key]
    dev = p.dev
    boot, sel = p.bootstrap, p.selection
    if boot is None or sel is None:  # every policy juge wrote has both
        raise InputError("the policy has no bootstrap settings or judge selection: derive it again")
    level = f"{boot.level:.0%}"
    lines = [
        "# Judge policy",
        "",
        f"Derived {p.created_at} by juge {p.juge_version} on the `{dev.split}` split: {dev.n_items} items, "
        f"{dev.n_votes} human votes ({dev.n_without_majority} items without a majority). "
        f"Dev data hash `{(dev.data_hash or '')[:16]}`, policy hash `{p.policy_hash[:16]}`.",
        f"Intervals: {level} percentile bootstrap over items ({boot.n_resamples} resamples, "
        f"seed {boot.seed}). Every figure was measured on dev, where the rules were chosen, so it is "
        "optimistic: quote the holdout figures of `juge policy test`.",
        "",
        "## In short",
        "",
        f"- The judge is **{table_cell(key)}** (model {table_cell(', '.join(info.models))}).",
    ]
    g = p.guarantee
    if p.rule == "guarantee" and g is not None:
        if g.threshold is None:
            lines.append(
                "- Rule `guarantee`: no confidence threshold meets the target on dev, so **every item goes "
                "to a person**."
            )
        else:
            lines.append(
                f"- Rule `guarantee`: the judge decides alone items with confidence >= {g.threshold:.3f} "
                f"({g.coverage or 0.0:.0%} of all dev items); the rest go to a person."
            )
    else:
        lines += in_short(p)
    lines += [
        "- Any item whose verdict changes when the answers swap places, or whose judgment was refused, unparsed or "
        "missing, goes to a person.",
        f"- Every week a person reads {p.audit.n} random decisions the judge made alone (`juge audit-sample`).",
        *weighting_lines(p),
        "",
        "## Rule 1: which judge",
        "",
        "The judge is the candidate that agrees most often with the human majority on dev. The candidates are "
        f"compared on the same {sel.n_shared_items} shared items: dev items with a majority on which "
        "every candidate has a verdict, so a judge that fails to answer hard items gains nothing by it. Coverage is "
        "the share of all dev items on which the candidate has a verdict (refused, unparsed, error or missing "
        "calls leave it without one).",
        "",
        "| candidate | coverage | agreement with majority (shared items) | kappa | agreement with each person |",
        "|---|---|---|---|---|",
    ]
    for row in sel.candidates:
        cov = row.coverage or Coverage()
        covered = "n/a" if cov.value is None else f"{cov.value:.1%} ({cov.n_with_verdict} of {cov.n_items})"
        vs_majority, vs_people = row.vs_majority or Agreement(), row.vs_people or Agreement()
        lines.append(
            f"| {table_cell(row.key)} | {covered} | "
            f"{format_estimate(vs_majority.agreement)} | {format_estimate(vs_majority.kappa)} | "
            f"{format_estimate(vs_people.agreement)} |"
        )
    diff = sel.difference
    if diff:
        d = diff.difference
        noise = d is not None and d.low is not None and d.high is not None and d.low <= 0 <= d.high
        lines += [
            "",
            f"Runner-up: **{table_cell(diff.b)}**. On the {diff.n_items} shared items, "
            f"the chosen judge agrees {format_estimate(d)} more often (paired difference, {level} interval). "
            + (
                "The interval includes 0: the runner-up is within noise, so a cheaper runner-up is a defensible choice."
                if noise
                else "The interval excludes 0: the chosen judge is measurably better."
            ),
        ]
    lines += ["", "## Rule 2: reference answers", ""]
    if p.reference:
        lines += [
            "Where a category has reference answers, the judge's reference prompt is used if it agrees with "
            "the majority at least as often as the plain prompt on the same dev items (as printed, 3 decimals).",
            "",
            "| category | items | with reference | without | difference (paired) | prompt used |",
            "|---|---|---|---|---|---|",
        ]
        for c, ref in p.reference.items():
            a = "n/a" if ref.agreement_a is None else f"{ref.agreement_a:.3f}"
            b = "n/a" if ref.agreement_b is None else f"{ref.agreement_b:.3f}"
            lines.append(
                f"| {table_cell(c)} | {ref.n_items} | {a} | {b} | {format_estimate(ref.difference)} | {table_cell(ref.template)} |"
            )
    else:
        lines.append("No reference prompt of this judge in the data: the plain prompt is used everywhere.")
    strict = p.rule == "lower-bound"
    lines += [
        "",
        "## Rule 3: which categories the judge may decide",
        "",
        (
            f"A category goes to a person unless the lower bound of the {level} interval of (judge vs person - person vs "
            f"person) agreement is above -{p.margin:g}."
            if strict
            else f"A category goes to a person when the judge agrees with each person less often than people agree with each "
            f"other, by more than {p.margin:g}. The figures are compared as printed (3 decimals), so every decision "
            "can be checked by eye."
        ),
        "Both agreements are pooled over pairs on the same items: that category's dev items where the judge has a "
        "verdict (column 'judged'; items without one go to a person by rule 4), judge vs every vote, and every pair "
        "of distinct raters. (Agreement with the majority is a different figure and is never compared with the "
        "ceiling.)",
        ""
        if p.rule != "guarantee"
        else "Under rule `guarantee` this table is for information only: items route by confidence (rule 6).",
        "",
        "| category | items | judged | votes | prompt | judge vs person | person vs person | gap | difference (paired) "
        "| decision |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c, r in p.categories.items():
        gap = "n/a" if r.gap is None else f"{r.gap:+.3f}"
        lines.append(
            f"| {table_cell(c)} | {r.n_items} | {r.n_with_verdict} | {r.n_votes} | "
            f"{table_cell(r.template)} | {format_estimate(r.vs_people)} | "
            f"{format_estimate(r.ceiling)} | {gap} | {format_estimate(r.difference)} | {decision_cell(p, c)} |"
        )
    lines += too_few_paragraph(p)
    lines += [
        "",
        "## Rule 4: items that always go to a person",
        "",
        "Each pair is judged in both orders. An item goes to a person when the two orders give different verdicts "
        "(the judge is swayed by position), or when a judgment was refused, unparsed, an error or missing. These "
        "reasons are checked first and recorded even when the item's category also goes to a person.",
        "",
        "## Rule 5: weekly audit",
        "",
        f"Every week a person reads {p.audit.n} random decisions the judge made alone: "
        f"`juge audit-sample --policy policy.json --run RUN_ID -n {p.audit.n}` (the default seed changes each "
        "week). Disagreements found there are the first sign that the policy has drifted.",
    ]
    if p.rule == "guarantee" and g is not None:
        lines += [
            "",
            "## Rule 6: selective judging with a guarantee",
            "",
            f"Target: the judge disagrees with the human majority on at most {1 - g.target:.0%} of the items it "
            f"decides, with {g.confidence:.0%} confidence (fixed-sequence test, exact binomial bound; Jung et al. "
            f'2024, "Trust or Escalate"). Confidence: {g.confidence_source}.',
            f"The threshold is walked on the {g.n_calibration} dev items with a consistent verdict and a human "
            "majority: items whose verdict changes with the order, or that have no verdict, always go to a person "
            "(rule 4) and are left out.",
            "",
            "| threshold | items at or above | disagreements | upper bound | accepted |",
            "|---|---|---|---|---|",
        ]
        for s in g.steps:
            lines.append(
                f"| {s.threshold:.3f} | {s.n} | {s.disagreements} | {s.upper_bound:.3f} | "
                f"{'yes' if s.accepted else 'no (stop)'} |"
            )
        lines.append("")
        lines.append(
            "Chosen threshold: "
            + (
                "none; every item goes to a person."
                if g.threshold is None
                else f"{g.threshold:.3f}, covering {g.n_covered} of all {g.n_items} dev items "
                f"({g.coverage or 0.0:.0%}; missing, inconsistent and no-majority items count in the total)."
            )
        )
    if p.cascade is not None:
        lines += cascade_markdown(p)
    lines += [
        "",
        "## What this policy must not be used for",
        "",
        f"- Another judge model or prompt version. It holds for model {table_cell(', '.join(info.models))} and the "
        "template hashes in policy.json; `juge route` refuses other versions.",
        "- Categories, languages, or kinds of items not in the table above (such items go to a person), or "
        "multi-turn conversations if dev had only first turns.",
        "- Claims that an answer is correct. A judge verdict is a model output, never a human label, and must not "
        "be stored or counted as one.",
        "- Reporting dev figures as the judge's quality: they were used to choose the rules. Use the holdout test.",
        "",
        "## When to recalibrate",
        "",
        "- The judge's model version, prompt template or parser changes (its hash changes).",
        "- The items change: a new product area, new categories, a new language, longer or differently formatted "
        "answers.",
        "- The weekly audit shows the judge disagreeing with the auditor clearly more often than on dev, or the order "
        "flip rate rises.",
        "- In any case every few months; derive on fresh dev data and test once on fresh holdout data.",
        "",
    ]
    return "\n".join(lines)


def cascade_markdown(p: PolicyResult) -> list[str]:
    """The cascade's section of JUDGE_POLICY.md: the method, and per stage what reaches it and what it decides."""
    c = p.cascade
    assert c is not None
    lines = [
        "",
        "## Cascade: the cheapest judge first, then the next, then a person",
        "",
        f"Each stage decides an item when its category rule lets it (rule 3, for that judge) and its confidence is "
        f"at or above the stage's threshold; otherwise the item goes to the next stage, and after the last to a "
        f"person. Target: agreement with the human majority >= {c.target:g} on the decided items, with probability "
        f"{c.confidence:g}. Thresholds: {c.method or ''}.",
        "",
        "| stage | judge | dev items reaching it | in its categories | threshold | decides |",
        "|---|---|---|---|---|---|",
    ]
    for k, s in enumerate(c.stages, 1):
        t = "none" if s.guarantee is None or s.guarantee.threshold is None else f"{s.guarantee.threshold:.3f}"
        lines.append(
            f"| {k} | {table_cell(s.judge)} | {s.n_reaching} | {s.n_in_its_categories} | {t} | {s.n_decided} |"
        )
    lines += ["", f"A person decides {c.n_person} of the {c.n_items} dev items (coverage {c.coverage or 0.0:.1%})."]
    if c.alone and not c.configurations:  # older policies: each stage alone (the configurations supersede it)
        lines += ["", "Compared on dev, at the same target and confidence (dev figures are optimistic):", "",
                  "| configuration | decides | agreement with the majority (decided items with one) |",
                  "|---|---|---|"]  # fmt: skip
        rows = [("the cascade", c.cascade_on_dev)] + [(f"{a.judge} alone", a) for a in c.alone]
        for name, a in rows:
            if a is not None:
                agree = "n/a" if a.agreement_with_majority is None else f"{a.agreement_with_majority:.3f}"
                lines.append(f"| {table_cell(name)} | {a.n_decided} | {agree} (n={a.n_with_majority}) |")
    if c.configurations:
        lines += ["", f"Every configuration considered, on dev (person-minutes at {c.minutes_per_label:g} per label):",
                  "", "| configuration | decided | a person | agreement with the majority | with each person "
                  "| cost per item | person-minutes saved | choice |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for r in c.configurations:
            f = r.dev
            cost = f"US$ {f.cost.usd_per_item:.5f}" if f.cost.usd_per_item is not None else (
                f"{f.cost.tokens_per_item:,.0f} tokens ({f.cost.warning})"
            )  # fmt: skip
            status = "**chosen**" if r.chosen else "within noise" if r.within_noise else (
                "below the best" if r.meets_guarantee else "no threshold"
            )  # fmt: skip
            lines.append(
                f"| {table_cell(r.name)} | {f.n_decided} | {f.n_person} | {format_estimate(f.vs_majority)} | "
                f"{format_estimate(f.vs_people)} | {table_cell(cost)} | {f.person_minutes_saved:g} | {status} |"
            )
    if c.choice is not None and c.choice.chosen is not None:
        lines += ["", f"Chosen: **{table_cell(c.choice.chosen)}**: {c.choice.rule} (cost in {c.choice.cost_basis}). "
                  f"{routing_note(c.choice)}"]  # fmt: skip
    return lines


CHOOSE_NEEDS_CASCADE = (
    "--choose routes with the configuration chosen among a cascade's: give --cascade too "
    "(e.g. --cascade chat-small,chat-strong --choose)"
)


def derive_any_policy(
    data: Any,
    *,
    split: str = "dev",
    margin: float = 0.05,
    rule: str = "margin",
    target: float = 0.9,
    confidence: float = 0.9,
    min_recall: float | None = None,
    threshold: float | None = None,
    judges: Sequence[str] | None = None,
    audit_n: int = 10,
    boot: Bootstrap = Bootstrap(),
    cascade: Sequence[str] | None = None,
    prices: Mapping[str, Mapping[str, float]] | None = None,
    minutes_per_label: float | None = None,
    minute_price: float | None = None,
    choose: bool = False,
    weighting: Weighting = "none",
) -> dict[str, Any]:
    """The policy for whatever judge the data holds: ``PairStudyData`` (pairwise) or ``GradeStudyData``
    (PASS/FAIL, score). ``min_recall`` and ``threshold`` are for grades, ``target`` and ``confidence`` for
    ``rule="guarantee"`` and ``cascade`` (any kind). ``choose``: route with the configuration chosen on dev
    (:func:`juge.policy.cascade.with_chosen_stages`) instead of the cascade as given. ``weighting``: how
    ``boot.item_weights`` count the labels (:mod:`juge.data.draw`), recorded in the policy when they weight them."""
    policy = _derive_any_policy(
        data, split=split, margin=margin, rule=rule, target=target, confidence=confidence, min_recall=min_recall,
        threshold=threshold, judges=judges, audit_n=audit_n, boot=boot, cascade=cascade, prices=prices,
        minutes_per_label=minutes_per_label, minute_price=minute_price, choose=choose,
    )  # fmt: skip
    if weighting == "inverse-probability":  # only then: every other policy keeps the keys (and hash) it had
        policy["weighting"] = weighting
        policy["policy_hash"] = policy_hash(policy)
    return policy


def _derive_any_policy(
    data: Any,
    *,
    split: str,
    margin: float,
    rule: str,
    target: float,
    confidence: float,
    min_recall: float | None,
    threshold: float | None,
    judges: Sequence[str] | None,
    audit_n: int,
    boot: Bootstrap,
    cascade: Sequence[str] | None,
    prices: Mapping[str, Mapping[str, float]] | None,
    minutes_per_label: float | None,
    minute_price: float | None,
    choose: bool,
) -> dict[str, Any]:
    if choose:
        if cascade is None:
            raise InputError(CHOOSE_NEEDS_CASCADE)
        from juge.policy.cascade import with_chosen_stages

        options = dict(
            split=split, margin=margin, rule=rule, target=target, confidence=confidence, min_recall=min_recall,
            threshold=threshold, judges=judges, audit_n=audit_n, boot=boot, prices=prices,
            minutes_per_label=minutes_per_label, minute_price=minute_price,
        )  # fmt: skip
        first = derive_any_policy(data, cascade=cascade, **options)  # type: ignore[arg-type]
        return with_chosen_stages(first, lambda stages: derive_any_policy(data, cascade=stages, **options))  # type: ignore[arg-type]
    if isinstance(data, GradeStudyData):
        return derive_grade_policy(
            data, split=split, margin=margin, rule=rule, min_recall=min_recall, threshold=threshold,
            judges=judges, audit_n=audit_n, boot=boot, target=target, confidence=confidence, cascade=cascade,
            prices=prices, minutes_per_label=minutes_per_label, minute_price=minute_price,
        )  # fmt: skip
    if min_recall is not None or threshold is not None:
        raise InputError("--min-recall and --threshold are for PASS/FAIL and score judges; these items are pairs")
    return derive_policy(
        data, split=split, margin=margin, rule=rule, target=target, confidence=confidence, judges=judges,
        audit_n=audit_n, boot=boot, cascade=cascade, prices=prices,
        minutes_per_label=MINUTES_PER_LABEL if minutes_per_label is None else minutes_per_label,
        minute_price=minute_price,
    )  # fmt: skip


def derive_policy_result(data: Any, **options: Any) -> PolicyResult:
    """:func:`derive_any_policy` as the typed :class:`juge.results.PolicyResult` (``to_dict()`` is the file)."""
    return PolicyResult.model_validate(derive_any_policy(data, **options))


def read_policy_result(path: Path | str) -> PolicyResult:
    """:func:`read_policy` as the typed :class:`juge.results.PolicyResult`."""
    return PolicyResult.model_validate(read_policy(path))
