"""Cost is part of the decision: every configuration a cascade policy considered, measured the same way, and the
one chosen.

A configuration is a sequence of judges routed as a cascade (:mod:`juge.policy.cascade`) at the policy's
target and confidence: each judge alone (a panel given with ``--panel`` is a judge), each prefix of the
cascade, and the cascade; pairwise, PASS/FAIL and score cascades alike. For each, on dev at derive and on
holdout at ``policy test`` (:func:`configuration_figures`): the items decided without a person, agreement with
the majority and with each person on them (bootstrap intervals; measured by the judge kind's :data:`Measure`:
:func:`pair_measure`, :func:`juge.policy.grades.grade_measure`), the cost per item of the calls it makes (recorded tokens x
prices; None, with a warning, when a price or a token count is missing) and the person-minutes saved at
``minutes_per_label``.

The choice (:func:`choose_configuration`, dev only): among the configurations that meet the guarantee (a
threshold met the target on dev, so they decide some item), the best is the one with the highest agreement with
the majority on the items it decides; a configuration is within noise of it when the paired bootstrap interval
of its agreement minus the best's (:func:`within_noise`) includes 0; the chosen one is the cheapest of those
within noise (cost per item of its calls in US$, plus its people's minutes at ``--minute-price`` when given; in
tokens when some has no price), ties to the one deciding more items, then to the fewer stages.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from juge.calibration.pairtable import PairItem
from juge.calibration.pairwise import Bootstrap, vs_majority, vs_people
from juge.data.records import Judgment, RecordedCall
from juge.policy.decision import category_decision
from juge.policy.results import CascadeStage, ConfigurationChoice, PolicyResult
from juge.providers.pricing import call_cost, price_table
from juge.stats import paired_ratio_difference
from juge.stats.estimate import Estimate

Call = Judgment | RecordedCall

MINUTES_PER_LABEL = 1.0  # the default: one person-minute to read a pair and vote

RULE = (
    "among the configurations that meet the guarantee on dev, the cheapest (cost per item of its calls, plus its "
    "people's minutes at --minute-price when given; ties: more items decided, then fewer stages) whose agreement "
    "with the majority on the items it decides is within noise of the best: the paired bootstrap interval of its "
    "agreement minus the best's includes 0"
)

_KEY = "configuration"  # the per-item verdict of whichever stage decided it


@dataclass(frozen=True)
class Decided:
    """Where one item went under a configuration: the 1-based stage that decided it (None: a person) and the
    template that stage used on it."""

    item_id: str
    category: str
    stage: int | None
    template: str | None


def category_allows(category: str, row: Mapping[str, Any]) -> bool:
    """The category rule's one decision (too few items: a person), as every command reads it."""
    d = category_decision(
        category, decision=row["decision"], reason=row["reason"], too_few=row.get("too_few"),
        by_figures=row.get("by_figures"),
    )  # fmt: skip
    return d.route == "judge"


def stage_may_decide(stage: CascadeStage, category: str) -> bool:
    """Whether a stage may decide an item of this category: the category rule lets it, and a threshold met the
    target on dev. A live route calls a stage only then, and a cascade pays for its calls only then."""
    row = stage.categories.get(category)
    has_threshold = stage.guarantee is not None and stage.guarantee.threshold is not None
    return has_threshold and row is not None and category_allows(category, row.to_dict())


def members_of_panels(calls: list[Call], judgments: Iterable[Call]) -> list[Call]:
    """A panel's call is its members' calls (:mod:`juge.judges.panel`): priced at their models' prices."""
    from juge.judges.panel import panel_members

    panels = [j for j in calls if panel_members(j.model)]
    if not panels:
        return calls
    wanted = {(j.item_id, j.order, j.repeat, m) for j in panels for m in panel_members(j.model) or ()}
    members = [j for j in judgments if (j.item_id, j.order, j.repeat, f"{j.judge}/{j.template}") in wanted]
    return [j for j in calls if not panel_members(j.model)] + members


def with_threshold(stage: CascadeStage, threshold: float | None) -> CascadeStage:
    """A stage as it acts in one configuration: its prompts and category rules, that configuration's threshold."""
    assert stage.guarantee is not None
    return stage.model_copy(update={"guarantee": stage.guarantee.model_copy(update={"threshold": threshold})})


def as_policy(policy: PolicyResult, stages: Sequence[CascadeStage]) -> PolicyResult:
    """The policy with these stages as its cascade: what routing reads for one configuration."""
    assert policy.cascade is not None
    return policy.model_copy(update={"cascade": policy.cascade.model_copy(update={"stages": list(stages)})})


def configuration_calls(
    decided: Sequence[Decided], stages: Sequence[CascadeStage], judgments: Iterable[Call]
) -> list[Call]:
    """The calls a configuration makes on these items: an item pays every stage it reached that may decide it
    (:func:`stage_may_decide`: the stages a live route calls); a panel's call is its members'."""
    judgments = list(judgments)
    ids = {d.item_id for d in decided}
    calls: dict[tuple[str, str], list[Call]] = {}
    for j in judgments:
        if j.item_id in ids:
            calls.setdefault((j.item_id, f"{j.judge}/{j.template}"), []).append(j)
    paid: list[Call] = []
    for d in decided:
        for stage in stages if d.stage is None else stages[: d.stage]:
            key = stage.templates_by_category.get(d.category)
            if key is not None and stage_may_decide(stage, d.category):
                paid += calls.get((d.item_id, key), [])
    return members_of_panels(paid, judgments)


def calls_cost(calls: Sequence[Call], n_items: int, prices: Mapping[str, Mapping[Any, float]] | None) -> dict[str, Any]:
    """Cost per item of these calls: US$ from recorded tokens and the price table (None when a call's model has no
    price or its tokens were not recorded, said in ``warning``), and tokens per item always."""
    table = price_table(prices)
    costs = [call_cost(j.model, j.tokens_in, j.tokens_out, table) for j in calls]
    unpriced = sorted({j.model for j in calls if call_cost(j.model, 1, 1, table) is None})
    no_tokens = sum(j.tokens_in is None or j.tokens_out is None for j in calls)
    warning = None
    if unpriced:
        warning = f"no price for {', '.join(unpriced)}: give --prices FILE with a [prices] table"
    elif no_tokens:
        warning = f"{no_tokens} calls have no recorded tokens: their cost is unknown"
    usd = None if warning else sum(c or 0.0 for c in costs) / n_items if n_items else 0.0
    tokens = sum((j.tokens_in or 0) + (j.tokens_out or 0) for j in calls)
    return {
        "usd_per_item": usd,
        "tokens_per_item": tokens / n_items if n_items else 0.0,
        "calls": len(calls),
        "unpriced_models": unpriced,
        "calls_without_tokens": no_tokens,
        "warning": warning,
    }


@dataclass(frozen=True)
class Agreement:
    """How a configuration's decided items agree with people: with the majority and with each person (intervals),
    and per item whether the deciding verdict differs from the majority (None: not decided, or no majority)."""

    vs_majority: Any
    vs_people: Any
    wrong: list[bool | None]


Measure = Callable[[Sequence[Decided]], Agreement]
"""A judge kind's agreement on the items a configuration decides (:func:`pair_measure`,
:func:`juge.policy.grades.grade_measure`): the one thing configurations measure differently by kind."""


def pair_measure(items: Sequence[PairItem], boot: Bootstrap) -> Measure:
    """Pairwise agreement: the deciding template's consistent verdict against the majority vote and each person
    (clustered bootstrap, :func:`juge.calibration.pairwise.vs_majority` and ``vs_people``)."""

    def measure(decided: Sequence[Decided]) -> Agreement:
        on: list[PairItem] = []
        wrong: list[bool | None] = []
        for it, d in zip(items, decided):
            judged = d.stage is not None and d.template in it.judges
            wrong.append(
                None if not judged or it.majority is None else it.judges[d.template or ""].label != it.majority
            )
            if judged:
                c = copy.copy(it)
                c.judges = {_KEY: it.judges[d.template or ""]}
                on.append(c)
        return Agreement(vs_majority(on, _KEY, boot)["agreement"], vs_people(on, _KEY, boot)["agreement"], wrong)

    return measure


def agreement_counts(wrong: Sequence[bool | None]) -> tuple[np.ndarray, np.ndarray]:
    """Per item: 1 when decided, with a majority, and the deciding verdict equals it (num); 1 when decided with a
    majority (den). What the guarantee is about, and what configurations are compared on, paired by item."""
    den = np.array([w is not None for w in wrong], dtype=float)
    num = np.array([w is False for w in wrong], dtype=float)
    return num, den


def configuration_figures(
    decided: Sequence[Decided],
    stages: Sequence[CascadeStage],
    judgments: Iterable[Call],
    *,
    agreement: Agreement,
    prices: Mapping[str, Mapping[Any, float]] | None,
    minutes_per_label: float,
) -> dict[str, Any]:
    """One configuration on a split: coverage, agreement with the majority and with each person on the decided
    items (``agreement``, from the kind's :data:`Measure`), cost per item, person-minutes saved
    (``minutes_per_label`` per decided item)."""
    n, n_decided = len(decided), sum(d.stage is not None for d in decided)
    return {
        "n_items": n,
        "n_decided": n_decided,
        "n_person": n - n_decided,
        "decided_by_stage": [sum(d.stage == k for d in decided) for k in range(1, len(stages) + 1)],
        "coverage": n_decided / n if n else 0.0,
        "vs_majority": agreement.vs_majority,
        "vs_people": agreement.vs_people,
        "cost": calls_cost(configuration_calls(decided, stages, judgments), n, prices),
        "minutes_per_label": minutes_per_label,
        "person_minutes_saved": n_decided * minutes_per_label,
        "person_minutes_saved_per_item": n_decided * minutes_per_label / n if n else 0.0,
    }


def within_noise(difference: Estimate | Mapping[str, Any] | None) -> bool:
    """The one definition of "within noise of the best": the paired bootstrap interval of (this configuration's
    agreement minus the best's) includes 0. No interval (no item to compare on) is not within noise."""
    d = Estimate.model_validate(difference) if isinstance(difference, Mapping) else difference
    return d is not None and d.low is not None and d.high is not None and d.low <= 0 <= d.high


def choose_configuration(
    names: Sequence[str],
    counts: Sequence[tuple[np.ndarray, np.ndarray]],
    *,
    meets_guarantee: Sequence[bool],
    usd_per_item: Sequence[float | None],
    tokens_per_item: Sequence[float],
    n_decided: Sequence[int],
    n_stages: Sequence[int],
    boot: Bootstrap,
    people_usd_per_item: Sequence[float] | None = None,
) -> dict[str, Any]:
    """The chosen configuration and why, as fields (:data:`RULE`).

    ``counts[i]``: configuration ``i``'s per-item agreement counts on the same items
    (:func:`agreement_counts`). ``people_usd_per_item[i]`` (``--minute-price``): what the people it leaves items
    to cost per item, added to its calls' cost. Returns ``chosen``, ``best``, ``cost_basis`` (USD, USD with
    people, or tokens when an eligible configuration has no US$ cost), ``eligible``, ``within_noise``,
    ``warning`` and per configuration ``rows`` (``meets_guarantee``, ``difference_to_best``, ``within_noise``,
    ``ranking_cost``).
    """
    agreement = [num.sum() / den.sum() if den.sum() else None for num, den in counts]
    eligible = [i for i, ok in enumerate(meets_guarantee) if ok and agreement[i] is not None]
    priced = all(usd_per_item[i] is not None for i in eligible)
    warning = None
    if not priced and people_usd_per_item is not None:
        warning = "--minute-price left out of the choice: a configuration has no US$ cost (give --prices)"
    if not priced and eligible and not any(tokens_per_item[i] for i in eligible):
        # Calls with no recorded tokens cost 0 tokens here: not cheap, unknown; say what the choice then rests on.
        unknown = "no recorded tokens either: their cost is unknown, so the choice rests on items decided alone"
        warning = f"{warning}; {unknown}" if warning else f"the configurations have {unknown}"
    basis = "tokens" if not priced else "USD" if people_usd_per_item is None else "USD with people"
    people = people_usd_per_item or [0.0] * len(names)
    cost = [
        tokens_per_item[i] if not priced else None if usd_per_item[i] is None else usd_per_item[i] + people[i]  # type: ignore[operator]
        for i in range(len(names))
    ]
    rows: list[dict[str, Any]] = [
        {"meets_guarantee": bool(meets_guarantee[i]), "difference_to_best": None, "within_noise": False,
         "ranking_cost": cost[i]}
        for i in range(len(names))
    ]  # fmt: skip
    if not eligible:
        return {"rule": RULE, "chosen": None, "best": None, "cost_basis": basis, "eligible": [],
                "within_noise": [], "warning": warning, "rows": rows}  # fmt: skip
    best = max(eligible, key=lambda i: (agreement[i], -i))  # ties: the first listed
    close = []
    for i in eligible:
        num, den = counts[i]
        diff = paired_ratio_difference(num, den, counts[best][0], counts[best][1], **boot.kwargs)
        rows[i]["difference_to_best"] = diff.to_dict()
        rows[i]["within_noise"] = i == best or within_noise(diff)
        if rows[i]["within_noise"]:
            close.append(i)
    chosen = min(close, key=lambda i: (cost[i] if cost[i] is not None else float("inf"), -n_decided[i], n_stages[i], i))
    return {
        "rule": RULE,
        "chosen": names[chosen],
        "best": names[best],
        "cost_basis": basis,
        "eligible": [names[i] for i in eligible],
        "within_noise": [names[i] for i in close],
        "warning": warning,
        "rows": rows,
    }


def routing_note(choice: ConfigurationChoice) -> str:
    """What the policy routes with, against the choice, in one sentence (terminal and JUDGE_POLICY.md): the hint
    that routes with the choice when it does not."""
    if choice.chosen is None:
        return "No configuration meets the guarantee on dev: this policy routes with the cascade as given."
    if choice.given is not None:
        return f"This policy routes with the choice (--choose; the cascade given was --cascade {choice.given})."
    if choice.routes_with_choice:
        return "This policy routes with the choice (the cascade as given)."
    return f"This policy routes with the cascade as given; to route with the choice {routing_hint(choice)}."


def routing_hint(choice: ConfigurationChoice) -> str:
    """How to derive the policy that routes with the choice: the exact options."""
    return f"add --choose (or derive with --cascade {choice.derive_with})"
