"""Route new items live: call the policy's judge through the engine, then apply the policy.

`juge route --policy policy.json --eval eval.toml --items new.jsonl` runs only the eval file's judges the
policy names (``judge/template``; a panel ``NAME/AGGREGATE`` of the eval file's ``[[panels]]`` runs its
members), on the new items instead of the eval's cases, with no checks and no system under test: the engine's
cache, retries and store, both orders for pairs, a resumable run. Before any call, each judge's model and
template hash must be ones the policy was derived with (else InputError, exit 2): a policy says nothing about
another judge version. The stored judgments are then routed by :func:`juge.policy.route.route_cases`,
item-level reasons first.

The one module of ``policy/`` that calls a model (through the run path of :mod:`juge.runs`); the rest reads
stored judgments.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from juge.config import EvalConfig, GateSpec, ProviderSpec
from juge.data.records import Case
from juge.errors import InputError
from juge.judges.identity import IdentityUse, check_identity, identity_of_judge, identity_use
from juge.judges.panel import Panel
from juge.policy.identity import accept_identity, check_policy_calls, policy_identities
from juge.policy.results import PolicyResult, RouteResult
from juge.policy.route import RouteDecision, route_cases
from juge.policy.routed import JUDGE
from juge.runs.execute import run_eval
from juge.runs.providers import judge_specs
from juge.store import Store, open_store


@dataclass
class LiveRouting:
    """The decisions, and what the run cost in calls."""

    run_id: str
    decisions: list[RouteDecision]
    calls: int
    cache_hits: int
    retries: int
    identity: IdentityUse
    runs: list[str] | None = None  # a cascade: one run per stage called, in order


def policy_judges(
    policy: PolicyResult, config: EvalConfig, *, force: bool = False, override: ProviderSpec | None = None
) -> tuple[list[int], list[str], IdentityUse]:
    """Indexes of the eval's judges the policy uses (a panel's: its members), the names of the panels it uses,
    and their identity checked against the policy's (model, template hash, and rubric and parser when the policy
    records them; a panel: its version, from its members' templates). A missing judge is refused; a changed
    identity too (naming the judge file's field), unless ``force`` (then FORCED)."""
    by_key = {f"{j.name}/{j.template_id}": i for i, j in enumerate(config.judges)}
    panels = {p.key: (i, p) for i, p in enumerate(config.panels)}
    specs = judge_specs(config, override)
    expected = policy_identities(policy)
    chosen: list[int] = []
    chosen_panels: list[str] = []
    checks = []
    for key, info in policy.judges.items():
        if key in panels:
            chosen_panels.append(panels[key][1].name)
            chosen += _panel_members(config, *panels[key], policy_hashes=info.template_hashes, force=force)
            continue
        if key not in by_key:
            raise InputError(
                f"{config.source}: no judge {info.judge or key!r} with template {info.template!r}, which "
                f"the policy uses (its judges here: {', '.join(by_key) or 'none'}); add it to the eval file"
            )
        i = by_key[key]
        chosen.append(i)
        if key not in expected:
            continue
        judge = config.judges[i]
        spec = specs[i]
        provider = spec.name if spec is not None else None
        check = check_identity(
            expected[key], identity_of_judge(judge, provider=provider), key=key, require=("model", "template_hash")
        )
        checks.append(check)
        if check.ok or force:
            continue
        fields = {m.field for m in check.mismatches}
        if "model" in fields:
            raise config.judge_error(
                i,
                f"judge {judge.name} runs model {judge.model!r}, but the policy was derived with "
                f"{', '.join(expected[key].models)}; the policy has EXPIRED: derive a new policy for this model "
                "(or --force, recorded)",
                "model",
            )
        hashes = expected[key].template_hashes
        why = (
            f"not the one the policy was derived with ({', '.join(h[:12] for h in hashes)})"
            if hashes
            else "and the policy records no template hash (it was derived from judgments that carry none), "
            "so the prompt cannot be shown to be the same"
        )
        raise config.judge_error(
            i,
            f"judge {judge.name}: template {judge.template_id} has hash {judge.template_hash} {why} ({check.words()}); "
            "the policy has EXPIRED: derive a policy from a run of this judge (juge run, then juge policy derive "
            "--run RUN_ID), or --force (recorded)",
            "template",
        )
    use = identity_use(checks, force=force, source=config.source, command="juge route --eval")
    return sorted(set(chosen)), chosen_panels, use


def _panel_members(config: EvalConfig, i: int, panel: Panel, *, policy_hashes: Sequence[str], force: bool) -> list[int]:
    """The indexes of a panel's members, once its version (aggregation, members, their templates) is shown to be
    the one the policy measured (else refused unless ``force``; the models its members answer as are checked on
    the stored calls)."""
    from juge.judges.panel import panel_hash

    members = [next(k for k, j in enumerate(config.judges) if j.name == m) for m in panel.members]
    keys = [f"{config.judges[k].name}/{config.judges[k].template_id}" for k in members]
    version = panel_hash(panel, keys, (config.judges[k].template_hash for k in members))
    if policy_hashes and version not in policy_hashes and not force:
        raise config.error(
            f"panel {panel.name}: its members or their templates are not those the policy was derived with (its "
            f"version {version[:12]}, the policy's {', '.join(h[:12] for h in policy_hashes)}); the policy has "
            "EXPIRED: derive a policy from a run of this panel, or --force (recorded)",
            f"panels[{i}].members",
        )
    return members


def routing_config(
    config: EvalConfig,
    judges: Sequence[int],
    items: Path,
    *,
    mapping: dict[str, str] | None = None,
    panels: Sequence[str] = (),
) -> EvalConfig:
    """The eval file with only the policy's judges (and ``panels``, with their members), no checks, no system,
    no gate, and the new items as its cases (read with the eval's column mapping, or ``mapping`` when given)."""
    routed = copy.copy(config)
    update: dict[str, Any] = {
        "checks": [],
        "system": None,
        "gate": GateSpec(),
        "sample": None,
        "cases": str(items.resolve()),
    }
    if mapping is not None:
        update["mapping"] = mapping
    routed.spec = config.spec.model_copy(update=update)
    routed.checks = []
    routed.judges = [config.judges[i] for i in judges]
    routed.judge_files = [config.judge_files[i] for i in judges]
    routed.panels = [p for p in config.panels if p.name in panels]
    routed.run_kind = "route"
    return routed


def route_live(
    policy: PolicyResult,
    config: EvalConfig,
    store: Store,
    *,
    items: Path | None = None,
    cases: Sequence[Case] | None = None,
    concurrency: int | None = None,
    progress: bool = False,
    provider_override: ProviderSpec | None = None,
    mapping: dict[str, str] | None = None,
    force: bool = False,
) -> LiveRouting:
    """Judge ``items`` (a cases file, read with ``mapping`` when given, else the eval file's) or ``cases`` with
    the policy's judge and route each one (through ``provider_override`` when given, else the eval file's
    provider)."""
    if (items is None) == (cases is None):
        raise InputError("give the new items as a file (--items) or one item (--item), not both")
    if items is not None and not items.is_file():
        raise InputError(f"--items {items}: {'is a folder' if items.is_dir() else 'file not found'}")
    judges, panels, use = policy_judges(policy, config, force=force, override=provider_override)
    if items is not None:
        routed = routing_config(config, judges, items, mapping=mapping, panels=panels)
        return _route(policy, routed, store, concurrency, progress, provider_override, use, force)
    # A run reads its cases from a file: the given ones go to a scratch file in juge's own layout
    # (the same content gives the same file, so a second run is the same run, answered from the cache).
    with tempfile.TemporaryDirectory(prefix="juge-route-") as scratch:
        path = Path(scratch) / "items.jsonl"
        path.write_text("".join(c.model_dump_json(exclude_defaults=True) + "\n" for c in cases or ()), "utf-8")
        routed = routing_config(config, judges, path, mapping={}, panels=panels)
        return _route(policy, routed, store, concurrency, progress, provider_override, use, force)


def route_new_items(
    policy: PolicyResult,
    eval_file: str | Path,
    *,
    item: Path | None = None,
    items: Path | None = None,
    db: str | Path | None = None,
    concurrency: int | None = None,
    provider: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    model: str | None = None,
    progress: bool = False,
    mapping: dict[str, str] | None = None,
    force: bool = False,
) -> RouteResult:
    """Call the policy's judge (from ``eval_file``) on new ``items`` (a cases file; ``mapping`` reads its columns,
    else the eval file's mapping does) or one ``item`` (JSON), store the run in ``db``, and route each item.
    ``provider``, ``base_url``, ``api_key_env`` and ``model`` override
    the eval file's (as on ``juge run``); another model or template than the policy's is refused before any
    call, and a model that answers as another version than the policy's after the calls (stored, as every call),
    unless ``force`` (then FORCED, in ``identity``)."""
    from juge.config import load_eval, provider_override, with_model
    from juge.policy.route import read_route_item

    if (item is None) == (items is None):
        raise InputError("with --eval, give the new items as --items FILE or one --item FILE")
    override = provider_override(provider, base_url, api_key_env)  # bad options fail before any file is read
    config = load_eval(eval_file)
    config.judges = with_model(config.judges, model)
    cases, notes = None, []
    if item is not None:
        case, recorded = read_route_item(Path(item))
        if recorded:
            notes.append(f"{item}: its {len(recorded)} recorded judge calls are not used; the judge is called")
        cases = [case]
    with open_store(db) as store:
        routed = route_live(
            policy,
            config,
            store,
            items=None if items is None else Path(items),
            cases=cases,
            concurrency=concurrency,
            progress=progress,
            provider_override=override,
            mapping=mapping,
            force=force,
        )
    return RouteResult.model_validate(
        {
            "policy_hash": policy.policy_hash,
            "run_id": routed.run_id,
            "calls": routed.calls,
            "cache_hits": routed.cache_hits,
            "retries": routed.retries,
            **({"runs": routed.runs} if routed.runs is not None else {}),
            "decisions": [d.to_dict() for d in routed.decisions],
            "notes": notes,
            "identity": routed.identity.to_dict(),
            "forced": routed.identity.forced,
            "warning": routed.identity.warning,
        }
    )


def _route(
    policy: PolicyResult,
    routed: EvalConfig,
    store: Store,
    concurrency: int | None,
    progress: bool,
    provider_override: ProviderSpec | None,
    checked: IdentityUse,
    force: bool,
) -> LiveRouting:
    if policy.cascade is not None:
        return _route_cascade(policy, routed, store, concurrency, progress, provider_override, checked, force)
    batch = routed.spec.engine.mode == "batch"  # a decision needs the verdict: wait for a batch's answers
    # A confidence read over N repeats on dev needs N here too (rule guarantee); otherwise one call per order.
    g = policy.guarantee if policy.rule == "guarantee" else None
    result = run_eval(
        routed, store, concurrency=concurrency, progress=progress, wait=batch, provider_override=provider_override,
        repeat=(g.repeats if g else None) or 1,
    )  # fmt: skip
    run_cases = store.run_cases(result.run_id)
    calls = store.judgments(result.run_id)
    # The model as answered is known only now: a provider may answer a request with another version.
    answered = check_policy_calls(
        policy, calls, force=force, command="juge route --eval", source=f"run {result.run_id[:12]}"
    )
    use = _joined(checked, answered)
    decisions = route_cases(accept_identity(policy, use), run_cases, calls)
    stats = result.engine_stats
    return LiveRouting(
        result.run_id, decisions, stats.get("calls", 0), stats.get("cache_hits", 0), stats.get("retries", 0), use
    )


def _route_cascade(
    policy: PolicyResult,
    routed: EvalConfig,
    store: Store,
    concurrency: int | None,
    progress: bool,
    provider_override: ProviderSpec | None,
    checked: IdentityUse,
    force: bool,
) -> LiveRouting:
    """Stage by stage: call the stage's judge on the items that reach it and that it may decide
    (:func:`juge.policy.configurations.stage_may_decide`), one stored run per stage called; the items it decides leave.
    Every call is stored and cached, so a rerun costs nothing."""
    from juge.policy.configurations import stage_may_decide
    from juge.runs.plan import load_run_cases

    assert policy.cascade is not None
    cases = list(load_run_cases(routed)[0])
    pending = {c.id: c for c in cases}
    by_key = {f"{j.name}/{j.template_id}": i for i, j in enumerate(routed.judges)}

    def members_of(panels: Sequence[Panel]) -> set[int]:
        return {i for p in panels for i, j in enumerate(routed.judges) if j.name in p.members}

    batch = routed.spec.engine.mode == "batch"
    calls: list[Any] = []
    run_ids: list[str] = []
    totals = {"calls": 0, "cache_hits": 0, "retries": 0}
    use = checked
    for stage in policy.cascade.stages:
        ask = [c for c in pending.values() if stage_may_decide(stage, c.category or "(none)")]
        if not ask:
            continue
        keys = sorted({stage.templates_by_category[c.category or "(none)"] for c in ask})
        staged = copy.copy(routed)
        staged.panels = [p for p in routed.panels if p.key in keys]  # a panel stage calls its members
        called = sorted({*(by_key[k] for k in keys if k in by_key), *members_of(staged.panels)})
        staged.judges = [routed.judges[i] for i in called]
        staged.judge_files = [routed.judge_files[i] for i in called]
        result = run_eval(
            staged, store, only={c.id for c in ask}, concurrency=concurrency, progress=progress, wait=batch,
            provider_override=provider_override, repeat=(stage.guarantee.repeats if stage.guarantee else None) or 1,
        )  # fmt: skip
        run_ids.append(result.run_id)
        stage_calls = store.judgments(result.run_id)
        answered = check_policy_calls(
            policy, stage_calls, force=force, command="juge route --eval", source=f"run {result.run_id[:12]}"
        )
        use = _joined(use, answered)
        calls += stage_calls
        for key in totals:
            totals[key] += result.engine_stats.get(key, 0)
        for d in route_cases(accept_identity(policy, use), ask, calls):
            if d.route == JUDGE:
                del pending[d.item_id]
    decisions = route_cases(accept_identity(policy, use), cases, calls)
    return LiveRouting(
        run_ids[0] if run_ids else "", decisions, totals["calls"], totals["cache_hits"], totals["retries"], use,
        run_ids,
    )  # fmt: skip


def _joined(before: IdentityUse, after: IdentityUse) -> IdentityUse:
    """The checks before the calls (the judge file) and after (the answers), as one record."""
    warnings = [w for w in (before.warning, after.warning) if w]
    return IdentityUse(
        expired=before.expired or after.expired,
        forced=before.forced or after.forced,
        warning="\n".join(warnings) or None,
        checks=[*before.checks, *after.checks],
    )
