"""Cascades: the cheapest judge decides what it may, the next judge what is left, a person the rest.

``juge policy derive --cascade small,strong`` generalises ``--rule guarantee`` (:mod:`juge.policy.guarantee`,
Jung, Brahman & Choi, "Trust or Escalate", ICLR 2025) from one judge to a sequence of stages. On dev, stage by
stage, in the order given:

1. the stage's judge gets its prompt per category (rule 2, :func:`juge.policy.derivation.reference_choice`)
   and the category rule (rule 3, :func:`juge.policy.derivation.category_row` on every dev item of the
   category: margin against the person-vs-person ceiling); a category it may not decide passes to the
   next stage;
2. on the dev items that reach the stage (no earlier stage decided them) in the categories it may decide,
   its confidence threshold is chosen by fixed-sequence testing
   (:func:`juge.policy.guarantee.fixed_sequence_threshold`) at level ``1 - (1 - confidence) / K`` for ``K``
   stages (Bonferroni): each stage's disagreement with the majority on the items it decides is within
   ``1 - target`` with that level, so all hold together with probability at least ``confidence``, and then so
   does the disagreement on every item the cascade decides (a mixture of the stages' items);
3. the items it decides (consistent verdict, confidence at or above the threshold) leave; the rest go on.

What no stage decides goes to a person. Routing (:func:`juge.policy.route.route_item`) walks the same stages
with each stage as a one-judge policy (:func:`stage_policy`), so derive, test and route read one rule.

Cost: a stage is called on an item only when the item reaches it in a category the stage may decide, so an
item costs the calls of the stages that saw it, priced from their recorded tokens (:func:`item_costs`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from juge.calibration.pairtable import PairItem, PairTable
from juge.calibration.pairwise import Bootstrap
from juge.data.records import Judgment, RecordedCall
from juge.errors import InputError
from juge.policy.confidence import repeats_on
from juge.policy.configurations import MINUTES_PER_LABEL, Measure, category_allows
from juge.policy.guarantee import GuaranteeThreshold, fixed_sequence_threshold
from juge.policy.results import CascadeStage, PolicyResult
from juge.providers.pricing import call_cost, price_table

Call = Judgment | RecordedCall

METHOD = (
    "fixed-sequence testing per stage (exact one-sided Clopper-Pearson bound, thresholds from the most to the "
    "least confident, stop at the first failure; Jung, Brahman & Choi, Trust or Escalate, ICLR 2025), each "
    "stage at level 1 - (1 - confidence) / stages (Bonferroni) on the dev items that reach it"
)


def stage_key(table: PairTable, name: str) -> str:
    """The judge key of one stage: a key as given, or the judge's plain (not reference-only) template."""
    from juge.calibration.pairwise import reference_templates

    if name in table.judges:
        return name
    reference_only = {a for a, _ in reference_templates(table)}
    keys = sorted(k for k, info in table.judges.items() if info.judge == name and k not in reference_only)
    if not keys:
        raise InputError(f"--cascade {name}: no such judge in the data; known: {', '.join(table.judges)}")
    if len(keys) > 1:
        raise InputError(f"--cascade {name}: the judge has several prompts ({', '.join(keys)}); name one")
    return keys[0]


def parse_stages(cascade: str | Sequence[str]) -> list[str]:
    """``small,strong`` (or a list) as stage names; at least one, none twice."""
    names = [n.strip() for n in (cascade.split(",") if isinstance(cascade, str) else cascade)]
    if not names or any(not n for n in names):
        raise InputError(f"--cascade {cascade!r}: give judge names separated by commas, cheapest first")
    if len(set(names)) != len(names):
        raise InputError(f"--cascade {cascade!r}: a judge appears twice")
    return names


def cascade_walk(
    confidences: Sequence[Sequence[float | None]],
    disagrees: Sequence[Sequence[bool | None]],
    *,
    target: float,
    confidence: float,
) -> tuple[list[GuaranteeThreshold], list[int | None]]:
    """Each stage's threshold on the items no earlier stage decided, and the stage that decides each item.

    ``confidences[k][i]``: stage ``k``'s confidence on item ``i`` (None: the stage may not decide it: a category
    the category rule keeps from it, or no consistent verdict); ``disagrees[k][i]``: its verdict differs from the
    human majority (None: no majority, left out of the walk but decided like any item). Each walk is
    :func:`juge.policy.guarantee.fixed_sequence_threshold` at level ``1 - (1 - confidence) / stages``. Returns
    the walks and, per item, the 0-based stage that decides it (None: a person).
    """
    level = 1 - (1 - confidence) / len(confidences)
    walks: list[GuaranteeThreshold] = []
    for k, (conf, wrong) in enumerate(zip(confidences, disagrees)):
        pending = cascade_assign(confidences[:k], [w.threshold for w in walks]) if k else [None] * len(conf)
        reach = [i for i, (c, s) in enumerate(zip(conf, pending)) if s is None and c is not None]
        rated = [i for i in reach if wrong[i] is not None]
        walks.append(
            fixed_sequence_threshold(
                [float(conf[i] or 0.0) for i in rated], [bool(wrong[i]) for i in rated], target=target, confidence=level
            )
        )
    return walks, cascade_assign(confidences, [w.threshold for w in walks])


def cascade_assign(
    confidences: Sequence[Sequence[float | None]], thresholds: Sequence[float | None]
) -> list[int | None]:
    """Per item, the first stage whose confidence on it is at or above its threshold (None: none, a person)."""
    n = len(confidences[0]) if confidences else 0
    out: list[int | None] = [None] * n
    for k, (conf, t) in enumerate(zip(confidences, thresholds)):
        if t is None:
            continue
        for i in range(n):
            if out[i] is None and conf[i] is not None and conf[i] >= t:  # type: ignore[operator]
                out[i] = k
    return out


def considered_judges(table: PairTable, names: Sequence[str]) -> list[str]:
    """The other judges a cascade's configurations compare with: every judge in the data (a panel given with
    ``--panel`` is one) that is not a stage and has one plain prompt; baselines make no call and are left out."""
    others = sorted({info.judge for info in table.judges.values() if not info.baseline} - set(names))
    usable = []
    for name in others:
        try:
            stage_key(table, name)
        except InputError:  # several prompts: the user names one with --cascade
            continue
        usable.append(name)
    return usable


def _stage_block(
    items: Sequence[PairItem],
    table: PairTable,
    judgments: Sequence[Call],
    name: str,
    *,
    margin: float,
    rule: str,
    boot: Bootstrap,
) -> tuple[dict[str, Any], list[float | None], list[bool | None]]:
    """One judge as a stage: its prompts, category rows, and per dev item its confidence (None: it may not
    decide the item) and whether it disagrees with the majority (None: no majority, or it may not decide)."""
    from juge.policy.pair_rows import category_row, item_confidences, reference_choice

    key = stage_key(table, name)
    categories = table.categories()
    reference = reference_choice(items, table, key, boot)
    key_by_category = {c: reference[c]["template"] if c in reference else key for c in categories}
    rows = {
        c: category_row(
            [it for it in items if it.category == c], key_by_category[c], margin=margin, rule=rule, boot=boot
        )
        for c in categories
    }
    allowed = {c for c, r in rows.items() if category_allows(c, r)}
    conf = item_confidences([it for it in items if it.category in allowed], key_by_category, judgments)
    disagrees = [
        None
        if it.majority is None or it.item_id not in conf
        else it.judges[key_by_category[it.category]].label != it.majority
        for it in items
    ]
    repeats = repeats_on(judgments, set(key_by_category.values()), {it.item_id for it in items})
    stage = {"name": name, "judge": key, "templates_by_category": key_by_category, "reference": reference,
             "categories": rows, "repeats": repeats}  # fmt: skip
    return stage, [conf.get(it.item_id) for it in items], disagrees


def _guarantee_block(
    walk: GuaranteeThreshold,
    stage_of: Sequence[int | None],
    k: int,
    confidences: Sequence[float | None],
    source: str,
    repeats: int | None = None,
) -> dict[str, Any]:
    """Stage ``k``'s walk and what it decides, as the policy file keeps them (``repeats``: the calls per item the
    confidences read, :func:`juge.policy.confidence.repeats_on`)."""
    reaching = [i for i, s in enumerate(stage_of) if s is None or s >= k]
    decided = sum(s == k for s in stage_of)
    return {
        "guarantee": {
            **walk.to_dict(),
            "n_calibration": walk.n_items,
            "n_calibration_covered": walk.n_covered,
            "n_items": len(reaching),
            "n_covered": decided,
            "coverage": decided / len(reaching) if reaching else 0.0,
            "coverage_denominator": "the dev items that reach this stage (no earlier stage decided them)",
            "confidence_source": source,
            "repeats": repeats,
        },
        "n_reaching": len(reaching),
        "n_in_its_categories": sum(confidences[i] is not None for i in reaching),
        "n_decided": decided,
    }


def derive_cascade(
    items: Sequence[PairItem],
    table: PairTable,
    judgments: Sequence[Call],
    names: Sequence[str],
    *,
    margin: float,
    rule: str,
    target: float,
    confidence: float,
    boot: Bootstrap,
    prices: Mapping[str, Mapping[str, float]] | None = None,
    minutes_per_label: float = MINUTES_PER_LABEL,
    minute_price: float | None = None,
) -> dict[str, Any]:
    """The cascade block of a pairwise policy: per stage its prompts, category rows, threshold walk and what it
    decides; every configuration considered on dev with its figures, and the one chosen
    (:func:`configured_cascade`)."""
    from juge.judges.panel import PANEL_MODEL
    from juge.policy.configurations import pair_measure
    from juge.policy.pair_rows import CONFIDENCE_SOURCE

    others = considered_judges(table, names)
    blocks = {
        n: _stage_block(items, table, judgments, n, margin=margin, rule=rule, boot=boot) for n in [*names, *others]
    }
    panels = {
        n for n, b in blocks.items() if any(m.startswith(PANEL_MODEL) for m in table.judges[b[0]["judge"]].models)
    }
    return configured_cascade(
        items, judgments, names, blocks, measure=pair_measure(items, boot), panels=panels, rule=rule,
        source=CONFIDENCE_SOURCE, target=target, confidence=confidence, boot=boot, prices=prices,
        minutes_per_label=minutes_per_label, minute_price=minute_price,
    )  # fmt: skip


def configured_cascade(
    items: Sequence[Any],
    judgments: Sequence[Call],
    names: Sequence[str],
    blocks: Mapping[str, tuple[dict[str, Any], list[float | None], list[bool | None]]],
    *,
    measure: Measure,
    panels: Iterable[str],
    rule: str,
    source: str,
    target: float,
    confidence: float,
    boot: Bootstrap,
    prices: Mapping[str, Mapping[str, float]] | None,
    minutes_per_label: float,
    minute_price: float | None,
) -> dict[str, Any]:
    """The cascade block of a policy of any judge kind, from each judge as a stage (``blocks[name]``: the stage,
    per dev item its confidence and disagreement with the majority; the stages named in ``names``, the others
    considered): the walk (:func:`cascade_block`), each other judge alone, every configuration on dev with its
    figures (agreement by the kind's ``measure``), and the one chosen (:mod:`juge.policy.configurations`)."""
    stages = [blocks[n][0] for n in names]
    block = cascade_block(
        stages, [blocks[n][1] for n in names], [blocks[n][2] for n in names], target=target, confidence=confidence,
        rule=rule, source=source,
    )  # fmt: skip
    considered = []
    for n in [n for n in blocks if n not in names]:
        stage, conf, wrong = blocks[n]
        (walk,), own = cascade_walk([conf], [wrong], target=target, confidence=confidence)
        repeats = stage.pop("repeats", None)
        considered.append({**stage, **_guarantee_block(walk, own, 0, conf, source, repeats)})
    configurations, choice = dev_configurations(
        items, judgments, names, {s["name"]: s for s in [*stages, *considered]},
        {n: (b[1], b[2]) for n, b in blocks.items()}, measure=measure, panels=set(panels), target=target,
        confidence=confidence, boot=boot, prices=prices, minutes_per_label=minutes_per_label,
        minute_price=minute_price,
    )  # fmt: skip
    return {
        **block,
        "considered": considered,
        "configurations": configurations,
        "choice": choice,
        "minutes_per_label": minutes_per_label,
        **({"minute_price": minute_price} if minute_price is not None else {}),
        **({"prices": {m: dict(r) for m, r in prices.items()}} if prices else {}),
    }


def configuration_names(names: Sequence[str], others: Sequence[str]) -> list[tuple[tuple[str, ...], str]]:
    """The configurations a cascade policy considers, with their kind: each judge alone (the stages, then the
    others: ``panel`` for a panel), each prefix of two or more stages, and the cascade."""
    out: list[tuple[tuple[str, ...], str]] = [((n,), "judge") for n in [*names, *others]]
    out += [(tuple(names[:k]), "prefix") for k in range(2, len(names))]
    if len(names) > 1:
        out.append((tuple(names), "cascade"))
    return out


def dev_configurations(
    items: Sequence[Any],
    judgments: Sequence[Call],
    names: Sequence[str],
    stage_by_name: Mapping[str, Mapping[str, Any]],
    walk_inputs: Mapping[str, tuple[list[float | None], list[bool | None]]],
    *,
    measure: Measure,
    panels: set[str],
    target: float,
    confidence: float,
    boot: Bootstrap,
    prices: Mapping[str, Mapping[str, float]] | None,
    minutes_per_label: float,
    minute_price: float | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every configuration walked on dev as a cascade (same target and confidence), its figures, and the choice.
    ``items``: the dev items (``item_id``, ``category``); ``panels``: the judges that are panels."""
    from juge.policy.configurations import (
        Decided,
        agreement_counts,
        choose_configuration,
        configuration_figures,
        with_threshold,
    )

    base = {n: CascadeStage.model_validate(dict(s)) for n, s in stage_by_name.items()}
    rows, counts = [], []
    for combo, kind in configuration_names(names, [n for n in stage_by_name if n not in names]):
        walks, stage_of = cascade_walk(
            [walk_inputs[n][0] for n in combo], [walk_inputs[n][1] for n in combo], target=target,
            confidence=confidence,
        )  # fmt: skip
        stages = [with_threshold(base[n], w.threshold) for n, w in zip(combo, walks)]
        decided = [
            Decided(it.item_id, it.category, None if s is None else s + 1,
                    None if s is None else stages[s].templates_by_category.get(it.category))
            for it, s in zip(items, stage_of)
        ]  # fmt: skip
        agreement = measure(decided)
        figures = configuration_figures(
            decided, stages, judgments, agreement=agreement, prices=prices, minutes_per_label=minutes_per_label
        )
        counts.append(agreement_counts(agreement.wrong))
        rows.append({
            "name": " → ".join(combo),
            "kind": "panel" if kind == "judge" and combo[0] in panels else kind,
            "stages": [{"name": s.name, "judge": s.judge, "threshold": w.threshold} for s, w in zip(stages, walks)],
            "meets_guarantee": figures["n_decided"] > 0,
            "dev": figures,
        })  # fmt: skip
    choice = choose_configuration(
        [r["name"] for r in rows], counts, meets_guarantee=[r["meets_guarantee"] for r in rows],
        usd_per_item=[r["dev"]["cost"]["usd_per_item"] for r in rows],
        tokens_per_item=[r["dev"]["cost"]["tokens_per_item"] for r in rows],
        n_decided=[r["dev"]["n_decided"] for r in rows], n_stages=[len(r["stages"]) for r in rows], boot=boot,
        people_usd_per_item=None if minute_price is None else [
            r["dev"]["n_person"] / len(items) * minutes_per_label * minute_price if items else 0.0 for r in rows
        ],
    )  # fmt: skip
    for row, why in zip(rows, choice.pop("rows")):
        row.update(why)
        row["chosen"] = row["name"] == choice["chosen"]
    chosen = next((r for r in rows if r["chosen"]), None)
    choice["derive_with"] = None if chosen is None else ",".join(s["name"] for s in chosen["stages"])
    choice["routes_with_choice"] = chosen is not None and [s["name"] for s in chosen["stages"]] == list(names)
    return rows, choice


def with_chosen_stages(first: dict[str, Any], derive: Callable[[list[str]], dict[str, Any]]) -> dict[str, Any]:
    """``--choose``: the policy derived again on the same dev data with the chosen configuration's stages, keeping
    the first derivation's configurations and choice (made on dev among the cascade as given), so that ``policy
    test`` measures them all on holdout and ``route`` reads the chosen stages. ``first``: the policy derived with
    the cascade as given; ``derive(stages)``: derive with those stages. Nothing chosen (no configuration meets the
    guarantee): the policy routes with the cascade as given, said in ``choice.warning``."""
    from juge.policy.file import policy_hash

    c = first["cascade"]
    choice = c["choice"]
    given = [s["name"] for s in c["stages"]]
    chosen = next((r for r in c["configurations"] if r["chosen"]), None)
    if chosen is None:
        note = "--choose: no configuration meets the guarantee on dev; the policy routes with the cascade as given"
        choice["warning"] = "; ".join(w for w in (choice.get("warning"), note) if w)
        first["policy_hash"] = policy_hash(first)
        return first
    stages = [s["name"] for s in chosen["stages"]]
    if stages == given:
        return first
    second = derive(stages)
    c2 = second["cascade"]
    # the given stages stay known by name, so policy test can route every configuration on holdout
    known = {s["name"] for s in [*c2["stages"], *c2["considered"]]}
    c2["considered"] += [s for s in [*c["stages"], *c["considered"]] if s["name"] not in known]
    c2["configurations"] = c["configurations"]
    c2["choice"] = {**choice, "routes_with_choice": True, "given": ",".join(given)}
    second["policy_hash"] = policy_hash(second)  # the policy changed after its derivation hashed it
    return second


def cascade_block(
    stages: list[dict[str, Any]],
    confidences: Sequence[Sequence[float | None]],
    disagrees: Sequence[Sequence[bool | None]],
    *,
    target: float,
    confidence: float,
    rule: str,
    source: str,
) -> dict[str, Any]:
    """The cascade block of a policy from its stages (name, judge, prompts, category rows, calls per item read) and,
    per stage and dev item, the confidence (None: the stage may not decide it) and the disagreement with the majority, whatever the
    judge kind: the walk (:func:`cascade_walk`), what each stage decides, and each stage alone."""
    items = confidences[0] if confidences else []
    walks, stage_of = cascade_walk(confidences, disagrees, target=target, confidence=confidence)
    for k, (stage, walk) in enumerate(zip(stages, walks)):
        stage.update(_guarantee_block(walk, stage_of, k, confidences[k], source, stage.pop("repeats", None)))
    n_person = sum(s is None for s in stage_of)
    alone = []  # each stage's judge alone at the same target and confidence: what the cascade is compared with
    for k, stage in enumerate(stages):
        (walk,), own = cascade_walk([confidences[k]], [disagrees[k]], target=target, confidence=confidence)
        alone.append({"name": stage["name"], "judge": stage["judge"], "threshold": walk.threshold,
                      **_decided_figures(own, [disagrees[k]], len(items))})  # fmt: skip
    return {
        "stages": stages,
        "cascade_on_dev": _decided_figures(stage_of, disagrees, len(items)),
        "alone": alone,
        "target": target,
        "confidence": confidence,
        "stage_confidence": 1 - (1 - confidence) / len(stages),
        "category_rule": rule,
        "n_items": len(items),
        "n_person": n_person,
        "coverage": (len(items) - n_person) / len(items) if items else 0.0,
        "method": METHOD,
    }


def _decided_figures(stage_of: Sequence[int | None], disagrees: Sequence[Sequence[bool | None]], n: int) -> dict:
    """Items decided, their share, and agreement with the majority on those with one (dev, no interval)."""
    wrong = [disagrees[s][i] for i, s in enumerate(stage_of) if s is not None]
    rated = [w for w in wrong if w is not None]
    return {
        "n_decided": len(wrong),
        "coverage": len(wrong) / n if n else 0.0,
        "agreement_with_majority": 1 - sum(rated) / len(rated) if rated else None,
        "n_with_majority": len(rated),
    }


def stage_policy(policy: PolicyResult, stage: CascadeStage) -> PolicyResult:
    """One stage as a one-judge policy (its prompts, its categories, the policy's category rule, and for a grade
    judge its kind, pass threshold and scale) for routing."""
    return PolicyResult.model_validate(
        {
            "judge_kind": policy.judge_kind,
            "threshold": policy.threshold,
            "scale": policy.scale,
            "min_recall": policy.min_recall,
            "rule": policy.rule,
            "margin": policy.margin,
            "judge": stage.judge,
            "templates_by_category": stage.templates_by_category,
            "judges": {k: v.to_dict() for k, v in policy.judges.items()},
            "categories": {c: r.to_dict() for c, r in stage.categories.items()},
            "policy_hash": policy.policy_hash,
        }
    )


def cascade_on_holdout(
    policy: PolicyResult,
    decisions: Sequence[Any],
    wrong: Sequence[bool | None],
    judgments: Iterable[Call],
    *,
    vs_majority: Mapping[str, Any] | None,
    vs_people: Mapping[str, Any] | None,
    level: float,
    prices: Mapping[str, Mapping[Any, float]] | None,
) -> dict[str, Any]:
    """A cascade on holdout, any judge kind: items decided per stage (plus a person's: the holdout's items), the
    guarantee on the decided items (``wrong[i]``: the decided item ``i`` differs from the majority, None: not
    decided or no majority), agreement on them, and the cost per item of the cascade and of its last stage alone."""
    from juge.policy.guarantee import check_on_holdout

    assert policy.cascade is not None
    decided = [d.route == "judge" for d in decisions]
    return {
        "stages": [
            {"name": s.name, "judge": s.judge, "n_decided": sum(d.stage == k for d in decisions)}
            for k, s in enumerate(policy.cascade.stages, 1)
        ],
        "n_person": decided.count(False),
        "n_items": len(decisions),
        "coverage": sum(decided) / len(decisions) if decisions else 0.0,
        "vs_majority": vs_majority,
        "vs_people": vs_people,
        "guarantee": check_on_holdout(None, decided, wrong, target=policy.cascade.target, confidence=level),
        "cost": item_costs(decisions, policy, judgments, prices),
    }


def item_costs(
    decisions: Sequence[Any],
    policy: PolicyResult,
    judgments: Iterable[Call],
    prices: Mapping[str, Mapping[Any, float]] | None = None,
) -> dict[str, Any]:
    """What the cascade cost on these routed items, and what the last stage alone would have cost.

    An item pays the calls of every stage it reached that may decide it (the stages a live route calls:
    :func:`juge.policy.configurations.stage_may_decide`). The last stage alone pays its calls on every item. In
    US$ when every call counted has a model in the price table (built-in rows, then ``prices``) and recorded
    tokens; else in tokens (said which).
    """
    from juge.policy.configurations import Decided, configuration_calls, members_of_panels

    assert policy.cascade is not None
    judgments = list(judgments)
    table = price_table(prices)
    stages = policy.cascade.stages
    decided = [Decided(d.item_id, d.category, d.stage, d.template) for d in decisions]
    cascade_calls = configuration_calls(decided, stages, judgments)
    last = {(d.item_id, stages[-1].templates_by_category.get(d.category)) for d in decisions}
    strong_calls = members_of_panels(
        [j for j in judgments if (j.item_id, f"{j.judge}/{j.template}") in last], judgments
    )
    costs = [call_cost(j.model, j.tokens_in, j.tokens_out, table) for j in [*cascade_calls, *strong_calls]]
    priced = bool(costs) and all(c is not None for c in costs)
    n = len(decisions)

    def per_item(js: list[Call]) -> float:
        if priced:
            total = sum(call_cost(j.model, j.tokens_in, j.tokens_out, table) or 0.0 for j in js)
        else:
            total = float(sum((j.tokens_in or 0) + (j.tokens_out or 0) for j in js))
        return total / n if n else 0.0

    unpriced = sorted({j.model for j in [*cascade_calls, *strong_calls] if call_cost(j.model, 1, 1, table) is None})
    cascade_cost, strong_cost = per_item(cascade_calls), per_item(strong_calls)
    return {
        "unit": "USD" if priced else "tokens",
        "cascade_per_item": cascade_cost,
        "last_stage_alone_per_item": strong_cost,
        "ratio": cascade_cost / strong_cost if strong_cost else None,
        "cascade_calls": len(cascade_calls),
        "last_stage_alone_calls": len(strong_calls),
        "unpriced_models": unpriced,
    }


def read_prices(path: str | Path) -> dict[str, dict[str, float]]:
    """The ``[prices]`` table of a TOML file (an eval file, or a file with only that table): model name prefix ->
    ``input`` and ``output`` US$ per million tokens, checked as the eval file's are."""
    from pydantic import ValidationError

    from juge.config import EvalSpec
    from juge.errors import input_error, parse_toml, validation_error, with_toml_line

    path = Path(path)
    if not path.is_file():
        raise InputError(f"--prices {path}: file not found")
    raw = path.read_bytes()
    document, _ = parse_toml(path, raw)
    if "prices" not in document:
        raise input_error(path, 'no [prices] table (rows like: "gpt-6-luna" = { input = 0.15, output = 0.6 })')
    try:
        spec = EvalSpec.model_validate({"cases": "-", "prices": document["prices"]})  # the eval file's checks
    except ValidationError as exc:  # with the line of the row at fault, as an eval file's error has
        raise with_toml_line(validation_error(path, exc), path, raw.decode("utf-8", "replace")) from None
    return {model: {str(k): v for k, v in row.items()} for model, row in spec.prices.items()}
