"""Compare two runs of the same cases (two versions of a system) and report only what changed.

Each case's verdict is pass / fail / missing as defined in ``juge.runs.verdicts``.
The runs are joined on case id; a case whose inputs (question, messages, context,
source, reference) differ between the runs is left out and counted. On the cases
with a verdict in both runs:

- transitions: pass->fail (``b``) and fail->pass (``c``);
- paired difference of pass rates, ``rate_B - rate_A`` (B is the newer run), with a
  percentile bootstrap that resamples the same cases for both runs;
- exact McNemar test on ``b`` and ``c`` (two-sided; McNemar 1947).

Scores from different judges or rubrics are not comparable, so the comparison is
refused when the judge versions (judge, model, template id, template hash) differ,
unless explicitly allowed, in which case the result carries a warning.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from juge.data.records import Case, Judgment
from juge.errors import InputError
from juge.runs.judgediff import judge_diffs
from juge.runs.results import Comparison
from juge.runs.verdicts import CaseOutcome, run_outcomes, run_threshold
from juge.stats import mcnemar_exact, paired_ratio_difference, ratio_estimate
from juge.store import Store

INPUT_FIELDS = ("question", "messages", "context", "source", "reference")


def judge_versions(judgments: Iterable[Judgment]) -> list[dict[str, str]]:
    """The distinct (judge, model, template, template_hash) used in a run, sorted."""
    keys = {(j.judge, j.model, j.template, j.template_hash) for j in judgments}
    return [dict(zip(("judge", "model", "template", "template_hash"), k)) for k in sorted(keys)]


def input_hash(case: Case) -> str:
    """sha256 of the case's inputs only (not the outputs under test)."""
    data = case.model_dump(include=set(INPUT_FIELDS), mode="json")
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def raw_outputs(store: Store, run_id: str, cases: Iterable[Case]) -> dict[str, dict[str, str | None]]:
    """The system's raw outputs per case: from the run's outputs table, else from the case record."""
    stored = store.outputs(run_id)
    out: dict[str, dict[str, str | None]] = {}
    for case in cases:
        slots = {slot: row["text"] for (item, slot), row in stored.items() if item == case.id}
        if not slots:
            slots = {s: getattr(case, s) for s in ("output", "output_1", "output_2") if getattr(case, s) is not None}
        out[case.id] = slots
    return out


def _run_side(store: Store, run_id: str, threshold: float | None) -> dict[str, Any]:
    run = store.get_run(run_id)
    threshold = run_threshold(run["config"], threshold)
    cases = store.run_cases(run["id"])
    judgments = store.judgments(run["id"])
    checks = store.check_results(run["id"])
    outcomes, not_counted = run_outcomes(cases, judgments, checks, run["config"], threshold=threshold)
    return {
        "run": run,
        "threshold": threshold,
        "cases": {c.id: c for c in cases},
        "judgments": judgments,
        "not_counted": not_counted,
        "check_names": sorted({name for per in checks.values() for name in per}),
        "outcomes": outcomes,
        "outputs": raw_outputs(store, run["id"], cases),
    }


def _judge_texts(judgments: list[Judgment], item_id: str) -> list[dict[str, Any]]:
    return [
        {"judge": j.judge, "verdict": j.verdict, "outcome": j.outcome, "text": j.text}
        for j in judgments
        if j.item_id == item_id and j.order is None
    ]


def compare_runs(
    store: Store,
    run_a: str,
    run_b: str,
    *,
    threshold: float | None = None,
    allow_different_judges: bool = False,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    against: str | Path | None = None,
    force: bool = False,
) -> Comparison:
    """Compare run B (new) against run A (old) on their shared cases (``to_dict()``: ``juge compare --json``).
    ``against``: a policy or calibration both runs' judge must still be (else refused unless ``force``)."""
    a, b = _run_side(store, run_a, threshold), _run_side(store, run_b, threshold)
    warnings: list[str] = []
    identity = None
    if against is not None:
        from juge.judges.identity import check_runs_against

        identity = check_runs_against(
            against, {a["run"]["id"]: a["judgments"], b["run"]["id"]: b["judgments"]}, force=force,
            command="juge compare",
        )  # fmt: skip
        if identity.warning:
            warnings.append(identity.warning)
    versions_a, versions_b = judge_versions(a["judgments"]), judge_versions(b["judgments"])
    if versions_a != versions_b:
        message = (
            "the runs used different judge versions or rubrics, so their verdicts are not comparable:\n"
            f"  {a['run']['id']}: {_describe(versions_a)}\n  {b['run']['id']}: {_describe(versions_b)}"
        )
        if not allow_different_judges:
            raise InputError(
                message + "\nre-judge both runs with the same judge, or pass --allow-different-judges"
                " to compare anyway (the result will be flagged)"
            )
        warnings.append("NOT COMPARABLE: " + message)
    if a["threshold"] != b["threshold"]:
        warnings.append(
            f"the runs pass a score at different thresholds ({a['run']['id']}: {a['threshold']}, "
            f"{b['run']['id']}: {b['threshold']}; their [gate] min_score): pass --threshold to use one"
        )
    not_counted = sorted(set(a["not_counted"]) | set(b["not_counted"]))
    if not_counted:
        warnings.append(
            f"not counted (score judges: pass --threshold to count a score as a pass): {', '.join(not_counted)}"
        )
    if a["check_names"] != b["check_names"]:
        warnings.append(f"the runs ran different checks: {a['check_names']} vs {b['check_names']}")

    shared = [i for i in a["cases"] if i in b["cases"]]
    if not shared:
        raise InputError(f"runs {a['run']['id']} and {b['run']['id']} have no case id in common")
    same_inputs = [i for i in shared if input_hash(a["cases"][i]) == input_hash(b["cases"][i])]
    paired = [i for i in same_inputs if a["outcomes"][i].verdict != "missing" and b["outcomes"][i].verdict != "missing"]
    if not paired and same_inputs:
        if not_counted:
            raise InputError(
                f"judge {', '.join(not_counted)} returns scores and the runs' eval sets no [gate] min_score, so no "
                "case has a pass/fail verdict: pass --threshold to say what score passes"
            )
        reason = (a["outcomes"][same_inputs[0]].reasons or b["outcomes"][same_inputs[0]].reasons or ["?"])[0]
        raise InputError(
            f"no case has a pass/fail verdict in both runs (e.g. {same_inputs[0]!r}: {reason}); compare "
            "needs checks or PASS/FAIL/score judges (pairwise judgments say which answer is better, "
            "not whether one passes)"
        )
    pass_a = np.array([a["outcomes"][i].verdict == "pass" for i in paired], dtype=float)
    pass_b = np.array([b["outcomes"][i].verdict == "pass" for i in paired], dtype=float)
    ones = np.ones_like(pass_a)
    n_pass_to_fail = int(((pass_a == 1) & (pass_b == 0)).sum())
    n_fail_to_pass = int(((pass_a == 0) & (pass_b == 1)).sum())
    changed = [_changed_case(i, a, b) for i in same_inputs if a["outcomes"][i].verdict != b["outcomes"][i].verdict]
    return Comparison.model_validate(
        {
            "run_a": _run_summary(a),
            "run_b": _run_summary(b),
            "judges": versions_a if versions_a == versions_b else {"a": versions_a, "b": versions_b},
            "comparable": versions_a == versions_b,
            "forced": versions_a != versions_b,
            "warnings": warnings,
            # Per changed judge: its model and the diff of its prompt on a shared case (a kept extra key).
            "judge_diffs": judge_diffs(store, a["run"]["id"], b["run"]["id"], a["judgments"], b["judgments"])
            if versions_a != versions_b
            else [],
            "n_shared_cases": len(shared),
            "n_only_in_a": len(a["cases"]) - len(shared),
            "n_only_in_b": len(b["cases"]) - len(shared),
            "n_inputs_differ": len(shared) - len(same_inputs),
            "n_missing_verdict": len(same_inputs) - len(paired),
            "n_paired": len(paired),
            "pass_rate_a": ratio_estimate(pass_a, ones, n_resamples=n_resamples, seed=seed, level=level).to_dict(),
            "pass_rate_b": ratio_estimate(pass_b, ones, n_resamples=n_resamples, seed=seed, level=level).to_dict(),
            "difference_b_minus_a": paired_ratio_difference(
                pass_b, ones, pass_a, ones, n_resamples=n_resamples, seed=seed, level=level
            ).to_dict(),
            "transitions": {
                "pass_to_fail": n_pass_to_fail,
                "fail_to_pass": n_fail_to_pass,
                "unchanged_pass": int(((pass_a == 1) & (pass_b == 1)).sum()),
                "unchanged_fail": int(((pass_a == 0) & (pass_b == 0)).sum()),
            },
            "mcnemar_p": mcnemar_exact(n_pass_to_fail, n_fail_to_pass),
            "changed": changed,
            "identity": None if identity is None else identity.to_dict(),
        }
    )


def _describe(versions: list[dict[str, str]]) -> str:
    if not versions:
        return "no judge"
    return ", ".join(f"{v['judge']} ({v['model']}, {v['template']}@{v['template_hash'][:12]})" for v in versions)


def _run_summary(side: dict[str, Any]) -> dict[str, Any]:
    run = side["run"]
    return {
        "id": run["id"],
        "name": run["name"],
        "dataset_hash": run["dataset_hash"],
        "started_at": run["started_at"],
        "n_cases": len(side["cases"]),
    }


def _changed_case(item_id: str, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    oa: CaseOutcome = a["outcomes"][item_id]
    ob: CaseOutcome = b["outcomes"][item_id]
    case: Case = a["cases"][item_id]
    return {
        "item_id": item_id,
        "transition": f"{oa.verdict}->{ob.verdict}",
        "same_outputs": a["outputs"][item_id] == b["outputs"][item_id],
        "question": case.question,
        "a": {
            "verdict": oa.verdict,
            "reasons": oa.reasons,
            "outputs": a["outputs"][item_id],
            "judgments": _judge_texts(a["judgments"], item_id),
        },
        "b": {
            "verdict": ob.verdict,
            "reasons": ob.reasons,
            "outputs": b["outputs"][item_id],
            "judgments": _judge_texts(b["judgments"], item_id),
        },
    }
