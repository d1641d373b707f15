"""What a calibration report's first screen says besides the headline: every verdict its inputs hold (the
policy's status, the holdout test's verdict) and a warning for each sign that its inputs were not made from the
same data (another run, another split, other input files, a test of another policy).

The inputs record what they read: a calibration and a policy their input files' SHA-256 (a stored run as
``run ID dataset``) and split; a holdout test the hash of the policy it tested.
"""

from __future__ import annotations

from typing import Any

from juge.calibration.results import Calibration
from juge.policy.results import HoldoutTest, PolicyResult

RUN_KEY = ("run ", " dataset")  # how a study's sources name a stored run's cases


def runs_read(sources: dict[str, str]) -> set[str]:
    """The stored runs a study read, from its sources' names."""
    head, tail = RUN_KEY
    return {k[len(head) : -len(tail)] for k in sources if k.startswith(head) and k.endswith(tail)}


def verdicts(policy: PolicyResult | None, test: HoldoutTest | None) -> list[dict[str, Any]]:
    """The policy's status and the holdout test's verdict, one line each (``kind``, ``status``, ``text``)."""
    out: list[dict[str, Any]] = []
    if policy is not None:
        routes = [d.route for d in policy.decisions.values()]
        n_judge, n_person = routes.count("judge"), len(routes) - routes.count("judge")
        c = policy.cascade
        text = (
            f"Policy ({policy.judge}, rule {policy.rule}): {policy.status.upper()}. The judge decides "
            f"{n_judge} of {len(routes)} categories, a person {n_person}."
            if c is None  # a cascade's categories are its first stage's: say what routes instead
            else f"Policy (cascade {' → '.join(s.judge for s in c.stages)}, target {c.target:g}): "
            f"{policy.status.upper()}. On dev its stages decide {c.n_items - c.n_person} of {c.n_items} items, "
            f"a person {c.n_person}."
        )
        out.append({"kind": "policy", "status": policy.status, "text": text})
    if test is not None:
        status = test.status or ("untested" if test.held is None else "held" if test.held else "not held")
        reason = f" {test.conclusion.reason.rstrip('.')}." if test.conclusion and test.conclusion.reason else ""
        forced = " FORCED: these items were tested before." if test.forced else ""
        out.append(
            {
                "kind": "holdout",
                "status": status,
                "text": f"Holdout test: {status.upper()} on {test.n_items} {test.split} items.{reason}{forced}",
            }
        )
    return out


def input_mismatches(cal: Calibration, policy: PolicyResult | None, test: HoldoutTest | None) -> list[str]:
    """A sentence for each sign that the report joins inputs made from different data."""
    out: list[str] = []
    cal_sources = dict(cal.versions.sources_sha256) if cal.versions else {}
    if policy is not None:
        pol_sources = dict(policy.dev.sources_sha256)
        cal_runs = runs_read(cal_sources) | ({cal.run.id} if cal.run else set())
        pol_runs = runs_read(pol_sources)
        if cal_runs and pol_runs and cal_runs != pol_runs:
            out.append(
                f"The calibration read run {', '.join(sorted(cal_runs))}, the policy was derived on run "
                f"{', '.join(sorted(pol_runs))}: their figures are not of the same judgments."
            )
        shared = {
            k for k in set(cal_sources) & set(pol_sources) if not (k.startswith(RUN_KEY[0]) and k.endswith(RUN_KEY[1]))
        }
        for name in sorted(shared):
            if cal_sources[name] != pol_sources[name]:
                out.append(
                    f"The calibration and the policy read different {name} (sha256 {cal_sources[name][:12]} "
                    f"vs {pol_sources[name][:12]})."
                )
        if policy.dev.split and cal.split != policy.dev.split:
            out.append(
                f"The calibration studied the {cal.split} split, the policy was derived on the {policy.dev.split} "
                "split: their figures are on different items."
            )
    if test is not None:
        if policy is not None and test.policy_hash != policy.policy_hash:
            out.append(
                f"The holdout test is of another policy (hash {test.policy_hash[:12]}) than the one shown "
                f"({policy.policy_hash[:12]})."
            )
        if cal.split == test.split:
            out.append(
                f"The calibration studied the {cal.split} split, the one the holdout test used: the test is not "
                "on untouched items."
            )
    return out
