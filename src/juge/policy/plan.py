"""How many more labels would settle a decision (``juge plan``).

Policy decisions: for each category of a policy study (and overall), the rule is settled at ``m`` items when a
study of that size would put the paired interval of judge-vs-person minus person-vs-person agreement clear of
``-margin``: above it (the judge is within the margin of a person) or below it (clearly worse), and the category
is not too thin to decide (:func:`juge.policy.decision.still_open`, the rule `label init --select decisive`
reads). The chance of that is simulated from the data in hand: the category's judged items are drawn with
replacement to ``m`` (each with its votes, so new items are assumed to get as many raters as now), ``reps`` times,
and the rule re-run on each draw. The interval in a draw is the delta-method (normal) interval of the paired ratio difference, the
large-sample form of the bootstrap interval ``policy derive`` prints (a test checks they agree on the sample); it
keeps thousands of simulated studies to a second. The answer is the smallest ``m`` (on a grid up to
``max_factor`` times the current items) settled in at least ``probability`` of the draws; a size not settled at
the cap is "not within" it, and "no number of labels would decide it" when the figure the decision turns on sits
within ``ON_MARGIN`` of its bar. PASS/FAIL and score policies: the same search over the simulated studies of
:mod:`juge.policy.plan_grades` (the grade rule of :func:`juge.policy.grades.decide` at both ends of each
figure's interval).

Corrected pass rates: :func:`juge.runs.corrected.labels_for_width` (PPI++, stratified PPI++ with Neyman
allocation, labels alone) from the variances of the labels in hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from statistics import NormalDist
from typing import Any

import numpy as np

from juge.calibration.pairtable import PairItem
from juge.errors import InputError
from juge.policy.decision import still_open, too_few
from juge.policy.pair_rows import _has_verdict, _judge_vs_person_counts, _person_vs_person_counts
from juge.policy.results import DecisionPlan, PassRatePlan

OVERALL = "(overall)"
GRID_POINTS = 40
ON_MARGIN = 0.02  # a gap this close to -margin needs thousands of items to settle


def item_counts(items: Sequence[PairItem], key_by_category: dict[str, str]) -> np.ndarray:
    """Per judged item (the judge of its category has a verdict): votes agreeing with the judge, votes, rater
    pairs agreeing, rater pairs; the four columns the rule's figures are pooled ratios of."""
    rows = []
    for it in items:
        key = key_by_category[it.category]
        if not _has_verdict(it, key):
            continue
        jp_num, jp_den = _judge_vs_person_counts([it], key)
        pp_num, pp_den = _person_vs_person_counts([it])
        rows.append((jp_num[0], jp_den[0], pp_num[0], pp_den[0]))
    return np.array(rows, dtype=float).reshape(-1, 4)


def settled_shares(
    counts: np.ndarray, m: int, *, margin: float, level: float, reps: int, rng: np.random.Generator
) -> tuple[float, float, float]:
    """Of ``reps`` studies of ``m`` items drawn from ``counts``: the share settled, and the shares settled as
    judge and as person."""
    draw = counts[rng.integers(0, len(counts), (reps, m))]  # (reps, m, 4)
    a, b, c, d = (draw[..., k] for k in range(4))
    big_b, big_d = b.sum(1), d.sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r1, r2 = a.sum(1) / big_b, c.sum(1) / big_d
        # Delta method: the difference of two pooled ratios moves with these per-item terms.
        terms = (a - r1[:, None] * b) / (big_b / m)[:, None] - (c - r2[:, None] * d) / (big_d / m)[:, None]
        se = terms.std(1, ddof=1) / np.sqrt(m)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    diff = r1 - r2
    low, high = diff - z * se, diff + z * se
    judge = person = 0
    for k in range(reps):
        if not np.isfinite(se[k]):
            continue
        thin = too_few(m, {"n": int(big_b[k])}, {"n": int(big_d[k])})
        if still_open(too_few=thin, low=float(low[k]), high=float(high[k]), margin=margin):
            continue
        above = bool(low[k] > -margin)
        judge += above
        person += not above
    return (judge + person) / reps, judge / reps, person / reps


Shares = Callable[[int, np.random.Generator], tuple[float, float, float]]


def pair_shares(counts: np.ndarray, *, margin: float, level: float, reps: int) -> Shares:
    """Simulated studies of a pairwise category: ``shares(m, rng)``."""
    return lambda m, rng: settled_shares(counts, m, margin=margin, level=level, reps=reps, rng=rng)


def plan_decision(
    name: str,
    n: int,
    shares: Shares,
    row: dict[str, Any] | None,
    *,
    margin: float,
    probability: float,
    max_factor: float,
    seed: int,
    distance: tuple[str, float] | None = None,
) -> DecisionPlan:
    """The plan for one category (or overall) of ``n`` judged items: the share settled now, and the items that
    settle it. ``distance``: the figure the decision turns on and how far it is from its bar (for the words)."""
    cap = max(int(np.ceil(n * max_factor)), n)
    rng = np.random.default_rng(seed)
    now = shares(n, rng) if n >= 2 else (0.0, 0.0, 0.0)
    needed, at = None, now
    # Settled now, or not settled at the cap (not within reach); else bisect the grid between them: the settled
    # share grows with the size, so ~6 sizes are simulated instead of every grid point.
    at_cap = shares(cap, rng) if n >= 2 and now[0] < probability else now
    if n >= 2 and now[0] >= probability:
        needed = n
    elif n >= 2 and at_cap[0] >= probability:
        grid = np.unique(np.round(np.geomspace(n, cap, GRID_POINTS)).astype(int))
        lo, hi, at = 1, len(grid) - 1, at_cap  # grid[0] (n) is not settled, grid[-1] (cap) is
        while lo < hi:
            mid = (lo + hi) // 2
            tried = shares(int(grid[mid]), rng)
            if tried[0] >= probability:
                hi, at = mid, tried
            else:
                lo = mid + 1
        needed = int(grid[hi])
    ruling = row.get("ruling") if row else None
    on_margin = False
    if needed is None:
        at = at_cap
        if n < 2:
            note = f"not within {cap} items: too few judged items ({n}) to simulate from"
        else:
            note = (
                f"not within {cap} items ({max_factor:g} times the {n} now): settled in {at[0]:.0%} of studies of {cap}"
            )
            if distance is not None and abs(distance[1]) < ON_MARGIN:
                on_margin = True
                note += (
                    f"; no number of labels would decide it: {distance[0]} sits on its bar ({distance[1]:+.3f} from "
                    "it), so more labels barely narrow the question; let a person decide"
                )
    elif needed == n:
        note = f"settled now in {now[0]:.0%} of simulated studies of this size"
    else:
        lean = "judge" if at[1] >= at[2] else "person"
        more = needed - n
        items = "1 more item settles" if more == 1 else f"{more} more items settle"
        note = f"about {items} it ({lean}, as the figures stand)"
    return DecisionPlan(
        category=name,
        n_items=n,
        ruling=ruling,
        gap=None if row is None else row.get("gap"),
        settled_now=now[0],
        n_needed=needed,
        n_more=None if needed is None else needed - n,
        settled_at_needed=None if needed is None else at[0],
        judge_share=None if needed is None else at[1],
        person_share=None if needed is None else at[2],
        cap=cap,
        on_margin=on_margin,
        binding=None if distance is None else distance[0],
        distance=None if distance is None else round(distance[1], 3),
        note=note,
    )


def plan_policy(
    data: Any,
    *,
    split: str,
    margin: float,
    probability: float,
    reps: int,
    max_factor: float,
    judges: Sequence[str] | None,
    resamples: int,
    seed: int,
    min_recall: float | None = None,
    threshold: float | None = None,
) -> tuple[str, list[DecisionPlan], float]:
    """Derive the policy as ``policy derive`` does, then plan each category and overall: (judge, plans, level)."""
    from juge.calibration.pairwise import Bootstrap
    from juge.policy.derivation import PairStudyData, derive_policy
    from juge.policy.grades import GradeStudyData

    boot = Bootstrap(n_resamples=resamples, seed=seed)
    if isinstance(data, GradeStudyData):
        return plan_grade_policy(
            data, split=split, margin=margin, min_recall=min_recall, threshold=threshold, probability=probability,
            reps=reps, max_factor=max_factor, judges=judges, boot=boot,
        )  # fmt: skip
    if not isinstance(data, PairStudyData):
        raise InputError("juge plan reads pairwise, PASS/FAIL and score policy studies")
    if min_recall is not None or threshold is not None:
        raise InputError("--min-recall and --threshold apply to PASS/FAIL and score studies, not pairwise ones")
    policy = derive_policy(data, split=split, margin=margin, judges=judges, boot=boot)
    items = data.table().split(split).items
    keys: dict[str, str] = policy["templates_by_category"]
    decide = partial(plan_decision, margin=margin, probability=probability, max_factor=max_factor)
    plans = []
    for k, (category, row) in enumerate(sorted(policy["categories"].items())):
        counts = item_counts([it for it in items if it.category == category], keys)
        gap = row.get("gap")
        distance = None if gap is None else ("agreement", gap + margin)
        shares = pair_shares(counts, margin=margin, level=boot.level, reps=reps)
        plans.append(decide(category, len(counts), shares, row, seed=seed + k, distance=distance))
    counts = item_counts(items, keys)
    shares = pair_shares(counts, margin=margin, level=boot.level, reps=reps)
    plans.append(decide(OVERALL, len(counts), shares, None, seed=seed + len(plans)))
    return policy["judge"], plans, boot.level


def plan_grade_policy(
    data: Any,
    *,
    split: str,
    margin: float,
    min_recall: float | None,
    threshold: float | None,
    probability: float,
    reps: int,
    max_factor: float,
    judges: Sequence[str] | None,
    boot: Any,
) -> tuple[str, list[DecisionPlan], float]:
    """A PASS/FAIL or score policy derived as ``policy derive`` does, then planned per category and overall."""
    from juge.policy.grades import derive_grade_policy
    from juge.policy.plan_grades import grade_counts, grade_distance, grade_settled_shares

    policy = derive_grade_policy(data, split=split, margin=margin, min_recall=min_recall, threshold=threshold,
                                 judges=judges, boot=boot)  # fmt: skip
    items = data.table().split(split).items
    key, kind, scale = policy["judge"], data.kind, policy["scale"]

    def shares_of(counts: np.ndarray) -> Shares:
        return lambda m, rng: grade_settled_shares(counts, m, kind=kind, margin=margin, min_recall=min_recall,
                                                   level=boot.level, reps=reps, rng=rng)  # fmt: skip

    decide = partial(plan_decision, margin=margin, probability=probability, max_factor=max_factor)
    plans = []
    for k, (category, row) in enumerate(sorted(policy["categories"].items())):
        counts = grade_counts([it for it in items if it.category == category], key, kind, scale, policy["threshold"])
        distance = grade_distance(row, margin=margin, min_recall=min_recall)
        plans.append(decide(category, len(counts), shares_of(counts), row, seed=boot.seed + k, distance=distance))
    counts = grade_counts(items, key, kind, scale, policy["threshold"])
    plans.append(decide(OVERALL, len(counts), shares_of(counts), None, seed=boot.seed + len(plans)))
    return key, plans, boot.level


def plan_pass_rate(
    outcomes: Any, human: dict[str, float], categories: dict[str, str], *, width: float, confidence: float
) -> PassRatePlan:
    """Labels for a corrected pass rate's interval of ``width``: labels alone, PPI++, stratified PPI++."""
    from juge.runs.corrected import assemble, labels_for_width, moments, neyman, strata_members

    study = assemble(outcomes, human)
    if len(study.y) < 2:
        from juge.errors import InputError

        raise InputError("juge plan --width needs at least 2 labelled cases of the run to measure variances from")
    f_all = np.concatenate([study.f_labelled, study.f_unlabelled])
    whole = moments(study.y, study.f_labelled, f_all)
    members, _ = strata_members(study, categories)
    names = sorted(members)
    strata = [
        moments(
            study.y[lab],
            study.f_labelled[lab],
            np.concatenate([study.f_labelled[lab], study.f_unlabelled[unl]]),
        )
        for lab, unl in (members[m] for m in names)
    ]
    n_labels = labels_for_width([whole], width, confidence=confidence, method="labels")
    n_ppi = labels_for_width([whole], width, confidence=confidence, method="ppi")
    n_strat = labels_for_width(strata, width, confidence=confidence, method="stratified")
    label_var = whole.var_y
    rectifier_var = float(np.var(study.y - study.f_labelled, ddof=1))
    at = n_ppi if n_ppi is not None else len(study.y)
    ratio = ppi_variance_ratio(whole, at)
    rho = correlation(whole)
    agreement = float(np.mean(1 - np.abs(study.y - study.f_labelled)))
    pass_rate = float(np.mean(study.y))
    return PassRatePlan(
        width=width,
        confidence=confidence,
        n_cases=whole.n_cases,
        n_labelled=len(study.y),
        labels_alone=n_labels,
        ppi=n_ppi,
        stratified=n_strat,
        allocation={} if n_strat is None else dict(zip(names, neyman(strata, n_strat), strict=True)),
        saving_ppi=None if n_labels is None or n_ppi is None else n_labels - n_ppi,
        saving_stratified=None if n_labels is None or n_strat is None else n_labels - n_strat,
        label_variance=label_var,
        rectifier_variance=rectifier_var,
        ppi_helps=ratio is not None and ratio < 1,
        ppi_variance_ratio=ratio,
        ratio_at=at,
        correlation=rho,
        most_saved=None if rho is None or rho**2 >= 1 else 1 / (1 - rho**2),
        agreement=agreement,
        labelled_pass_rate=pass_rate,
        at_the_frontier=agreement <= pass_rate,
    )


def correlation(m: Any) -> float | None:
    """Pearson correlation of people's PASS and the judge's on the labelled cases (None when either is constant)."""
    return None if m.var_y <= 0 or m.var_f <= 0 else float(np.clip(m.cov_yf / np.sqrt(m.var_y * m.var_f), -1, 1))


def ppi_variance_ratio(m: Any, n: int) -> float | None:
    """PPI++'s variance over the labels' alone at ``n`` labels, in finite samples: the variance with lambda tuned
    (:func:`juge.runs.corrected.ppi_variance`) times ``1 + 1 / (n - 3)``, the cost of estimating lambda from the
    same ``n`` labels (Cochran 1977, section 7.9: the regression estimator with an estimated slope). PPI++ helps
    when it is below 1."""
    from juge.runs.corrected import ppi_variance

    if n < 4 or m.var_y <= 0:
        return None
    return float(ppi_variance(m, n)[0] * (1 + 1 / (n - 3)) / (m.var_y / n))


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def pass_rate_notes(plan: PassRatePlan) -> list[str]:
    """The pass-rate plan in words: what no number of labels reaches, and a judge too weak for PPI to help."""
    notes = []
    for what, n in (("labels alone", plan.labels_alone), ("PPI++", plan.ppi), ("stratified PPI++", plan.stratified)):
        if n is None:
            notes.append(f"{what}: not within the run's {plan.n_cases} cases (label them all and the interval is "
                         f"still wider than {plan.width:g})")  # fmt: skip
    if not plan.ppi_helps:
        ratio = "not measurable" if plan.ppi_variance_ratio is None else f"{plan.ppi_variance_ratio:.3f}"
        notes.append(
            f"the judge is too weak for PPI to help: at {plan.ratio_at} labels PPI++'s variance (lambda tuned, plus "
            f"the cost of estimating it from those labels) over the labels' alone is {ratio}, not below 1; "
            f"correlation of person and judge {_num(plan.correlation)}; label them and use the labels alone"
        )
    if plan.most_saved is not None and plan.most_saved > 2 and plan.at_the_frontier:
        notes.append(
            f"PPI++ would save more than half the labels (up to {plan.most_saved:.1f}x), yet the judge agrees with "
            f"people ({plan.agreement:.3f}) no more often than the model passes ({plan.labelled_pass_rate:.3f}): "
            "Dorner, Nastl & Hardt (ICLR 2025) prove no debiasing saves more than half then; the labels in hand are "
            "likely too few to measure the correlation"
        )
    return notes
