"""Normalise a calibration result (and an optional policy) into the data a report is made from.

The calibration JSON is written by `juge calibrate --json` (keys in issue 3): every
estimate is ``{"value", "low", "high", "n"}``. This module reads it tolerantly - an
absent or malformed optional key becomes ``None`` ("not available" in the report) -
and never computes a figure that the study did not produce, except where the
derivation is exact (e.g. the mean human score per judge score, read off a
confusion matrix of counts). The result is plain JSON-able data: it is what
`juge report --format json` writes and what the HTML and Markdown templates render.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from juge import __version__
from juge.data.records import Case
from juge.policy.derivation import MIN_PAIRS
from juge.reports.disagreements import attach_items, select_disagreements
from juge.reports.headline import MARGIN as HEADLINE_MARGIN
from juge.reports.headline import headlines

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
PERSON_ROUTES = {"person", "human", "people", "to_person", "send_to_person"}
POLICY_SETTINGS = ("judge", "rule", "margin", "policy_hash", "created_at", "juge_version")


def number(value: Any) -> float | None:
    """A finite float, or None for anything else (absent, NaN, text, bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def count(value: Any) -> int | None:
    """A non-negative integer count, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


def estimate(obj: Any) -> dict[str, float | int | None] | None:
    """``{"value", "low", "high", "n"}`` from an estimate object; None when there is no value.

    A bare number is kept as a value without interval or n (nothing is made up).
    """
    if isinstance(obj, dict):
        value = number(obj.get("value"))
        if value is None:
            return None
        low, high = number(obj.get("low")), number(obj.get("high"))
        if low is None or high is None:
            low = high = None
        return {"value": value, "low": low, "high": high, "n": count(obj.get("n"))}
    value = number(obj)
    if value is None:
        return None
    return {"value": value, "low": None, "high": None, "n": None}


def _mapping(obj: Any) -> dict[str, Any]:
    return obj if isinstance(obj, dict) else {}


def _texts(obj: Any) -> list[str]:
    """A list of names as text: a list as it is, one name alone as a list of one, anything else none."""
    if isinstance(obj, list):
        return [str(x) for x in obj]
    return [obj] if isinstance(obj, str) and obj else []


def _counts(obj: Any, keys: tuple[str, ...]) -> dict[str, int | None] | None:
    if not isinstance(obj, dict):
        return None
    out = {k: count(obj.get(k)) for k in keys}
    # Extra keys a newer study may add (e.g. another outcome) are kept, never dropped.
    out.update({str(k): count(v) for k, v in obj.items() if k not in keys and count(v) is not None})
    return out


def is_baseline(key: str, entry: dict[str, Any]) -> bool:
    """Baselines ("longer answer", a recorded judge such as "gpt4_2023") have no template in their key."""
    flag = entry.get("baseline")
    if isinstance(flag, bool):
        return flag
    return "/" not in key


def flatten_versions(obj: Any, prefix: str = "") -> list[dict[str, str]]:
    """Turn the nested `versions` object into ``[{"name", "value"}]`` rows, in the file's order."""
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


def figures(obj: Any, stats: tuple[str, ...]) -> dict[str, Any]:
    """The statistics `stats` of one judge (or of the people) against people, each an estimate or None.

    Pairwise studies nest them under ``vs_people``; single-score and PASS/FAIL studies put
    them at the top of the entry, the threshold figures under ``at_threshold`` and
    failures caught / false flags as ``{"k", "n", "rate"}`` (the estimate gets its k).
    """
    obj = _mapping(obj)
    obj = _mapping(obj.get("vs_people")) if "vs_people" in obj else obj
    out: dict[str, Any] = {}
    for stat in stats:
        if stat.startswith("threshold_"):
            out[stat] = estimate(_mapping(obj.get("at_threshold")).get(stat.removeprefix("threshold_")))
        elif stat in JUDGE_ONLY_STATS:
            caught = _mapping(obj.get(stat))
            out[stat] = estimate(caught.get("rate"))
            if out[stat] is not None:
                out[stat]["k"] = count(caught.get("k"))
        else:
            out[stat] = estimate(obj.get(stat))
    return out


def _judge(key: str, entry: dict[str, Any], info: dict[str, Any], stats: tuple[str, ...]) -> dict[str, Any]:
    per_category = {
        str(cat): {
            "vs_people": figures(v, stats),
            "ceiling": figures(v.get("ceiling"), stats) | {"n_pairs": count(_mapping(v.get("ceiling")).get("n_pairs"))},
        }
        for cat, v in _mapping(entry.get("per_category")).items()
        if isinstance(v, dict)
    }
    patterns = _counts(entry.get("inconsistent_patterns"), INCONSISTENT_PATTERNS)
    conf = confusion(entry.get("confusion") or entry.get("confusion_matrix"))
    return {
        "key": key,
        "baseline": is_baseline(key, {**info, **entry}),
        "models": _texts(info.get("models")),
        "template": info.get("template"),
        "template_hashes": _texts(info.get("template_hashes")),
        "n_items": count(entry.get("n_items")),
        "verdict_counts": _counts(entry.get("verdict_counts"), ()),
        "outcomes": _counts(entry.get("outcomes"), OUTCOMES),
        "vs_people": figures(entry, stats),
        "vs_majority": {s: estimate(_mapping(entry.get("vs_majority")).get(s)) for s in PAIRWISE_STATS},
        "order_flip_rate": estimate(entry.get("order_flip_rate")),
        "picks_longer": estimate(entry.get("picks_longer")),
        "picks_longer_against_majority": estimate(entry.get("picks_longer_against_majority")),
        "inconsistent_patterns": patterns if patterns and patterns.get("n") else None,
        "self_consistency": estimate(entry.get("self_consistency")),
        "per_category": per_category,
        "threshold": number(_mapping(entry.get("at_threshold")).get("threshold")),
        "confusion": conf,
        "reliability": reliability(entry.get("reliability"), conf),
    }


def confusion(obj: Any) -> dict[str, Any] | None:
    """A confusion matrix as ``{"labels", "matrix"}`` with rows = people, columns = judge.

    Accepts ``{"labels": [...], "matrix": [[...]]}`` (optionally ``"rows"``/``"columns"`` for
    different label sets) or a nested map ``{human: {judge: count}}``.
    """
    if not isinstance(obj, dict):
        return None
    if "matrix" in obj:
        # "rows"/"columns" are either label lists or the names of the axes (e.g. "people", "judge").
        matrix = obj.get("matrix")
        rows = obj["rows"] if isinstance(obj.get("rows"), list) else obj.get("labels")
        cols = obj["columns"] if isinstance(obj.get("columns"), list) else obj.get("labels")
        if not (isinstance(matrix, list) and isinstance(rows, list) and isinstance(cols, list)):
            return None
        if len(matrix) != len(rows) or any(not isinstance(r, list) or len(r) != len(cols) for r in matrix):
            return None
        cells = [[count(c) for c in r] for r in matrix]
    else:
        rows = list(obj)
        cols = sorted({c for r in obj.values() if isinstance(r, dict) for c in r}, key=str)
        cells = [[count(_mapping(obj[r]).get(c, 0)) for c in cols] for r in rows]
    if any(c is None for r in cells for c in r):
        return None
    return {
        "rows": [_label(r) for r in rows],
        "columns": [_label(c) for c in cols],
        "matrix": cells,
        "axis": {"rows": _axis_name(obj, "rows", "people"), "columns": _axis_name(obj, "columns", "judge")},
    }


def _label(value: Any) -> str:
    """A scale point as text: 3.0 -> '3' (the study writes scores as floats), anything else as is."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _axis_name(obj: dict[str, Any], key: str, default: str) -> str:
    return obj[key] if isinstance(obj.get(key), str) else default


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


def reliability(obj: Any, conf: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    """The reliability curve: the study's points (``[{"judge_score", "mean_human_score": estimate}]``,
    with bootstrap intervals) when it wrote them, else read exactly off the confusion matrix (no interval)."""
    points = []
    for point in obj if isinstance(obj, list) else []:
        point = _mapping(point)
        score, mean = number(point.get("judge_score")), estimate(point.get("mean_human_score"))
        if score is not None and mean is not None:
            points.append(
                {
                    "judge_score": score,
                    "mean_human_score": mean["value"],
                    "low": mean["low"],
                    "high": mean["high"],
                    "n": mean["n"],
                }
            )
    if points:
        return sorted(points, key=lambda p: p["judge_score"])
    return reliability_from_confusion(conf) if conf else None


def _route(rule: Any) -> str | None:
    """'person' or 'judge' (or another word the policy used) from a route string or a category rule."""
    if isinstance(rule, dict):
        rule = rule.get("decision") or rule.get("route")
    if not isinstance(rule, str):
        return None
    return "person" if rule.lower() in PERSON_ROUTES else rule


def _policy(policy: Any) -> dict[str, Any] | None:
    """A policy written by `juge policy derive --json`: its settings and one row per category.

    Also accepts the plain shapes ``{"to_person": [...]}`` and ``{"categories": {cat: "person"}}``.
    """
    if not isinstance(policy, dict):
        return None
    categories = []
    for cat, rule in _mapping(policy.get("categories")).items():
        rule_map = _mapping(rule)
        categories.append(
            {
                "name": str(cat),
                "route": _route(rule),
                "template": str(rule_map["template"]) if rule_map.get("template") else None,
                "vs_people": estimate(rule_map.get("vs_people")),
                "ceiling": estimate(rule_map.get("ceiling")),
                "difference": estimate(rule_map.get("difference")),
                "reason": str(rule_map["reason"]) if rule_map.get("reason") else None,
            }
        )
    for key in ("to_person", "send_to_person", "person_categories"):
        listed = policy.get(key)
        for cat in listed if isinstance(listed, list) else []:
            if str(cat) not in {c["name"] for c in categories}:
                categories.append(
                    {
                        "name": str(cat),
                        "route": "person",
                        "template": None,
                        "vs_people": None,
                        "ceiling": None,
                        "difference": None,
                        "reason": None,
                    }
                )
    dev = _mapping(policy.get("dev"))
    settings = {k: policy[k] for k in POLICY_SETTINGS if isinstance(policy.get(k), (str, int, float))}
    settings.update({f"dev {k}": dev[k] for k in ("split", "n_items", "n_votes", "data_hash") if k in dev})
    audit = _mapping(policy.get("audit"))
    if "n" in audit:
        settings["audit"] = f"{audit['n']} decisions every {audit.get('every', 'period')}"
    return {
        "routes": {c["name"]: c["route"] for c in categories if c["route"]},
        "categories": categories,
        "settings": {k: str(v) for k, v in settings.items()},
    }


def _forced_warning(result: dict[str, Any]) -> str | None:
    """The test's own warning; a forced test without one still says FORCED (the flag is what counts)."""
    if result.get("warning"):
        return str(result["warning"])
    if result.get("forced"):
        return "FORCED: this holdout was tested before; these figures are not an untouched holdout estimate"
    return None


def _conclusion(obj: Any) -> dict[str, Any] | None:
    """Whether the policy (or one category's decision) held on holdout, and why, in words."""
    obj = _mapping(obj)
    if not isinstance(obj.get("reason"), str):
        return None
    held = obj.get("held")
    return {"held": held if isinstance(held, bool) else None, "reason": obj["reason"]}


def _policy_test(result: Any) -> dict[str, Any] | None:
    """The one-shot holdout test of a policy (`juge policy test --json`)."""
    if not isinstance(result, dict):
        return None

    def test_figures(obj: Any) -> dict[str, Any]:
        obj = _mapping(obj)
        judged, everything = _mapping(obj.get("on_judged_items")), _mapping(obj.get("no_policy"))
        return {
            "n_items": count(obj.get("n_items")),
            "judge_decides": estimate(obj.get("judge_decides")),
            "judged_vs_people": estimate(_mapping(judged.get("vs_people")).get("agreement")),
            "judged_vs_majority": estimate(_mapping(judged.get("vs_majority")).get("agreement")),
            "judged_ceiling": estimate(judged.get("ceiling")),
            "all_vs_people": estimate(_mapping(everything.get("vs_people")).get("agreement")),
            "all_ceiling": estimate(everything.get("ceiling")),
            "decisions": _counts(obj.get("decisions"), ()) or {},
            "conclusion": _conclusion(obj.get("conclusion")),
        }

    return {
        "settings": {
            k: str(result[k])
            for k in ("split", "rule", "policy_hash", "data_hash")
            if isinstance(result.get(k), (str, int, float))
        },
        "forced": bool(result.get("forced")),
        "warning": _forced_warning(result),
        "previous_uses": len(result["previous_uses"]) if isinstance(result.get("previous_uses"), list) else None,
        "overall": test_figures(result),
        "per_category": {str(c): test_figures(v) for c, v in _mapping(result.get("per_category")).items()},
    }


def _categories(
    judges: list[dict[str, Any]], people: dict[str, Any], routes: dict[str, str], stats: tuple[str, ...]
) -> list[dict[str, Any]]:
    """One row per category: the people's figures (top-level ``per_category``, else a judge's copy) and each judge's."""
    names: list[str] = [str(c) for c in people]
    for judge in judges:
        names.extend(c for c in judge["per_category"] if c not in names)
    rows = []
    for name in names:
        own = _mapping(people.get(name))
        ceiling = figures(own.get("ceiling"), stats) | {"n_pairs": count(_mapping(own.get("ceiling")).get("n_pairs"))}
        if ceiling["agreement"] is None:
            copies = [j["per_category"][name]["ceiling"] for j in judges if name in j["per_category"]]
            ceiling = next((c for c in copies if c["agreement"] is not None), ceiling)
        rows.append(
            {
                "name": name,
                "route": routes.get(name),
                "n_items": count(own.get("n_items")),
                "n_votes": count(own.get("n_votes")),
                "ceiling": ceiling,
                "judges": {j["key"]: j["per_category"][name]["vs_people"] for j in judges if name in j["per_category"]},
            }
        )
    return rows


def _reference(obj: Any) -> list[dict[str, Any]]:
    """Paired comparisons of a judge with and without the reference answer, on the same items."""
    rows = []
    for r in obj if isinstance(obj, list) else []:
        r = _mapping(r)
        if not (r.get("with_reference") and r.get("without_reference")):
            continue
        rows.append(
            {
                "with_reference": str(r["with_reference"]),
                "without_reference": str(r["without_reference"]),
                "n_items": count(r.get("n_items")),
                "with": estimate(r.get("vs_people_with")),
                "without": estimate(r.get("vs_people_without")),
                "difference": estimate(r.get("difference")),
            }
        )
    return rows


def _differences(obj: Any) -> list[dict[str, Any]]:
    """Paired differences in agreement with people between two judges on the same items (a − b)."""
    rows = []
    for r in obj if isinstance(obj, list) else []:
        r = _mapping(r)
        if r.get("a") and r.get("b"):
            rows.append(
                {
                    "a": str(r["a"]),
                    "b": str(r["b"]),
                    "n_items": count(r.get("n_items")),
                    "a_vs_people": estimate(r.get("vs_people_a")),
                    "b_vs_people": estimate(r.get("vs_people_b")),
                    "difference": estimate(r.get("difference")),
                }
            )
    return rows


def _dataset(obj: Any) -> dict[str, str] | None:
    """The data set's name and attribution (which must travel with the data)."""
    obj = _mapping(obj)
    out = {k: str(obj[k]) for k in ("name", "attribution", "license") if obj.get(k)}
    return out or None


def _versions(versions: Any) -> dict[str, Any]:
    """Split `versions` into data hashes, the juge that made the study, and everything else."""
    versions = dict(_mapping(versions))
    judges = versions.pop("judges", None)
    sources = versions.pop("sources_sha256", None)
    study_juge = versions.pop("juge", None)
    data = [{"name": str(k), "value": str(v)} for k, v in _mapping(sources).items()]
    for key in ("dataset_hash", "data_hash", "dataset_sha256"):
        if key in versions:
            data.append({"name": key, "value": str(versions.pop(key))})
    other = flatten_versions(versions)
    if judges is not None and not isinstance(judges, dict):
        other += flatten_versions({"judges": judges})
    return {"study_juge": str(study_juge) if study_juge else None, "data": data, "other": other}


def _truth(obj: Any) -> dict[str, Any] | None:
    """Which human truth single scores were compared with (each rater, their mean, items they agree on)."""
    obj = _mapping(obj)
    return {"mode": str(obj["mode"]), "n_items": count(obj.get("n_items"))} if obj.get("mode") else None


def _verdict_rows(judges: list[dict[str, Any]]) -> list[str]:
    """Verdict names in the order the judges give them (A, B, tie, inconsistent or PASS, FAIL...), missing last."""
    rows = [v for v in VERDICTS if v != "missing"]
    for judge in judges:
        rows.extend(v for v in judge["verdict_counts"] or {} if v not in rows and v != "missing")
    used = {v for j in judges for v in j["verdict_counts"] or {}}
    return [v for v in rows if v in used] + ["missing"]


def build_report_data(
    calibration: dict[str, Any],
    *,
    policy: dict[str, Any] | None = None,
    policy_test: dict[str, Any] | None = None,
    cases: dict[str, Case] | None = None,
    top: int = 3,
    source: str | None = None,
    generated_at: datetime | None = None,
) -> dict[str, Any]:
    """The normalised report data (see the module docstring).

    `cases` (items by id) adds the question, answers and rater votes to the disagreement
    examples; `top` is how many examples to show per judge.
    """
    kind = calibration.get("kind")
    kind = kind if isinstance(kind, str) and kind in STATS_BY_KIND else "pairwise"
    stats = STATS_BY_KIND[kind]
    infos = _mapping(_mapping(calibration.get("versions")).get("judges"))
    judges = [
        _judge(str(k), v, _mapping(infos.get(k)), stats)
        for k, v in _mapping(calibration.get("judges")).items()
        if isinstance(v, dict)
    ]
    ceiling = _mapping(calibration.get("ceiling"))
    policy_data = _policy(policy)
    routes = policy_data["routes"] if policy_data else {}
    disagreements = select_disagreements(calibration, top=top)
    if cases:
        attach_items(disagreements, cases)
    generated_at = generated_at or datetime.now(UTC)
    bootstrap = _mapping(calibration.get("bootstrap"))
    test_data = _policy_test(policy_test)
    if test_data and policy_data:
        expected, tested = policy_data["settings"].get("policy_hash"), test_data["settings"].get("policy_hash")
        test_data["policy_mismatch"] = bool(expected and tested and expected != tested)
    data = {
        "kind": kind,
        "stats": list(stats),
        "stat_labels": {s: STAT_LABELS[s] for s in stats},
        "judge_only_stats": sorted(JUDGE_ONLY_STATS & set(stats)),
        "truth": _truth(calibration.get("truth")),
        "scale": [str(v) for v in calibration["scale"]] if isinstance(calibration.get("scale"), list) else None,
        "source": source,
        "juge_version": __version__,
        "generated_at": generated_at.isoformat(timespec="seconds"),
        "versions": _versions(calibration.get("versions")),
        "bootstrap": {k: bootstrap[k] for k in ("n_resamples", "seed", "level", "unit") if k in bootstrap},
        "split": calibration.get("split") if isinstance(calibration.get("split"), str) else None,
        "n_items": count(calibration.get("n_items")),
        "n_votes": count(calibration.get("n_votes")),
        "n_raters": count(calibration.get("n_raters")),
        "n_without_majority": count(calibration.get("n_without_majority")),
        "ceiling": {
            **figures(ceiling, stats),
            "agreement_without_ties": estimate(ceiling.get("agreement_without_ties")),
            "n_pairs": count(ceiling.get("n_pairs")),
            "threshold": number(_mapping(ceiling.get("at_threshold")).get("threshold")),
        },
        "people_picks_longer": estimate(calibration.get("majority_picks_longer")),
        "judges": judges,
        "verdict_rows": _verdict_rows(judges),
        "categories": _categories(judges, _mapping(calibration.get("per_category")), routes, stats),
        "reference": _reference(calibration.get("reference")),
        "differences": _differences(calibration.get("differences")),
        "dataset": _dataset(calibration.get("dataset")),
        "single_score": [j["key"] for j in judges if kind != "pairwise" or j["confusion"]],
        "policy": policy_data,
        "policy_test": test_data,
        "disagreements": disagreements,
        "disagreements_per_judge": top,
        "notes": [n for n in calibration["notes"] if isinstance(n, str)]
        if isinstance(calibration.get("notes"), list)
        else [],
    }
    data["headlines"] = [h.to_dict() for h in headlines(data)]
    data["headline_margin"], data["headline_min_pairs"] = HEADLINE_MARGIN, MIN_PAIRS
    return data
