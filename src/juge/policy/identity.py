"""A policy's judge identity, checked by :mod:`juge.judges.identity` before a command trusts the policy.

``route`` (recorded and live), ``audit-sample`` and ``policy status`` read the identity the policy was derived
with from its ``judges`` and compare it with what the calls (or the judge file) show. A changed judge expires the
policy: refused (exit 2) unless ``--force``; forced, the command routes with the identity it found accepted
(:func:`accept_identity`) and records FORCED in its result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from juge.data.records import Judgment
from juge.judges.identity import (
    IdentityCheck,
    IdentityField,
    IdentityUse,
    JudgeIdentity,
    check_identity,
    identities_of_calls,
    identity_of_version,
    identity_use,
)
from juge.policy.results import PolicyResult


def policy_identities(policy: PolicyResult) -> dict[str, JudgeIdentity]:
    """The identity of each judge key the policy uses, as derived (baselines left out: no model to change)."""
    return {key: identity_of_version(info.to_dict()) for key, info in policy.judges.items() if not info.baseline}


def check_policy(
    policy: PolicyResult, found: Mapping[str, JudgeIdentity], *, require: Sequence[IdentityField] = ("model",)
) -> list[IdentityCheck]:
    """Each of the policy's judges found in ``found`` compared with the identity it was derived with."""
    expected = policy_identities(policy)
    return [check_identity(expected[k], found[k], key=k, require=require) for k in expected if k in found]


def check_policy_calls(
    policy: PolicyResult, calls: Iterable[Judgment], *, force: bool, command: str, source: str = "policy"
) -> IdentityUse:
    """The identity the policy's judges show in recorded ``calls``, checked: refused (exit 2) when a model
    version or template hash differs, unless ``force`` (then FORCED)."""
    return identity_use(check_policy(policy, identities_of_calls(calls)), force=force, source=source, command=command)


def accept_identity(policy: PolicyResult, use: IdentityUse) -> PolicyResult:
    """The policy, with the identity a forced use found accepted (in memory only, never written): routing
    then reads the calls of the changed judge as its own."""
    if not use.forced:
        return policy
    judges = dict(policy.judges)
    for check in use.checks:
        if check.ok or check.key not in judges:
            continue
        info = judges[check.key]
        judges[check.key] = info.model_copy(
            update={
                "models": sorted({*info.models, *check.found.models}),
                "template_hashes": sorted({*info.template_hashes, *check.found.template_hashes}),
            }
        )
    return policy.model_copy(update={"judges": judges})


def merge_use(forced: bool, warning: str | None, use: IdentityUse | None) -> tuple[bool, str | None]:
    """A result's ``forced`` and ``warning`` with an identity use's added (both FORCED lines kept)."""
    if use is None or not use.forced:
        return forced, warning
    return True, "\n".join(w for w in (warning, use.warning) if w)


def with_run_identity(policy: dict[str, Any], run: str, db: str | Path | None) -> dict[str, Any]:
    """A policy derived from a stored run, with what the run's config records of each judge beyond its calls
    (provider, rubric hash, parser version: ``juge.runs.execute.judges_config``), and its hash again."""
    from juge.policy.file import policy_hash
    from juge.store import open_store

    with open_store(db, must_exist=True) as store:
        configured = (store.get_run(run).get("config") or {}).get("judges") or []
    for info in (policy.get("judges") or {}).values():
        same = [
            j for j in configured
            if isinstance(j, dict) and j.get("name") == info.get("judge") and j.get("template") == info.get("template")
        ]  # fmt: skip
        providers = sorted({j["provider"] for j in same if j.get("provider")})
        if len(providers) == 1:
            info["provider"] = providers[0]
        for key, field in (("rubric_hashes", "rubric_hash"), ("parser_versions", "parser_version")):
            values = sorted({str(j[field]) for j in same if j.get(field)})
            if values:
                info[key] = values
    policy["policy_hash"] = policy_hash(policy)
    return policy
