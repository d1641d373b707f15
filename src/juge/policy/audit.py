"""The weekly audit (rule 5): a seeded sample of the decisions a policy's judge made alone in a stored run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from juge.data.records import Judgment
from juge.errors import InputError
from juge.policy.inputs import load_policy
from juge.policy.results import AuditSample, PolicyResult
from juge.policy.route import audit_sample, weekly_seed
from juge.store import open_store


def require_policy_judges(policy: PolicyResult, run_id: str, calls: Sequence[Judgment]) -> None:
    """Refuse a run in which no call comes from a judge and template the policy uses."""
    wanted = sorted(set(policy.templates_by_category.values()))
    present = sorted({f"{j.judge}/{j.template}" for j in calls})
    if not set(wanted) & set(present):
        raise InputError(
            f"run {run_id} has no judgment from the policy's judge {policy.judge} "
            f"(templates {', '.join(wanted)}); the run's judges are {', '.join(present) or 'none'}. "
            "Audit a run of the policy's judge."
        )


def audit_run(
    policy: PolicyResult | Mapping[str, Any] | str | Path,
    run: str,
    *,
    db: str | Path | None = None,
    n: int = 10,
    seed: int | None = None,
    force: bool = False,
    source: str = "policy",
) -> AuditSample:
    """Draw ``n`` random decisions the policy's judge made alone in stored run ``run`` (``juge audit-sample``),
    each with the item and the judge's raw text. ``seed`` defaults to the ISO year and week (a new sample
    each week). A run whose judge is not the one the policy was derived with (model version, template hash) is
    refused unless ``force`` (then FORCED, in ``identity``)."""
    from juge.policy.identity import accept_identity, check_policy_calls, merge_use

    if n < 1:
        raise InputError(f"-n {n}: draw at least one decision")
    document = load_policy(policy)
    seed = weekly_seed() if seed is None else seed
    with open_store(db, must_exist=True) as store:
        run_row = store.get_run(run)
        cases = store.run_cases(run_row["id"])
        calls = store.judgments(run_row["id"])
    require_policy_judges(document, run_row["id"], calls)
    use = check_policy_calls(document, calls, force=force, command="juge audit-sample", source=source)
    sample = audit_sample(accept_identity(document, use), cases, calls, n=n, seed=seed)
    forced, warning = merge_use(False, None, use)
    return AuditSample.model_validate(
        {
            "run_id": run_row["id"],
            "seed": seed,
            "policy_hash": document.policy_hash,
            "identity": use.to_dict(),
            "forced": forced,
            "warning": warning,
            "sample": sample,
        }
    )
