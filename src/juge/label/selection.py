"""Which cases to label (``juge label init --select ... --budget N``), with each one's chance of being drawn.

``random``: a simple random sample of ``budget`` cases; every case has probability ``budget / N``.

``stratified``: by category, ``n_k`` of the category's ``N_k`` cases drawn at random (probability ``n_k / N_k``),
the budget allocated by Neyman's optimal allocation for the pass-rate estimate, ``n_k`` in proportion to
``N_k sigma_k``. ``sigma_k`` is the spread of what a label in category k must pin down: with 10 or more labels in hand
there (``labels``), the spread of PPI++'s rectifier ``Y - lambda f`` (:func:`juge.runs.corrected.stratum_spread`,
what ``juge plan --width`` allocates by; at least ``sqrt(q (1 - q))``, ``q = 1 / (labels + 2)``, as labels that
all agree with the judge do not show it is never wrong); else the spread of a pass/fail label at the judge's pass rate in the
category, ``sqrt(p_k (1 - p_k))``, with ``p_k = (passes + 1) / (cases + 2)`` so a category the judge passes whole
still gets labels (the judge can be wrong there). Without a run (``signals``) the spreads are unknown: in
proportion to size (Neyman's allocation when the spreads are equal). At least 2 a category while the budget lasts
(stratified PPI++ needs 2 labels in each), never more than its cases. Estimate with stratified PPI++.

``decisive``: the cases that would settle something, drawn more often: of a category whose policy decision is
still open (:func:`juge.policy.decision.still_open` on a policy's figures, or not settled now in a ``juge plan``
result), a pair whose verdict changed with the order of the answers, a
score near the pass threshold. Each case is drawn on its own (Poisson sampling) with probability ``pi_i``
proportional to ``DECISIVE_WEIGHT`` for a decisive case and 1 for any other, scaled so the probabilities add up to
the budget (capped at 1): the number drawn is the budget on average, not exactly. Every case keeps a positive
probability, so the inverse-probability weighted estimate (active statistical inference, Zrnic & Candes 2024) is
unbiased: ``juge estimate --selection`` weights each label by ``1 / pi_i``.

The draw is recorded in each chosen case's ``meta["juge_selection"]`` (method, stratum, probability, reasons),
stored with the project, and summarised in the result (``juge label init --json``: what ``juge estimate
--selection`` reads).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from juge.data.records import Case
from juge.errors import InputError
from juge.label.results import LabelSelection, SelectionStratum

if TYPE_CHECKING:
    from juge.policy.results import PlanResult, PolicyResult
    from juge.runs.judge_signals import JudgeSignals

METHODS = ("random", "stratified", "decisive")
NO_CATEGORY = "(none)"
SELECTION_KEY = "juge_selection"
MIN_LABELS_FOR_SPREAD = 10  # labels in a category before their spread is trusted over the judge's
DECISIVE_WEIGHT = 4.0  # a decisive case is drawn with this many times the chance of another (before the cap at 1)
DECISIVE, OTHER = "decisive", "other"


def select_cases(
    cases: Sequence[Case],
    *,
    method: str,
    budget: int,
    seed: int = 0,
    signals: JudgeSignals | None = None,
    labels: Mapping[str, float] | None = None,
    policy: PolicyResult | None = None,
    plan: PlanResult | None = None,
) -> tuple[list[Case], LabelSelection]:
    """The chosen cases (in their input order, each with its selection in ``meta``) and the selection's summary.

    ``signals``: what a run's judge said about the cases (by case id); ``labels``: people's PASS share per case id
    already labelled; ``policy``: the policy whose open categories a decisive draw favours; ``plan``: a ``juge plan``
    result, whose categories not settled now are open."""
    if method not in METHODS:
        raise InputError(f"--select {method!r}: use one of {', '.join(METHODS)}")
    if not 1 <= budget <= len(cases):
        raise InputError(f"--budget {budget}: must be between 1 and the {len(cases)} cases read")
    if signals is not None and not {c.id for c in cases} & (signals.cases | set(signals.passes) | _flagged(signals)):
        raise InputError(
            f"{signals.source}: no case id of the cases read is a case judged there; select with the judge's verdicts "
            "on these cases"
        )
    if method == "decisive":
        return _decisive(cases, budget=budget, seed=seed, signals=signals, policy=policy, plan=plan)
    strata: dict[str, list[int]] = {}
    for i, case in enumerate(cases):
        strata.setdefault(case.category or NO_CATEGORY if method == "stratified" else "(all)", []).append(i)
    sizes = {k: len(v) for k, v in strata.items()}
    spreads: dict[str, tuple[float, str]] = {}
    if method == "stratified" and signals is not None and signals.passes:
        spreads = category_spreads(cases, strata, signals, labels or {})
    allocation = allocate(sizes, budget, {k: s for k, (s, _) in spreads.items()} or None)
    rng = random.Random(seed)
    chosen: dict[int, tuple[str, float]] = {}
    rows = []
    for name in sorted(strata):
        members, n_k = strata[name], allocation[name]
        probability = n_k / len(members)
        for i in rng.sample(members, n_k):
            chosen[i] = (name, probability)
        spread = spreads.get(name)
        rows.append(
            SelectionStratum(
                stratum=name,
                population=len(members),
                selected=n_k,
                probability=probability,
                spread=None if spread is None else spread[0],
                spread_from=None if spread is None else spread[1],
            )
        )
    picked = [
        _with_selection(case, method, chosen[i][0], chosen[i][1], []) for i, case in enumerate(cases) if i in chosen
    ]
    allocation_name, why = _allocation_why(method, spreads, signals)
    return picked, LabelSelection(
        method=method,
        budget=budget,
        population=len(cases),
        strata=rows,
        allocation=allocation_name,
        why=why,
        run_id=None if signals is None else signals.run_id,
    )


def _allocation_why(
    method: str, spreads: Mapping[str, tuple[float, str]], signals: JudgeSignals | None
) -> tuple[str, str]:
    if method == "random":
        return "random", "a simple random sample: every case has the same chance"
    if not spreads:
        given = (
            "no run's verdicts given (--run)"
            if signals is None
            else f"{signals.source} has no pass/fail verdict (pairwise verdicts have no pass rate)"
        )
        return "proportional", (
            f"in proportion to each category's cases (at least 2 each): {given}, so the categories' spreads are "
            "unknown, and proportional is Neyman's allocation when they are equal"
        )
    measured = sorted({source for _, source in spreads.values()})
    return "neyman", (
        f"Neyman's optimal allocation for the pass rate: each category's labels in proportion to its cases times "
        f"the spread of its labels (measured from {' and '.join(measured)}, {signals.source if signals else ''}), "
        "so the categories where the judge is least sure of the pass rate get more; at least 2 each"
    )


def category_spreads(
    cases: Sequence[Case], strata: Mapping[str, list[int]], signals: JudgeSignals, labels: Mapping[str, float]
) -> dict[str, tuple[float, str]]:
    """Per category: (sigma_k, where it was measured: ``labels`` or ``judge verdicts``), as the module says."""
    import numpy as np

    from juge.runs.corrected import moments, rectifier_floor, stratum_spread

    out: dict[str, tuple[float, str]] = {}
    for name, members in strata.items():
        ids = [cases[i].id for i in members]
        f_all = np.array([signals.passes.get(i, 0.0) for i in ids])
        labelled = [i for i in ids if i in labels]
        if len(labelled) >= MIN_LABELS_FOR_SPREAD:
            y = np.array([labels[i] for i in labelled])
            f_lab = np.array([signals.passes.get(i, 0.0) for i in labelled])
            # Labels that all agree with the judge do not show it is never wrong: at least one error in n + 2.
            floor = math.sqrt(rectifier_floor(len(labelled)))
            out[name] = (max(stratum_spread(moments(y, f_lab, f_all)), floor), "labels")
        else:
            p = (f_all.sum() + 1) / (len(f_all) + 2)
            out[name] = (float(math.sqrt(p * (1 - p))), "judge verdicts")
    return out


def allocate(sizes: dict[str, int], budget: int, spreads: Mapping[str, float] | None = None) -> dict[str, int]:
    """``budget`` split in proportion to ``sizes`` times ``spreads`` (Neyman; sizes alone without spreads), by
    largest remainder, at least min(2, N_k) each while it lasts, at most N_k."""
    score = {k: n * (1.0 if spreads is None else spreads[k]) for k, n in sizes.items()}
    total = sum(score.values()) or 1.0
    exact = {k: budget * score[k] / total for k in sizes}
    alloc = {k: min(int(exact[k]), n) for k, n in sizes.items()}
    floor = {k: min(2, n) for k, n in sizes.items()}
    if sum(floor.values()) <= budget:
        alloc = {k: max(alloc[k], floor[k]) for k in alloc}
    while sum(alloc.values()) > budget:  # the floors overshot: take back from the largest allocations
        k = max((k for k in alloc if alloc[k] > floor[k]), key=lambda k: alloc[k] - exact[k])
        alloc[k] -= 1
    for k in sorted(alloc, key=lambda k: (alloc[k] - exact[k], k)):  # hand out the remainder
        if sum(alloc.values()) >= budget:
            break
        if alloc[k] < sizes[k]:
            alloc[k] += 1
    while sum(alloc.values()) < budget:  # every remaining case goes to a category with cases left
        k = max((k for k in alloc if alloc[k] < sizes[k]), key=lambda k: (exact[k] - alloc[k], k))
        alloc[k] += 1
    return alloc


def _flagged(signals: JudgeSignals) -> set[str]:
    return signals.order_dependent | signals.near_threshold


def decisive_reasons(
    cases: Sequence[Case], signals: JudgeSignals | None, policy: PolicyResult | None, plan: PlanResult | None = None
) -> dict[str, list[str]]:
    """Per case id, why labelling it would settle something (empty: nothing in particular). A category is open
    when the policy's figures leave it so (:func:`juge.policy.decision.still_open`) or the plan does not find it
    settled now at its stated probability (more items needed), unless its figures sit on the margin (no number of
    labels would settle it)."""
    from juge.policy.decision import still_open
    from juge.policy.plan import OVERALL

    open_categories: dict[str, str] = {}
    for d in plan.decisions if plan is not None else []:
        # On the margin, no number of labels in reach would settle it: labels there are better spent elsewhere.
        if d.category != OVERALL and not d.on_margin and (d.n_more is None or d.n_more > 0):
            open_categories[d.category] = f"juge plan: {d.note}"
    if policy is not None:
        for name, row in policy.categories.items():
            diff = row.difference
            why = still_open(
                too_few=row.too_few,
                low=None if diff is None else diff.low,
                high=None if diff is None else diff.high,
                margin=float(policy.margin),
            )
            if why is not None:
                open_categories[name] = why
    reasons: dict[str, list[str]] = {}
    for case in cases:
        found = []
        if case.category in open_categories:
            found.append(f"category {case.category!r} is still open: {open_categories[case.category]}")
        if signals is not None and case.id in signals.order_dependent:
            found.append("the judge's verdict changed with the order of the answers")
        if signals is not None and case.id in signals.near_threshold:
            found.append(f"the judge's score is within {signals.near:g} of the threshold {signals.threshold:g}")
        reasons[case.id] = found
    return reasons


def inclusion_probabilities(weights: Sequence[float], budget: int) -> list[float]:
    """``pi_i`` proportional to ``weights``, adding up to ``budget``, capped at 1 (the capped cases are drawn
    for sure and the rest of the budget spread over the others in the same proportions)."""
    pi = [0.0] * len(weights)
    free = list(range(len(weights)))
    left = float(budget)
    while free:
        scale = left / sum(weights[i] for i in free)
        capped = [i for i in free if weights[i] * scale >= 1]
        if not capped:
            for i in free:
                pi[i] = weights[i] * scale
            break
        for i in capped:
            pi[i] = 1.0
        left -= len(capped)
        free = [i for i in free if i not in set(capped)]
    return pi


def _decisive(
    cases: Sequence[Case],
    *,
    budget: int,
    seed: int,
    signals: JudgeSignals | None,
    policy: PolicyResult | None,
    plan: PlanResult | None,
) -> tuple[list[Case], LabelSelection]:
    if signals is None and policy is None and plan is None:
        raise InputError(
            "--select decisive needs what would make an item decisive: --run RUN_ID (the judge's verdicts: pairs "
            "judged differently in the two orders, scores near the threshold), --policy FILE or --plan FILE (the "
            "categories still open)"
        )
    reasons = decisive_reasons(cases, signals, policy, plan)
    weights = [DECISIVE_WEIGHT if reasons[c.id] else 1.0 for c in cases]
    pi = inclusion_probabilities(weights, budget)
    rng = random.Random(seed)
    drawn = [i for i in range(len(cases)) if rng.random() < pi[i]]  # Poisson sampling: each case on its own
    groups = {DECISIVE: [i for i, c in enumerate(cases) if reasons[c.id]],
              OTHER: [i for i, c in enumerate(cases) if not reasons[c.id]]}  # fmt: skip
    if not drawn:
        raise InputError(
            f"--budget {budget}: each case is drawn on its own with its chance, and none was drawn this time; give a "
            "larger --budget (or another --seed)"
        )
    taken = set(drawn)
    rows = [
        SelectionStratum(
            stratum=name,
            population=len(members),
            selected=sum(1 for i in members if i in taken),
            probability=pi[members[0]],
        )
        for name, members in groups.items()
        if members
    ]
    picked = [
        _with_selection(cases[i], "decisive", DECISIVE if reasons[cases[i].id] else OTHER, pi[i], reasons[cases[i].id])
        for i in drawn
    ]
    n_decisive = len(groups[DECISIVE])
    why = (
        f"{n_decisive} of the {len(cases)} cases would settle something (open category, order-dependent verdict, "
        f"score near the threshold): each is drawn with {DECISIVE_WEIGHT:g} times the chance of another (capped at 1); "
        f"every case keeps a positive chance, and each was drawn on its own, {len(drawn)} in all (the budget "
        f"{budget} on average); an estimate weights each label by 1 / its chance"
        if n_decisive
        # Say so rather than describe a weighting that did not happen (e.g. a PASS/FAIL run alone: no pairs, no scores)
        else f"none of the {len(cases)} cases would settle something by what was given (a pair judged differently "
        "in the two orders, a score near the threshold; --policy FILE or --plan FILE name the open categories): "
        f"every case had the same chance, {budget} / {len(cases)}, a random draw ({len(drawn)} drawn, each on its "
        "own)"
    )
    return picked, LabelSelection(
        method="decisive",
        budget=budget,
        population=len(cases),
        strata=rows,
        allocation="decisive",
        why=why,
        run_id=None if signals is None else signals.run_id,
        probabilities={cases[i].id: pi[i] for i in drawn},
    )


def _with_selection(case: Case, method: str, stratum: str, probability: float, reasons: list[str]) -> Case:
    recorded = {"method": method, "stratum": stratum, "probability": probability}
    if reasons:
        recorded["reasons"] = reasons
    return case.model_copy(update={"meta": {**case.meta, SELECTION_KEY: recorded}})
