"""Where a policy stands (``juge policy status``): derived on what, tested when and whether it held, its audits,
its judge's identity, whether it has expired and why, and what to run next.

Expiry needs evidence of the judge as it is now, which the policy file alone does not hold: the judge file to be
called (``eval_file``: the model it asks for, its template and rubric, before any call) and the judge's answers in
a stored run (``run``, or else the newest run in the store with calls of the policy's judge: the model version
as the provider answered). Both go through the one identity check of :mod:`juge.judges.identity`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from juge.errors import InputError
from juge.judges.identity import IdentityCheck, identities_of_calls, identity_of_judge
from juge.policy.identity import check_policy, policy_identities
from juge.policy.results import PolicyResult, PolicyStatusReport


def policy_standing(
    policy: PolicyResult,
    *,
    store: Any | None = None,
    run: str | None = None,
    eval_file: str | Path | None = None,
    source: str = "policy",
) -> PolicyStatusReport:
    """The status of ``policy``: its holdout status, and expired when the judge in ``eval_file`` or in a stored
    run (``run`` in ``store``, else the newest run there with calls of the policy's judge) is not the one it
    was derived with."""
    standing = policy.standing
    checks: list[IdentityCheck] = []
    evidence: list[str] = []
    notes: list[str] = []
    if eval_file is not None:
        checks += _judge_file_checks(policy, eval_file)
        evidence.append(f"judge file(s) in {eval_file}")
    if store is not None:
        found = _run_checks(policy, store, run)
        if found is not None:
            run_row, run_checks = found
            checks += run_checks
            evidence.append(f"answers in run {run_row['id'][:12]} ({run_row.get('started_at') or 'no date'})")
        elif run is None:
            notes.append("no stored run has calls of the policy's judge: its answered model version is unchecked")
    expired = None if not evidence else any(not c.ok for c in checks)
    why = [f"judge {c.key}: {c.words()}" for c in checks if not c.ok]
    status = "expired" if expired else standing.status
    # The draws are in the policy file; their outcome needs the people's labels (juge audit status reads them).
    audits = [
        {"week": a.week, "drawn_at": a.drawn_at, "run_id": a.run_id, "n_items": len(a.items),
         "label_project": a.label_project}
        for a in policy.audits
    ]  # fmt: skip
    return PolicyStatusReport.model_validate(
        {
            "policy": source,
            "policy_hash": policy.policy_hash,
            "judge_kind": policy.judge_kind,
            "judge": policy.judge,
            "created_at": policy.created_at,
            "juge_version": policy.juge_version,
            "dev": policy.dev.to_dict(),
            "status": status,
            "test_id": standing.test_id,
            "tested_at": standing.tested_at,
            "test_split": standing.split,
            "test_items": standing.n_items,
            "test_forced": standing.test_forced,
            "held": None if standing.test_id is None else standing.status in ("held",),
            "test_conclusion": standing.conclusion,
            "forced_uses": standing.forced_uses,
            "identity": {k: v.to_dict() for k, v in policy_identities(policy).items()},
            "checked_against": evidence,
            "expired": expired,
            "why_expired": why,
            "identity_checks": [c.to_dict() for c in checks],
            "audit_every": policy.audit.every,
            "audit_n": policy.audit.n,
            "audits": audits,
            "next": next_steps(status, expired, source, audited=bool(audits)),
            "notes": notes,
        }
    )


def _judge_file_checks(policy: PolicyResult, eval_file: str | Path) -> list[IdentityCheck]:
    """The eval file's judges of the policy's keys, as they would be called, checked (no call is made)."""
    from juge.config import load_eval
    from juge.runs.providers import judge_specs

    config = load_eval(eval_file)
    found = {
        f"{j.name}/{j.template_id}": identity_of_judge(j, provider=spec.name if spec is not None else None)
        for j, spec in zip(config.judges, judge_specs(config))
    }
    missing = sorted(set(policy_identities(policy)) - set(found))
    if missing:
        raise InputError(
            f"{eval_file}: no judge {', '.join(missing)}, which the policy uses (its judges here: "
            f"{', '.join(found) or 'none'})"
        )
    return check_policy(policy, found, require=("model", "template_hash"))


def _run_checks(policy: PolicyResult, store: Any, run: str | None) -> tuple[dict[str, Any], list[IdentityCheck]] | None:
    """The given run's calls, or the newest run's with calls of the policy's judge, checked."""
    keys = set(policy_identities(policy))
    if run is not None:
        rows = [store.get_run(run)]
    else:
        rows = [r for r in store.list_runs() if keys & _run_keys(r)]
    for row in rows:
        found = identities_of_calls(j for j in store.judgments(row["id"]) if f"{j.judge}/{j.template}" in keys)
        if found:
            return row, check_policy(policy, found)
    if run is not None:
        raise InputError(f"run {rows[0]['id']} has no calls of the policy's judge ({', '.join(sorted(keys))})")
    return None


def _run_keys(row: dict[str, Any]) -> set[str]:
    judges = (row.get("config") or {}).get("judges") or []
    return {f"{j.get('name')}/{j.get('template')}" for j in judges if isinstance(j, dict)}


def next_steps(status: str, expired: bool | None, source: str, *, audited: bool = False) -> list[str]:
    """What to run next, by the policy's status."""
    p = source if source != "policy" else "POLICY"
    if expired:
        return [
            "measure how far the judge moved on a human-labelled anchor set: juge drift --anchor ITEMS --labels "
            "LABELS --judge OLD.toml --judge NEW.toml (or --run OLD_RUN --judge NEW.toml)",
            "derive a new policy for the new judge on fresh dev data (juge run, then juge policy derive --run RUN), "
            "and test it once (juge policy test)",
        ]
    if status in ("not held", "forced"):
        return [f"derive a new policy on fresh dev data: the last holdout test of {p} did not hold"]
    steps = []
    if status == "untested":
        steps.append(f"test the policy once on its holdout split: juge policy test --policy {p} ...")
    if expired is None:
        steps.append(
            f"check that its judge has not changed: juge policy status {p} --eval EVAL_FILE (the judge you route "
            "with) or --run RUN (a recent run of it)"
        )
    steps.append(f"audit it every week: juge audit-sample --policy {p} --run RUN --label-project NAME")
    if audited:
        steps.append(f"read the audits against the people's labels: juge audit status {p}")
    return steps
