"""Which cases to label (``juge label init --select ... --budget N``), with each one's chance of being drawn.

``random``: a simple random sample of ``budget`` cases; every case has probability ``budget / N``.
``stratified``: by category, ``n_k`` of the category's ``N_k`` cases drawn at random, the budget allocated in
proportion to the categories' sizes (largest remainder, at least 2 per category while the budget allows: stratified
PPI++ needs 2 labels in each). That is Neyman's optimal allocation when the categories' spreads are not known yet;
once some labels are in, ``juge plan --width`` prints the allocation by spread. A case of category k has
probability ``n_k / N_k``.

The draw is recorded in each chosen case's ``meta["juge_selection"]`` (method, stratum, probability), stored with
the project, and summarised in the result. Estimate a pass rate from labels drawn by category with
``juge estimate --strata category``: it weights each category by its share of the cases, whatever its share of
the labels, so the selection does not bias the figure.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from juge.data.records import Case
from juge.errors import InputError
from juge.label.results import LabelSelection, SelectionStratum

METHODS = ("random", "stratified")
NO_CATEGORY = "(none)"
SELECTION_KEY = "juge_selection"


def select_cases(
    cases: Sequence[Case], *, method: str, budget: int, seed: int = 0
) -> tuple[list[Case], LabelSelection]:
    """The chosen cases (in their input order, each with its selection in ``meta``) and the selection's summary."""
    if method not in METHODS:
        raise InputError(f"--select {method!r}: use one of {', '.join(METHODS)}")
    if not 1 <= budget <= len(cases):
        raise InputError(f"--budget {budget}: must be between 1 and the {len(cases)} cases read")
    strata: dict[str, list[int]] = {}
    for i, case in enumerate(cases):
        strata.setdefault(case.category or NO_CATEGORY if method == "stratified" else "(all)", []).append(i)
    allocation = allocate({k: len(v) for k, v in strata.items()}, budget)
    rng = random.Random(seed)
    chosen: dict[int, tuple[str, float]] = {}
    rows = []
    for name in sorted(strata):
        members, n_k = strata[name], allocation[name]
        probability = n_k / len(members)
        for i in rng.sample(members, n_k):
            chosen[i] = (name, probability)
        rows.append(SelectionStratum(stratum=name, population=len(members), selected=n_k, probability=probability))
    picked = [
        case.model_copy(
            update={
                "meta": {
                    **case.meta,
                    SELECTION_KEY: {"method": method, "stratum": chosen[i][0], "probability": chosen[i][1]},
                }
            }  # fmt: skip
        )
        for i, case in enumerate(cases)
        if i in chosen
    ]
    return picked, LabelSelection(method=method, budget=budget, population=len(cases), strata=rows)


def allocate(sizes: dict[str, int], budget: int) -> dict[str, int]:
    """``budget`` split in proportion to ``sizes`` (largest remainder), at least min(2, N_k) each while it lasts."""
    total = sum(sizes.values())
    exact = {k: budget * n / total for k, n in sizes.items()}
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
        k = next(k for k in sorted(alloc) if alloc[k] < sizes[k])
        alloc[k] += 1
    return alloc
