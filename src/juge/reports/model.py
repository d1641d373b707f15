"""Turn a calibration result (and an optional policy and its holdout test) into the data a report is made from.

The inputs are the typed results of :mod:`juge.results` (``Calibration``, ``PolicyResult``,
``HoldoutTest``); a dict or a file's JSON is validated into them first, so a malformed file is refused
with the field named rather than half-rendered. An absent optional figure, or one without a value,
becomes ``None`` ("n/a" in the report). Nothing is computed that the study did not produce, except
where the derivation is exact (the mean human score per judge score, read off a confusion matrix of
counts). The output is plain JSON-able data: what `juge report --format json` writes and what the
HTML and Markdown templates render.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from juge import __version__
from juge.calibration.results import (
    Agreement,
    AtThreshold,
    Calibration,
    Caught,
    Ceiling,
    Confusion,
    JudgeFigures,
    JudgeVersion,
    Versions,
)
from juge.data.records import Case
from juge.policy.decision import MIN_PAIRS
from juge.policy.results import (
    AuditStatus,
    Conclusion,
    ConfigurationFigures,
    HoldoutFigures,
    HoldoutTest,
    PolicyCategory,
    PolicyResult,
)
from juge.reports.disagreements import attach_items, select_disagreements
from juge.reports.first_screen import input_mismatches, verdicts
from juge.reports.headline import MARGIN as HEADLINE_MARGIN
from juge.reports.headline import headlines, trivial_baseline_lines
from juge.stats.estimate import Estimate

VERDICTS = ("A", "B", "tie", "inconsistent", "missing")
OUTCOMES = ("ok", "refused", "unparsed", "error")
PAIRWISE_STATS = ("agreement", "kappa")
# The statistics each kind of study reports against people, in the order they are shown.
STATS_BY_KIND = {
    "pairwise": PAIRWISE_STATS,
    "score": (
        "agreement",
        "kappa",
        "weighted_kappa",
        "pearson",
        "spearman",
        "krippendorff_alpha",
        "threshold_agreement",
        "threshold_kappa",
    ),
    "passfail": ("agreement", "kappa", "failures_caught", "false_flags"),
}
STAT_LABELS = {
    "agreement": "Agreement",
    "kappa": "Cohen's κ",
    "weighted_kappa": "Weighted κ (quadratic)",
    "pearson": "Pearson r",
    "spearman": "Spearman ρ",
    "krippendorff_alpha": "Krippendorff's α (ordinal)",
    "threshold_agreement": "Agreement at the threshold",
    "threshold_kappa": "κ at the threshold",
    "failures_caught": "Failures caught",
    "false_flags": "False flags",
}
# Statistics that compare a judge with people and have no person-vs-person counterpart.
JUDGE_ONLY_STATS = {"failures_caught", "false_flags"}
INCONSISTENT_PATTERNS = ("n", "shown_first_won_both", "shown_second_won_both", "tie_in_one_order")
POLICY_SETTINGS = ("judge", "rule", "margin", "status", "policy_hash", "created_at", "juge_version")


def estimate(est: Estimate | None) -> dict[str, float | int | None] | None:
    """``{"value", "low", "high", "n"}`` of an estimate; None when it is absent or has no value."""
    if est is None or est.value is None:
        return None
    whole = est.low is not None and est.high is not None  # an interval needs both ends
    return {"value": est.value, "low": est.low if whole else None, "high": est.high if whole else None, "n": est.n}


def is_baseline(key: str, info: JudgeVersion | None) -> bool:
    """Baselines ("longer answer", a recorded judge such as "gpt4_2023") have no template in their key,
    unless the study's versions say otherwise."""
    if info is not None and "baseline" in info.model_fields_set:
        return info.baseline
    return "/" not in key


def flatten_versions(obj: Any, prefix: str = "") -> list[dict[str, str]]:
    """Turn the free-form part of `versions` into ``[{"name", "value"}]`` rows, in the file's order."""
    rows: list[dict[str, str]] = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            name = f"{prefix} / {key}" if prefix else str(key)
            rows.extend(flatten_versions(value, name))
    elif isinstance(obj, list):
        if all(not isinstance(v, (dict, list)) for v in obj):
            rows.append({"name": prefix, "value": ", ".join(str(v) for v in obj)})
        else:
            for i, value in enumerate(obj):
                rows.extend(flatten_versions(value, f"{prefix} [{i}]"))
    elif obj is not None:
        rows.append({"name": prefix, "value": str(obj)})
    return rows


def figures(part: JudgeFigures | Ceiling | Agreement | None, stats: tuple[str, ...]) -> dict[str, Any]:
    """The statistics `stats` of one judge (or of the people) against people, each an estimate or None.

    Pairwise studies nest them under ``vs_people``; single-score and PASS/FAIL studies put
    them at the top of the entry, the threshold figures under ``at_threshold`` and
    failures caught / false flags as ``{"k", "n", "rate"}`` (the estimate gets its k).
    """
    if isinstance(part, JudgeFigures) and part.vs_people is not None:
        part = part.vs_people
    out: dict[str, Any] = {}
    for stat in stats:
        if part is None:
            out[stat] = None
        elif stat.startswith("threshold_"):
            at: AtThreshold | None = getattr(part, "at_threshold", None)
            out[stat] = estimate(getattr(at, stat.removeprefix("threshold_"))) if at is not None else None
        elif stat in JUDGE_ONLY_STATS:
            caught: Caught | None = getattr(part, stat, None)
            rate = estimate(caught.rate) if caught is not None else None
            out[stat] = None if rate is None or caught is None else {**rate, "k": caught.k}
        else:
            out[stat] = estimate(getattr(part, stat, None))
    return out


def _ceiling(ceiling: Ceiling | None, stats: tuple[str, ...]) -> dict[str, Any]:
    return figures(ceiling, stats) | {"n_pairs": ceiling.n_pairs if ceiling is not None else None}


def _judge(key: str, entry: JudgeFigures, info: JudgeVersion | None, stats: tuple[str, ...]) -> dict[str, Any]:
    per_category = {
        cat: {"vs_people": figures(v, stats), "ceiling": _ceiling(v.ceiling, stats)}
        for cat, v in (entry.per_category or {}).items()
    }
    patterns = entry.inconsistent_patterns
    conf = confusion(entry.confusion)
    majority = entry.vs_majority
    return {
        "key": key,
        "baseline": is_baseline(key, info),
        "models": list(info.models) if info else [],
        "template": info.template if info else None,
        "template_hashes": list(info.template_hashes) if info else [],
        "n_items": entry.n_items,
        "verdict_counts": dict(entry.verdict_counts),
        "outcomes": None if entry.outcomes is None else {**dict.fromkeys(OUTCOMES), **entry.outcomes},
        "vs_people": figures(entry, stats),
        "vs_majority": {s: estimate(getattr(majority, s)) if majority else None for s in PAIRWISE_STATS},
        "order_flip_rate": estimate(entry.order_flip_rate),
        "picks_longer": estimate(entry.picks_longer),
        "picks_longer_against_majority": estimate(entry.picks_longer_against_majority),
        "inconsistent_patterns": patterns.to_dict() if patterns and patterns.n else None,
        "self_consistency": estimate(entry.self_consistency),
        "per_category": per_category,
        "threshold": entry.at_threshold.threshold if entry.at_threshold else None,
        "confusion": conf,
        "reliability": reliability(entry, conf),
    }


def confusion(conf: Confusion | None) -> dict[str, Any] | None:
    """A confusion matrix as ``{"rows", "columns", "matrix", "axis"}`` with rows = people, columns = judge;
    None when the matrix is not square to its labels."""
    if conf is None:
        return None
    size = len(conf.labels)
    if len(conf.matrix) != size or any(len(row) != size or min(row, default=0) < 0 for row in conf.matrix):
        return None
    labels = [_label(label) for label in conf.labels]
    return {
        "rows": labels,
        "columns": list(labels),
        "matrix": [list(row) for row in conf.matrix],
        "axis": {"rows": conf.rows, "columns": conf.columns},
    }


def _label(value: Any) -> str:
    """A scale point as text: 3.0 -> '3' (the study writes scores as floats), anything else as is."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def reliability_from_confusion(conf: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Mean human score for each judge score, read exactly off a confusion matrix of counts.

    Only defined when both axes are numeric scores. Point k: x = judge score s_k,
    y = sum_r r * C[r, k] / sum_r C[r, k], n = sum_r C[r, k] (DeGroot & Fienberg 1983,
    reliability diagram, here for ordinal scores rather than probabilities).
    """
    try:
        row_scores = [float(r) for r in conf["rows"]]
        col_scores = [float(c) for c in conf["columns"]]
    except ValueError:
        return None
    points = []
    for k, judge_score in enumerate(col_scores):
        n = sum(row[k] for row in conf["matrix"])
        if n:
            mean = sum(r * row[k] for r, row in zip(row_scores, conf["matrix"])) / n
            points.append({"judge_score": judge_score, "mean_human_score": mean, "low": None, "high": None, "n": n})
    return points or None


def reliability(entry: JudgeFigures, conf: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    """The reliability curve: the study's points (with bootstrap intervals) when it wrote them, else read
    exactly off the confusion matrix (no interval)."""
    points = [
        {
            "judge_score": point.judge_score,
            "mean_human_score": point.mean_human_score.value,
            "low": point.mean_human_score.low,
            "high": point.mean_human_score.high,
            "n": point.mean_human_score.n,
        }
        for point in entry.reliability or []
        if point.mean_human_score.value is not None
    ]
    if points:
        return sorted(points, key=lambda p: p["judge_score"])
    return reliability_from_confusion(conf) if conf else None


def _policy_difference(policy: PolicyResult, row: PolicyCategory) -> dict[str, Any] | None:
    """Judge vs person minus person vs person, as the policy's rule 3 read it: pairwise, the paired estimate;
    PASS/FAIL and score, the agreement gap its check held to the margin (a point: the rule has no interval)."""
    if policy.judge_kind == "pairwise" or row.gap is None:
        return estimate(row.difference)
    return {"value": row.gap, "low": None, "high": None, "n": None}


def _policy(policy: PolicyResult | None) -> dict[str, Any] | None:
    """A policy written by `juge policy derive --json`: its settings and one row per category."""
    if policy is None:
        return None
    decisions = policy.decisions  # the one decision per category (too few items: a person, and why)
    categories = [
        {
            "name": name,
            "route": decisions[name].route,
            "template": row.template or None,
            "vs_people": estimate(row.vs_people),
            "ceiling": estimate(row.ceiling),
            "difference": _policy_difference(policy, row),
            "reason": decisions[name].reason or None,
        }
        for name, row in policy.categories.items()
    ]
    settings: dict[str, Any] = {k: getattr(policy, k) for k in POLICY_SETTINGS if getattr(policy, k) is not None}
    dev = policy.dev
    settings.update(
        {f"dev {k}": getattr(dev, k) for k in ("split", "n_items", "n_votes", "data_hash") if k in dev.model_fields_set}
    )
    if policy.audit.n is not None:
        settings["audit"] = f"{policy.audit.n} decisions every {policy.audit.every or 'period'}"
    note = None
    if policy.judge_kind != "pairwise":
        note = (
            f"Difference: judge vs person minus person vs person, the agreement gap rule 3 holds within the "
            f"{policy.margin:g} margin (a point: the rule reads no interval); its other checks are in the reason."
        )
    return {
        "routes": {c["name"]: c["route"] for c in categories},
        "categories": categories,
        "difference_note": note,
        "settings": {k: str(v) for k, v in settings.items()},
    }


def _configuration_row(name: str, kind: str, chosen: bool, f: ConfigurationFigures, status: str) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "chosen": chosen,
        "status": status,
        "n_items": f.n_items,
        "n_decided": f.n_decided,
        "n_person": f.n_person,
        "coverage": f.coverage,
        "vs_majority": estimate(f.vs_majority),
        "vs_people": estimate(f.vs_people),
        "usd_per_item": f.cost.usd_per_item,
        "tokens_per_item": f.cost.tokens_per_item,
        "cost_warning": f.cost.warning,
        "person_minutes_saved": f.person_minutes_saved,
    }


def _configurations(policy: PolicyResult | None, test: HoldoutTest | None) -> dict[str, Any] | None:
    """A cascade policy's configurations (each judge alone, each prefix, the cascade) on dev and, once tested, on
    holdout: what the coverage / cost / agreement plot and table show, and the choice made on dev."""
    c = policy.cascade if policy is not None else None
    if c is None or not c.configurations:
        return None
    dev = [
        _configuration_row(
            r.name, r.kind, r.chosen, r.dev,
            "chosen" if r.chosen else "within noise" if r.within_noise else
            "below the best" if r.meets_guarantee else "no threshold",
        )
        for r in c.configurations
    ]  # fmt: skip
    tested = test.cascade.configurations if test is not None and test.cascade is not None else []
    holdout = [
        _configuration_row(
            r.name, r.kind, r.chosen, r.holdout,
            {True: "guarantee held", False: "guarantee NOT held", None: "nothing decided"}[r.guarantee_held],
        )
        for r in tested
    ]  # fmt: skip
    choice = c.choice.to_dict() if c.choice is not None else None
    return {"dev": dev, "holdout": holdout, "choice": choice, "target": c.target,
            "minutes_per_label": c.minutes_per_label}  # fmt: skip


def _forced_warning(test: HoldoutTest) -> str | None:
    """The test's own warning; a forced test without one still says FORCED (the flag is what counts)."""
    if test.warning:
        return test.warning
    if test.forced:
        return "FORCED: this holdout was tested before; these figures are not an untouched holdout estimate"
    return None


def _conclusion(conclusion: Conclusion | None) -> dict[str, Any] | None:
    """Whether the policy (or one category's decision) held on holdout, and why, in words."""
    return None if conclusion is None else {"held": conclusion.held, "reason": conclusion.reason}


def _agreement(part: Agreement | None) -> dict[str, float | int | None] | None:
    return estimate(part.agreement) if part is not None else None


def _test_figures(
    n_items: int | None,
    judge_decides: Estimate | None,
    judged: HoldoutFigures | None,
    everything: HoldoutFigures | None,
    decisions: dict[str, int],
    conclusion: Conclusion | None,
) -> dict[str, Any]:
    return {
        "n_items": n_items,
        "judge_decides": estimate(judge_decides),
        "judged_vs_people": _agreement(judged.vs_people) if judged else None,
        "judged_vs_majority": _agreement(judged.vs_majority) if judged else None,
        "judged_ceiling": estimate(judged.ceiling) if judged else None,
        "all_vs_people": _agreement(everything.vs_people) if everything else None,
        "all_ceiling": estimate(everything.ceiling) if everything else None,
        "decisions": dict(decisions),
        "conclusion": _conclusion(conclusion),
    }


def _policy_test(test: HoldoutTest | None) -> dict[str, Any] | None:
    """The one-shot holdout test of a policy (`juge policy test --json`)."""
    if test is None:
        return None
    settings = {k: getattr(test, k) for k in ("split", "rule", "policy_hash", "data_hash")}
    return {
        "settings": {k: str(v) for k, v in settings.items() if v is not None},
        "forced": test.forced,
        "warning": _forced_warning(test),
        "previous_uses": len(test.previous_uses) if "previous_uses" in test.model_fields_set else None,
        "overall": _test_figures(
            test.n_items, test.judge_decides, test.on_judged_items, test.no_policy, test.decisions, test.conclusion
        ),
        "per_category": {
            name: _test_figures(c.n_items, c.judge_decides, c.on_judged_items, c.no_policy, c.decisions, c.conclusion)
            for name, c in test.per_category.items()
        },
    }


def _audit(audit: AuditStatus | None) -> dict[str, Any] | None:
    """The weekly audits read back (`juge audit status --json`): the outcome, week by week, and per category."""
    if audit is None:
        return None

    def group(name: str, g: Any) -> dict[str, Any]:
        return {
            "name": name,
            "n_items": g.n_items,
            "n_labels": g.n_labels,
            "agreement": estimate(g.agreement),
            "ceiling": g.ceiling,
            "margin": g.margin,
            "bar": g.bar,
            "outcome": g.outcome,
            "drifted_in": g.drifted_in,
            "items_to_decide": g.items_to_decide,
            "reason": g.reason,
        }

    return {
        "policy_hash": audit.policy_hash,
        "judge": audit.judge,
        "alpha": audit.alpha,
        "method": audit.method,
        "outcome": audit.outcome,
        "reason": audit.reason,
        "drifted_in": audit.overall.drifted_in,
        "weeks": [
            {
                "week": w.week,
                "n_items": w.n_items,
                "agreement": w.agreement,
                "cumulative": estimate(w.cumulative),
                "bar": w.bar,
                "evidence": w.evidence,
            }
            for w in audit.overall.weeks
        ],
        "groups": [group("all categories", audit.overall)] + [group(n, g) for n, g in audit.categories.items()],
        "batches": len(audit.batches),
        "notes": list(audit.notes),
    }


def _categories(
    judges: list[dict[str, Any]], calibration: Calibration, routes: dict[str, str], stats: tuple[str, ...]
) -> list[dict[str, Any]]:
    """One row per category: the people's figures (top-level ``per_category``, else a judge's copy) and each judge's."""
    people = calibration.per_category or {}
    names: list[str] = list(people)
    for judge in judges:
        names.extend(c for c in judge["per_category"] if c not in names)
    rows = []
    for name in names:
        own = people.get(name)
        ceiling = _ceiling(own.ceiling if own else None, stats)
        if ceiling["agreement"] is None:
            copies = [j["per_category"][name]["ceiling"] for j in judges if name in j["per_category"]]
            ceiling = next((c for c in copies if c["agreement"] is not None), ceiling)
        rows.append(
            {
                "name": name,
                "route": routes.get(name),
                "n_items": own.n_items if own else None,
                "n_votes": own.n_votes if own else None,
                "ceiling": ceiling,
                "judges": {j["key"]: j["per_category"][name]["vs_people"] for j in judges if name in j["per_category"]},
            }
        )
    return rows


def _versions(versions: Versions | None) -> dict[str, Any]:
    """Split `versions` into data hashes, the juge that made the study, and everything else."""
    if versions is None:
        return {"study_juge": None, "data": [], "other": []}
    other = dict(versions.model_extra or {})  # keys the study adds beside the typed ones: free-form
    data = [{"name": k, "value": v} for k, v in versions.sources_sha256.items()]
    for key in ("dataset_hash", "data_hash", "dataset_sha256"):
        if key in other:
            data.append({"name": key, "value": str(other.pop(key))})
    return {"study_juge": versions.juge or None, "data": data, "other": flatten_versions(other)}


def _verdict_rows(judges: list[dict[str, Any]]) -> list[str]:
    """Verdict names in the order the judges give them (A, B, tie, inconsistent or PASS, FAIL...), missing last."""
    rows = [v for v in VERDICTS if v != "missing"]
    for judge in judges:
        rows.extend(v for v in judge["verdict_counts"] or {} if v not in rows and v != "missing")
    used = {v for j in judges for v in j["verdict_counts"] or {}}
    return [v for v in rows if v in used] + ["missing"]


def as_calibration(calibration: Calibration | dict[str, Any]) -> Calibration:
    """The typed calibration (a dict, e.g. a file's JSON, is validated: pydantic names the bad field)."""
    return calibration if isinstance(calibration, Calibration) else Calibration.model_validate(calibration)


HEADLINE_KINDS = ("pairwise", "passfail", "score")


def calibration_headlines(calibration: Calibration | dict[str, Any]) -> list[dict[str, Any]]:
    """The one-line answers of a study (see `juge.reports.headline`), as JSON-ready dicts: those it carries
    (its ``headline``), else the report data's; none for a criteria study (each criterion's study has its own)."""
    if isinstance(calibration, dict):
        kind, carried = calibration.get("kind"), calibration.get("headline")
    else:
        kind, carried = calibration.kind, calibration.headlines
    if kind not in HEADLINE_KINDS:
        return []
    return carried if carried is not None else build_report_data(calibration)["headlines"]


def build_report_data(
    calibration: Calibration | dict[str, Any],
    *,
    policy: PolicyResult | dict[str, Any] | None = None,
    policy_test: HoldoutTest | dict[str, Any] | None = None,
    cases: dict[str, Case] | None = None,
    top: int = 3,
    source: str | None = None,
    generated_at: datetime | None = None,
    audit: AuditStatus | dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The normalised report data (see the module docstring).

    `cases` (items by id) adds the question, answers and rater votes to the disagreement
    examples; `top` is how many examples to show per judge.
    """
    cal = as_calibration(calibration)
    if isinstance(policy, dict):
        policy = PolicyResult.model_validate(policy)
    if isinstance(policy_test, dict):
        policy_test = HoldoutTest.model_validate(policy_test)
    if isinstance(audit, dict):
        audit = AuditStatus.model_validate(audit)
    kind = cal.kind if cal.kind in STATS_BY_KIND else "pairwise"
    stats = STATS_BY_KIND[kind]
    infos = cal.versions.judges if cal.versions else {}
    judges = [_judge(key, entry, infos.get(key), stats) for key, entry in cal.judges.items()]
    policy_data = _policy(policy)
    routes = policy_data["routes"] if policy_data else {}
    disagreements = select_disagreements(cal, top=top)
    if cases:
        attach_items(disagreements, cases)
    generated_at = generated_at or datetime.now(UTC)
    test_data = _policy_test(policy_test)
    if test_data and policy_data:
        expected, tested = policy_data["settings"].get("policy_hash"), test_data["settings"].get("policy_hash")
        test_data["policy_mismatch"] = bool(expected and tested and expected != tested)
    ceiling = cal.ceiling
    data: dict[str, Any] = {
        "kind": kind,
        "stats": list(stats),
        "stat_labels": {s: STAT_LABELS[s] for s in stats},
        "judge_only_stats": sorted(JUDGE_ONLY_STATS & set(stats)),
        "truth": {"mode": cal.truth.mode, "n_items": cal.truth.n_items} if cal.truth else None,
        "scale": [str(v) for v in cal.scale] if cal.scale is not None else None,
        "source": source,
        "juge_version": __version__,
        "generated_at": generated_at.isoformat(timespec="seconds"),
        "versions": _versions(cal.versions),
        "bootstrap": cal.bootstrap.to_dict() if cal.bootstrap else {},
        "split": cal.split,
        "n_items": cal.n_items,
        "n_votes": cal.n_votes,
        "n_raters": cal.n_raters,
        "n_without_majority": cal.n_without_majority,
        "ceiling": {
            **_ceiling(ceiling, stats),
            "agreement_without_ties": estimate(ceiling.agreement_without_ties),
            "threshold": ceiling.at_threshold.threshold if ceiling.at_threshold else None,
        },
        "people_picks_longer": estimate(cal.majority_picks_longer),
        "judges": judges,
        "verdict_rows": _verdict_rows(judges),
        "categories": _categories(judges, cal, routes, stats),
        "reference": [
            {
                "with_reference": r.with_reference,
                "without_reference": r.without_reference,
                "n_items": r.n_items,
                "with": estimate(r.vs_people_with),
                "without": estimate(r.vs_people_without),
                "difference": estimate(r.difference),
            }
            for r in cal.reference or []
        ],
        "differences": [
            {
                "a": r.a,
                "b": r.b,
                "n_items": r.n_items,
                "a_vs_people": estimate(r.vs_people_a),
                "b_vs_people": estimate(r.vs_people_b),
                "difference": estimate(r.difference),
            }
            for r in cal.differences or []
        ],
        "dataset": cal.dataset.to_dict() if cal.dataset else None,
        "single_score": [j["key"] for j in judges if kind != "pairwise" or j["confusion"]],
        "policy": policy_data,
        "policy_test": test_data,
        "configurations": _configurations(policy, policy_test),
        "audit": _audit(audit),
        "disagreements": disagreements,
        "disagreements_per_judge": top,
        "notes": list(cal.notes),
    }
    # Decided once: a study from `juge.calibrate` carries its lines; an older file without them gets them now.
    data["headlines"] = cal.headlines if cal.headlines is not None else [h.to_dict() for h in headlines(data)]
    data["headline_margin"], data["headline_min_pairs"] = HEADLINE_MARGIN, MIN_PAIRS
    data["baseline_lines"] = trivial_baseline_lines(cal.to_dict())
    data["verdicts"] = verdicts(policy, policy_test)  # the first screen carries every verdict the inputs hold
    data["input_mismatches"] = input_mismatches(cal, policy, policy_test)
    return data
