"""`juge tune`: evaluate candidate judges on dev through the engine, choose one like a policy
would, and report the in-sample, out-of-fold and (once) holdout figures.

Every call goes through :class:`juge.engine.Engine` in one stored run (cache, retries, call log,
resume after an interrupt). A candidate that learns from labels (few-shot) is a separate judge per
fold, shown only examples from the other folds, and judges only its fold's items.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from juge import __version__
from juge.calibration.better import MEASURE_WORDS
from juge.calibration.pairwise import label_pairs
from juge.data.records import Case, Judgment
from juge.errors import Fault, InputError
from juge.judges.judge import Judge
from juge.judges.pairwise import as_agreement_label, combine_orders
from juge.providers.base import Provider
from juge.stats.estimate import format_estimate
from juge.tune.models import CandidateResult, Caught, ReferenceRow, TuneResult
from juge.tune.selection import (
    MISSING,
    Ranked,
    Table,
    cheapest_within_noise_rule,
    estimates,
    group_folds,
    out_of_fold_estimate,
    rank,
)
from juge.tune.variants import LabelledItem, Variant, base_spec, build, constant, from_files, generate
from juge.tune.variants import base_spec as read_base_spec


@dataclass
class Plan:
    """The judges to call and the items each judges: (candidate, fold or None) -> judge."""

    judges: dict[tuple[str, int | None], Judge] = field(default_factory=dict)
    items: dict[tuple[str, int | None], list[Case]] = field(default_factory=dict)


def comparable(setup: str, value: Any, threshold: float | None) -> Any:
    """A label or verdict in the form agreement compares: A/B/tie, PASS/FAIL, a number, or (scores
    with a threshold) PASS/FAIL at the threshold."""
    if value is None:
        return None
    if setup == "pairwise":
        return as_agreement_label(value) if value in ("A", "B", "tie", "inconsistent") else None
    if setup == "passfail":
        text = str(value).strip().upper()
        return text if text in ("PASS", "FAIL") else None
    number = float(value)
    return ("PASS" if number >= threshold else "FAIL") if threshold is not None else number


def table_kind(setup: str) -> str:
    """How a judge of `setup` is ranked: pairwise, or PASS/FAIL (a score judge at its threshold)."""
    return "pairwise" if setup == "pairwise" else "passfail"


def label_order(setup: str) -> list[str]:
    return ["A", "B", "tie"] if setup == "pairwise" else ["PASS", "FAIL"]


def human_votes(items: Sequence[LabelledItem], setup: str, threshold: float | None) -> list[list[str]]:
    """Each item's human labels in the form agreement compares (see :func:`comparable`)."""
    votes = [[comparable(setup, lab, threshold) for lab in it.labels] for it in items]
    return [[v for v in vs if v is not None] for vs in votes]


def figure_fields(figures: Mapping[str, Any]) -> dict[str, Any]:
    """A candidate's or reference row's figures as the result's fields."""
    out: dict[str, Any] = {"agreement": figures["agreement"].to_dict(), "kappa": figures["kappa"].to_dict()}
    for name in ("failures_caught", "false_flags"):
        if name in figures:
            k, n, rate = figures[name]
            out[name] = Caught(k=k, n=n, rate=rate.to_dict())
    return out


def ceiling_row(
    items: Sequence[LabelledItem], votes: Sequence[Sequence[str]], groups: Sequence[str], kind: str,
    labels: list[str], *, n_resamples: int, seed: int,
) -> ReferenceRow | None:  # fmt: skip
    """Person vs person on the same items, measured as judge vs person is: agreement and kappa over every
    pair of distinct raters (as calibrate's ceiling), failures caught and false flags over ordered pairs."""
    order = [*labels, MISSING]
    unique = sorted(set(groups))
    k = len(order)
    pairs, ordered = np.zeros((len(unique), k, k)), np.zeros((len(unique), k, k))
    for labs, g in zip(votes, groups):
        for a, b in label_pairs([(str(n), lab) for n, lab in enumerate(labs)]):
            pairs[unique.index(g), order.index(a), order.index(b)] += 1
            ordered[unique.index(g), order.index(a), order.index(b)] += 1
            ordered[unique.index(g), order.index(b), order.index(a)] += 1
    if not pairs.sum():
        return None
    figures = estimates(pairs, "pairwise", order, n_resamples=n_resamples, seed=seed)
    if kind == "passfail":
        caught = estimates(ordered, kind, order, n_resamples=n_resamples, seed=seed)
        figures |= {name: caught[name] for name in ("failures_caught", "false_flags")}
    return ReferenceRow(name="person vs person", what="one person's label against another's, on the same items",
                        **figure_fields(figures))  # fmt: skip


def baseline_row(
    items: Sequence[LabelledItem], votes: Sequence[Sequence[str]], groups: Sequence[str], setup: str,
    labels: list[str], *, n_resamples: int, seed: int,
) -> ReferenceRow:  # fmt: skip
    """The trivial judge beside the candidates: always PASS, or for pairs the longer answer."""
    if setup == "pairwise":
        name, what = "longer answer", "picks the longer answer; a tie when both are as long"
        said: list[str | None] = [_longer(it.case) for it in items]
    else:
        name, what = "always PASS", "says PASS to every case"
        said = ["PASS"] * len(items)
    kind = table_kind(setup)
    table = Table.from_items(kind, labels, [name], {name: said}, votes, groups, dict.fromkeys(groups, 0), {name: 0.0})
    figures = estimates(table.counts[0], kind, table.labels, n_resamples=n_resamples, seed=seed)
    return ReferenceRow(name=name, what=what, **figure_fields(figures))


def _longer(case: Case) -> str:
    one, two = len(case.output_1 or ""), len(case.output_2 or "")
    return "A" if one > two else "B" if two > one else "tie"


def verdicts_of(judgments: Sequence[Judgment], setup: str) -> dict[str, Any]:
    """The verdict per item of one judge (pairwise: both orders combined, else None)."""
    if setup != "pairwise":
        return {j.item_id: j.verdict for j in judgments if j.outcome == "ok"}
    orders: dict[str, dict[str, Any]] = defaultdict(dict)
    for j in judgments:
        orders[j.item_id][j.order or ""] = j.verdict if j.outcome == "ok" else None
    return {item: combine_orders(o.get("12"), o.get("21")) for item, o in orders.items()}


def tune_judge(
    judge_path: Path,
    *,
    dev: Sequence[LabelledItem],
    provider: Provider,
    store: Any,
    variants_dir: Path | None = None,
    folds: int = 5,
    threshold: float | None = None,
    budget: float | None = None,
    shots: Sequence[int] = (2, 4, 8),
    model: str | None = None,
    only: Sequence[str] = (),
    propose_n: int = 0,
    seed: int = 0,
    n_resamples: int = 2000,
    concurrency: int = 8,
    progress: bool = False,
) -> tuple[TuneResult, dict[str, Any]]:
    """Run every candidate on the dev items, rank them and choose. Returns the result and the
    chosen judge's TOML table (its examples, if any, drawn from all of dev)."""
    spec, base = read_base_spec(judge_path)
    if model is not None:
        spec["model"] = model
        base = build(spec, base.name, judge_path.parent, str(judge_path))
    if base.setup not in ("passfail", "score", "pairwise"):
        raise InputError(f"{judge_path}: juge tune tunes passfail, score and pairwise judges, not {base.setup}")
    if base.setup == "score" and threshold is None:
        raise InputError(
            "--threshold: a score judge is tuned on PASS/FAIL at a threshold (a person's and the judge's "
            "score >= threshold is a PASS); give the threshold on the judge's scale"
        )
    groups = [it.case.group or it.case.id for it in dev]
    try:
        fold_of = group_folds(groups, folds, seed)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    fold = np.array([fold_of[g] for g in groups])
    has_reference = all(it.case.reference for it in dev)
    candidates = generate(spec, base, has_reference=has_reference, threshold=threshold, shots=shots, seed=seed)
    for name, path in from_files(variants_dir) if variants_dir is not None else []:
        file_spec, _ = base_spec(path)
        candidates.append(Variant(name, f"judge file {path}", False, constant(file_spec)))
    if only:
        known = [v.name for v in candidates]
        unknown = [n for n in only if n not in known and not n.startswith("proposal-")]
        if unknown:
            raise InputError(f"--candidates: no candidate named {unknown[0]!r} (candidates: {', '.join(known)})")
        candidates = [v for v in candidates if v.name in only]
    base_dir = judge_path.parent
    plan = Plan()
    skipped: dict[str, str] = {}
    add_to_plan(plan, candidates, dev, fold, folds, base, base_dir, skipped)

    async def propose(engine: Any, run_id: str) -> list[Variant]:
        """Rubric proposals from the judge-as-given's disagreements, each a candidate of its own."""
        from juge.tune.propose import proposal_variants, propose_all

        mine = [j for j in store.judgments(run_id) if j.judge == f"{base.name}.as-given"]
        verdicts = verdicts_of(mine, base.setup)
        training = [[it for it, f in zip(dev, fold) if f != k] for k in range(folds)] + [list(dev)]
        proposals, failures = await propose_all(
            engine,
            provider,
            run_id,
            base,
            propose_n,
            training,
            verdicts,
            lambda v: comparable(base.setup, v, threshold),
        )
        extra = proposal_variants(propose_n, spec, proposals, failures)
        add_to_plan(plan, extra, dev, fold, folds, base, base_dir, skipped)
        candidates.extend(extra)
        return extra

    run_id, judgments = _judge_all(
        plan, candidates, provider, store, budget, concurrency, progress, skipped, propose if propose_n else None
    )
    by_judge: dict[str, list[Judgment]] = defaultdict(list)
    for j in judgments:
        by_judge[j.judge].append(j)
    for v in candidates:
        mine = [j for key, judge in plan.judges.items() if key[0] == v.name for j in by_judge.get(judge.name, [])]
        if v.name not in skipped and not any(j.outcome == "ok" for j in mine):
            first = next((j.reason or j.text for j in mine if j.outcome != "ok"), None) or "no call was made"
            skipped[v.name] = f"not measured: no call gave a verdict (first: {first})"
    ran = [v for v in candidates if v.name not in skipped]
    if not ran:
        raise Fault(
            "nothing could be measured: no candidate got a verdict. "
            + "; ".join(f"{k}: {m}" for k, m in skipped.items())
        )
    kind, labels = table_kind(base.setup), label_order(base.setup)
    votes = human_votes(dev, base.setup, threshold)
    verdicts: dict[str, list[str | None]] = {}
    costs: dict[str, float] = {}
    usage: dict[str, dict[str, Any]] = {}
    for v in ran:
        verdict: dict[str, Any] = {}
        js: list[Judgment] = []
        for (name, _), judge in plan.judges.items():
            if name == v.name:
                js += by_judge.get(judge.name, [])
                verdict |= verdicts_of(by_judge.get(judge.name, []), base.setup)
        mapped = {
            item: comparable(base.setup, v.verdict_map(x) if (v.verdict_map and x is not None) else x, threshold)
            for item, x in verdict.items()
        }
        verdicts[v.name] = [mapped.get(it.case.id) for it in dev]
        usage[v.name] = _usage(js, len(dev))
        costs[v.name] = usage[v.name]["cost_per_item"]
    names = [v.name for v in ran]
    table = Table.from_items(kind, labels, names, verdicts, votes, groups, fold_of, costs)
    rows, best, chosen = rank(table, n_resamples=n_resamples, seed=seed)
    rule = cheapest_within_noise_rule(n_resamples=max(100, n_resamples // 10), seed=seed)
    oof, per_fold = out_of_fold_estimate(table, rule, n_resamples=max(100, n_resamples // 5), seed=seed)
    in_sample = rows[chosen].value
    chosen_variant = ran[chosen]
    final_spec = chosen_variant.make(dev) | {"name": base.name}
    provenance = {
        "parent": str(judge_path),
        "parent_template_hash": base.template_hash,
        "variant": chosen_variant.name,
        "examples": chosen_variant.example_ids(dev) if chosen_variant.example_ids else [],
        "tuned_by": f"juge {__version__}",
        "run_id": run_id,
    }
    final = build(final_spec, base.name, base_dir, "tuned judge")
    result = TuneResult(
        judge=base.name,
        setup=base.setup,
        metric=MEASURE_WORDS[table.measure]
        + (f" at threshold {threshold:g}" if threshold is not None else "")
        + (", failures caught and false flags beside it" if kind == "passfail" else ""),
        measure=table.measure,
        n_items=len(dev),
        n_groups=len(set(groups)),
        folds=folds,
        seed=seed,
        run_id=run_id,
        candidates=[
            CandidateResult(
                name=r.name,
                what=next(v.what for v in ran if v.name == r.name),
                **figure_fields(r.figures),
                catches_enough=r.enough if kind == "passfail" else None,
                difference_to_best=r.difference_to_best.to_dict() if r.difference_to_best else None,
                within_noise=r.within_noise,
                decision=_decision(i, best, chosen, r.within_noise, r.tier >= rows[best].tier),
                **usage[r.name],
            )
            for i, r in enumerate(rows)
        ],
        skipped=skipped,
        ceiling=ceiling_row(dev, votes, groups, kind, labels, n_resamples=n_resamples, seed=seed),
        baselines=[baseline_row(dev, votes, groups, base.setup, labels, n_resamples=n_resamples, seed=seed)],
        failures_bar=table.bar(table.all),
        best=names[best],
        chosen=names[chosen],
        reason=_reason(rows, best, chosen, usage, table.measure),
        in_sample=in_sample.to_dict(),
        out_of_fold=oof.to_dict(),
        optimism=(in_sample.value - oof.value) if in_sample.value is not None and oof.value is not None else None,
        chosen_per_fold=[names[c] if c >= 0 else None for c in per_fold],
        tuned_template_hash=final.template_hash,
        provenance=provenance,
    )
    return result, final_spec | {"tuned": provenance}


def add_to_plan(
    plan: Plan,
    variants: Sequence[Variant],
    dev: Sequence[LabelledItem],
    fold: np.ndarray,
    folds: int,
    base: Judge,
    base_dir: Path,
    skipped: dict[str, str],
) -> None:
    """The judges of each variant: one per fold for a variant that learns from labels (shown only the
    other folds' items, judging only its fold's), else one judging every dev item."""
    for v in variants:
        try:
            if v.learns:
                for k in range(folds):
                    train = [it for it, f in zip(dev, fold) if f != k]
                    plan.judges[(v.name, k)] = build(v.make(train), f"{base.name}.{v.name}.fold{k}", base_dir, v.name)
                    plan.items[(v.name, k)] = [it.case for it, f in zip(dev, fold) if f == k]
            else:
                plan.judges[(v.name, None)] = build(v.make(dev), f"{base.name}.{v.name}", base_dir, v.name)
                plan.items[(v.name, None)] = [it.case for it in dev]
        except InputError as exc:
            skipped[v.name] = f"not evaluated: {exc}"
            for key in [key for key in plan.judges if key[0] == v.name]:
                del plan.judges[key], plan.items[key]


def _decision(i: int, best: int, chosen: int, near: bool, as_good: bool) -> str:
    if not as_good:
        return "catches fewer failures than the best, below what one person catches of another's: never chosen"
    if i == chosen:
        return "chosen"
    if i == best:
        return "best, not chosen: a cheaper candidate is within noise of it"
    return "within noise of the best, not the cheapest" if near else "worse than the best beyond noise"


def _reason(rows: Sequence[Ranked], best: int, chosen: int, usage: dict[str, dict[str, Any]], measure: str) -> str:
    c, b = rows[chosen], rows[best]
    unit = usage[c.name]["cost_unit"]
    words = MEASURE_WORDS[measure]
    if chosen == best:
        short = "" if c.enough else ("; no candidate catches as many failures as one person catches of another's")
        return f"{c.name} has the best {words}, and no cheaper candidate is within noise of it{short}"
    return (
        f"{c.name} costs {c.cost:.4g} {unit} per item against {b.cost:.4g} for the best ({b.name}), and its "
        f"difference to the best, {format_estimate(c.difference_to_best, signed=True)}, reaches 0: within noise"
    )


def _usage(js: Sequence[Judgment], n_items: int) -> dict[str, Any]:
    """What a candidate costs per item at list price (whether or not this round paid for its calls:
    a cached answer is free now, not in production), in US$ when every call's model has a price,
    else in tokens (said which)."""
    from juge.providers.pricing import call_cost, price_table

    prices = price_table()
    listed = [call_cost(j.model, j.tokens_in, j.tokens_out, prices) for j in js]
    priced = bool(js) and all(c is not None for c in listed)
    tokens = sum((j.tokens_in or 0) + (j.tokens_out or 0) for j in js)
    total = sum(c or 0.0 for c in listed) if priced else float(tokens)
    latencies = [j.latency for j in js if j.latency is not None]
    outcomes = {k: sum(1 for j in js if j.outcome == k) for k in ("ok", "refused", "unparsed", "error")}
    return {
        "calls": len(js),
        "outcomes": outcomes,
        "tokens": tokens,
        "cost_unit": "USD" if priced else "tokens",
        "cost_per_item": total / n_items if n_items else 0.0,
        "latency_mean": float(np.mean(latencies)) if latencies else None,
    }


def _judge_all(
    plan: Plan,
    candidates: list[Variant],
    provider: Provider,
    store: Any,
    budget: float | None,
    concurrency: int,
    progress: bool,
    skipped: dict[str, str],
    extend: Callable[[Any, str], Awaitable[list[Variant]]] | None = None,
) -> tuple[str, list[Judgment]]:
    """One stored run for the whole tuning round; candidates in order, each through the engine. With
    a budget, a candidate is started only while the money spent so far is below it."""
    from juge.engine import Engine, EngineOptions, build_tasks
    from juge.runs.execute import judged_run

    cases = {c.id: c for cs in plan.items.values() for c in cs}
    identity = (
        json.dumps(sorted((n, f, j.template_hash, j.model) for (n, f), j in plan.judges.items()), default=str)
        + json.dumps(sorted(cases), default=str)
        + str(getattr(provider, "cache_identity", provider.name))
    )
    eval_hash = "tune:" + hashlib.sha256(identity.encode()).hexdigest()[:24]
    data_hash = hashlib.sha256(json.dumps(sorted(cases)).encode()).hexdigest()
    engine = Engine(store, EngineOptions(concurrency=concurrency, progress=progress))

    async def run_variants(run_id: str, variants: Sequence[Variant]) -> None:
        for v in variants:
            if v.name in skipped:
                continue
            spent = sum(j.cost or 0.0 for j in store.judgments(run_id))
            if budget is not None and spent >= budget:
                skipped[v.name] = f"not run: the budget of US${budget:g} was spent (US${spent:.4f})"
                continue
            for key, judge in list(plan.judges.items()):
                if key[0] == v.name:
                    tasks = build_tasks(plan.items[key], [judge])
                    await engine.run_tasks(run_id, tasks, {judge.name: provider}, description=f"tuning {v.name}")

    async def judge_all(run_id: str) -> None:
        await run_variants(run_id, list(candidates))
        if extend is not None:
            await run_variants(run_id, await extend(engine, run_id))

    with judged_run(store, engine, list(plan.judges.values()), list(cases.values()), provider=provider,
                    eval_hash=eval_hash, dataset_hash=data_hash, name="tune", config={"kind": "tune", "tune": True},
                    work=judge_all) as run:  # fmt: skip
        return run.id, store.judgments(run.id)
