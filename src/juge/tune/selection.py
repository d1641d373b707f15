"""Choosing among candidate judges without quoting the figure they were chosen on.

Pure functions over per-group confusion tables (all items of a group, e.g. a question, move together:
folds and bootstrap resamples take groups whole). For candidate ``c`` and dev group ``g``,
``counts[c, g]`` is the table of the judge's verdict (rows, in ``labels`` order, the last row for no
verdict) against each human label (columns, same order; nobody labels "no verdict"), pooled over the
group's items: a missing verdict agrees with nobody (fail closed) and is a verdict of its own for kappa.

What "better" means is :mod:`juge.calibration.better`'s rule, the one calibrate and policy derive use:
for PASS/FAIL (and a score judge at a threshold) Cohen's kappa with each person, and a candidate that
catches fewer failures than one person catches of another's never wins; for pairwise, agreement with
each person.

Three figures come out of a tuning round, all in that measure:

- **in-sample**: the chosen candidate's figure on all of dev, the data it was chosen on, with the usual
  interval. This is the figure tools that tune on their labels quote; it is optimistic (the winner's
  curse), and its interval ignores the choice.
- **out-of-fold**: cross-fitting over K folds of dev groups. For each fold k the selection rule is
  applied to the other K-1 folds and the candidate it picks is scored on fold k; the held folds' tables
  are pooled into one figure, an estimate of how the *procedure* does on groups it did not see. Its
  interval bootstraps the whole procedure (resample groups, redo every fold's choice), because the
  folds' choices are correlated and a bootstrap of fixed out-of-fold scores is too narrow.
- **optimism**: in-sample minus out-of-fold.

Few-shot examples and rubric proposals are made per fold from the other folds (see
:mod:`juge.tune.variants`), so a verdict on a group never rests on that group's labels.

The selection rule: take the better candidate by the rule; choose the cheapest candidate whose paired,
clustered bootstrap difference to it has an interval that reaches 0 (within noise of the best) and that
is of the best's tier (catches enough failures, or any, whenever the best does).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from juge.calibration.better import Merit, measure, order_of, rank_keys
from juge.stats import Estimate, kappa_estimate, kappa_from_tables, percentile_interval, ratio_estimate
from juge.stats.bootstrap import resampled_totals

Rule = Callable[["Table", np.ndarray], int]
MISSING = "(no verdict)"


def group_folds(groups: Sequence[str], k: int, seed: int = 0) -> dict[str, int]:
    """The fold (0..k-1) of each group: groups are shuffled with `seed` and dealt round-robin, so
    fold sizes in groups differ by at most one."""
    unique = sorted(set(groups))
    if k < 2:
        raise ValueError("cross-fitting needs at least 2 folds")
    if len(unique) < 2 * k:
        raise ValueError(
            f"{len(unique)} labelled dev groups are too few for {k} folds (at least 2 per fold, {2 * k}): "
            "give fewer --folds, a larger --limit, or label more groups"
        )
    order = np.random.default_rng(seed).permutation(len(unique))
    return {unique[g]: n % k for n, g in enumerate(order)}


def figure(tables: np.ndarray, name: str, labels: Sequence[str]) -> np.ndarray:
    """`name` (``agreement``, ``kappa``, ``failures_caught``, ``false_flags``) of pooled tables of shape
    ``(..., K, K)``; NaN where undefined."""
    t = np.asarray(tables, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        if name == "agreement":
            return np.trace(t, axis1=-2, axis2=-1) / t.sum(axis=(-2, -1))  # 0/0 is NaN
        if name == "kappa":
            return kappa_from_tables(t)
        fail, passed = labels.index("FAIL"), labels.index("PASS")
        human = fail if name == "failures_caught" else passed
        said = t[..., fail, human]
        total = t[..., :, human].sum(axis=-1)
        return np.where(total > 0, said / np.where(total > 0, total, 1), np.nan)


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


@dataclass(frozen=True)
class Table:
    """Per-group confusion tables of every candidate, the people's own failures caught per group, the
    groups' folds and each candidate's cost per item."""

    names: list[str]
    kind: str  # "passfail" (a score judge at a threshold too) or "pairwise"
    labels: list[str]  # the human labels in order, then MISSING
    counts: np.ndarray  # candidates x groups x K x K
    people_caught: np.ndarray  # groups x 2: (FAIL votes of one person the other also called FAIL, FAIL votes)
    folds: np.ndarray  # groups
    cost: np.ndarray  # candidates

    @classmethod
    def from_items(
        cls,
        kind: str,
        labels: Sequence[str],
        names: Sequence[str],
        verdicts: Mapping[str, Sequence[str | None]],
        votes: Sequence[Sequence[str]],
        groups: Sequence[str],
        folds: dict[str, int],
        cost: dict[str, float],
    ) -> Table:
        """Pool per-item verdicts (None: no verdict) against the items' human votes into their groups
        (items aligned across `verdicts`, `votes` and `groups`)."""
        order = [*labels, MISSING]
        k = len(order)
        unique = sorted(set(groups))
        where = {g: n for n, g in enumerate(unique)}
        counts = np.zeros((len(names), len(unique), k, k))
        people = np.zeros((len(unique), 2))
        for i, (labs, g) in enumerate(zip(votes, groups)):
            for c, name in enumerate(names):
                said = verdicts[name][i]
                row = order.index(MISSING if said is None else said)
                for lab in labs:
                    counts[c, where[g], row, order.index(lab)] += 1
            if kind == "passfail":
                ordered = [(a, b) for x, a in enumerate(labs) for y, b in enumerate(labs) if x != y]
                people[where[g]] += [sum(a == b == "FAIL" for a, b in ordered), sum(b == "FAIL" for _, b in ordered)]
        return cls(
            list(names), kind, order, counts, people,
            np.array([folds[g] for g in unique], dtype=int), np.array([cost[n] for n in names], dtype=float),
        )  # fmt: skip

    @property
    def all(self) -> np.ndarray:
        return np.arange(self.folds.size)

    @property
    def measure(self) -> str:
        return measure(self.kind)

    def pooled(self, c: int, idx: np.ndarray) -> np.ndarray:
        return self.counts[c, idx].sum(axis=0)

    def value(self, c: int, idx: np.ndarray, name: str | None = None) -> float | None:
        """Candidate `c`'s figure (the measure by default) on groups `idx`."""
        return _finite(float(figure(self.pooled(c, idx), name or self.measure, self.labels)))

    def bar(self, idx: np.ndarray) -> float | None:
        """What one person catches of another's FAIL votes on groups `idx` (None: not measurable)."""
        k, n = self.people_caught[idx].sum(axis=0)
        return float(k / n) if n else None

    def merit(self, c: int, idx: np.ndarray) -> Merit:
        return self.merits(idx)[c]

    def merits(self, idx: np.ndarray) -> list[Merit]:
        """What the rule reads of every candidate on groups `idx` (one pass over the pooled tables)."""
        pooled = self.counts[:, idx].sum(axis=1)
        passfail = self.kind == "passfail"
        values = figure(pooled, self.measure, self.labels)
        agreements = figure(pooled, "agreement", self.labels)
        caught = figure(pooled, "failures_caught", self.labels) if passfail else np.full(len(self.names), np.nan)
        bar = self.bar(idx) if passfail else None
        return [Merit(_finite(v), _finite(a), _finite(k), bar, passfail) for v, a, k in zip(values, agreements, caught)]


def best_rule(table: Table, idx: np.ndarray) -> int:
    """The better candidate on groups `idx` by :func:`juge.calibration.better.best` (ties: the first listed)."""
    pooled = table.counts[:, idx].sum(axis=1)
    agreements = figure(pooled, "agreement", table.labels)
    measure = agreements if table.measure == "agreement" else figure(pooled, table.measure, table.labels)
    if table.kind != "passfail":
        return order_of(rank_keys(measure, agreements))[0]
    caught = figure(pooled, "failures_caught", table.labels)
    return order_of(rank_keys(measure, agreements, caught, table.bar(idx)))[0]


def paired_difference(
    table: Table, a: int, b: int, idx: np.ndarray, *, n_resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> Estimate:
    """Candidate `a`'s measure minus `b`'s on groups `idx`, with a paired interval: both are recomputed
    on the same resampled groups (their tables resampled as one vector per group)."""
    ta, tb = table.counts[a, idx], table.counts[b, idx]
    g, k = ta.shape[0], ta.shape[1]
    value = figure(ta.sum(axis=0), table.measure, table.labels) - figure(tb.sum(axis=0), table.measure, table.labels)
    joint = np.concatenate([ta.reshape(g, k * k), tb.reshape(g, k * k)], axis=1)
    totals = resampled_totals(joint, n_resamples=n_resamples, seed=seed)
    resampled = figure(totals[:, : k * k].reshape(-1, k, k), table.measure, table.labels) - figure(
        totals[:, k * k :].reshape(-1, k, k), table.measure, table.labels
    )
    low, high = percentile_interval(resampled, level=level)
    n = int(round(min(ta.sum(), tb.sum())))
    return Estimate(_finite(float(value)), low, high, n=n, n_items=g)


def _near(table: Table, c: int, top: int, idx: np.ndarray, diff: Estimate) -> bool:
    """Within noise of the best, and of the best's tier (catching enough failures, or any, when it does)."""
    merits = table.merits(idx)
    return diff.high is not None and diff.high >= 0 and merits[c].tier >= merits[top].tier


def cheapest_within_noise_rule(n_resamples: int = 200, seed: int = 0, level: float = 0.95) -> Rule:
    """The cheapest candidate within noise of the best (see :func:`_near`)."""

    def rule(table: Table, idx: np.ndarray) -> int:
        top = best_rule(table, idx)
        near = [top]
        for c in range(len(table.names)):
            if c != top:
                diff = paired_difference(table, c, top, idx, n_resamples=n_resamples, seed=seed, level=level)
                if _near(table, c, top, idx, diff):
                    near.append(c)
        return min(near, key=lambda c: (table.cost[c], c))

    return rule


def out_of_fold(table: Table, rule: Rule, idx: np.ndarray | None = None) -> tuple[float, list[int]]:
    """Cross-fitted measure of `rule` on groups `idx` (a multiset: a bootstrap resample may repeat a
    group, and a repeated group stays in its fold): the held folds' tables of the candidate chosen on
    the other folds, pooled; and the candidate chosen for each fold."""
    idx = table.all if idx is None else idx
    k = table.counts.shape[-1]
    pooled = np.zeros((k, k))
    chosen = []
    for fold in range(int(table.folds.max()) + 1):
        held, train = idx[table.folds[idx] == fold], idx[table.folds[idx] != fold]
        if held.size == 0 or train.size == 0:
            chosen.append(-1)
            continue
        c = rule(table, train)
        chosen.append(c)
        pooled += table.pooled(c, held)
    return float(figure(pooled, table.measure, table.labels)), chosen


def out_of_fold_estimate(
    table: Table, rule: Rule, *, n_resamples: int = 400, seed: int = 0, level: float = 0.95
) -> tuple[Estimate, list[int]]:
    """:func:`out_of_fold` with a percentile interval from resampling groups and redoing the whole
    procedure (every fold's choice) in each resample."""
    value, chosen = out_of_fold(table, rule)
    rng = np.random.default_rng(seed)
    g = table.folds.size
    draws = np.array([out_of_fold(table, rule, rng.integers(0, g, g))[0] for _ in range(n_resamples)])
    low, high = percentile_interval(draws[np.isfinite(draws)], level=level)
    n = int(table.counts[0].sum()) if len(table.names) else 0
    return Estimate(_finite(value), low, high, n=n, n_items=g), chosen


def estimates(
    tables: np.ndarray, kind: str, labels: Sequence[str], *, n_resamples: int = 2000, seed: int = 0
) -> dict[str, Estimate | tuple[int, int, Estimate]]:
    """Every figure of per-group tables ``(groups, K, K)``: agreement and kappa with their intervals,
    and for PASS/FAIL failures caught and false flags as (k, n, rate)."""
    diagonal = np.trace(tables, axis1=-2, axis2=-1)
    out: dict[str, Estimate | tuple[int, int, Estimate]] = {
        "agreement": ratio_estimate(diagonal, tables.sum(axis=(-2, -1)), n_resamples=n_resamples, seed=seed),
        "kappa": kappa_estimate(tables, n_resamples=n_resamples, seed=seed),
    }
    if kind == "passfail":
        fail, passed = labels.index("FAIL"), labels.index("PASS")
        for name, human in (("failures_caught", fail), ("false_flags", passed)):
            k, n = tables[:, fail, human], tables[:, :, human].sum(axis=-1)
            out[name] = (int(k.sum()), int(n.sum()), ratio_estimate(k, n, n_resamples=n_resamples, seed=seed))
    return out


@dataclass(frozen=True)
class Ranked:
    name: str
    value: Estimate  # the measure (kappa, or agreement for pairwise)
    figures: dict[str, Estimate | tuple[int, int, Estimate]]
    difference_to_best: Estimate | None  # None for the best itself
    within_noise: bool
    enough: bool  # catches enough failures (always True for pairwise)
    tier: tuple[bool, bool]  # see juge.calibration.better.Merit.tier
    cost: float


def rank(table: Table, *, n_resamples: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[list[Ranked], int, int]:
    """Every candidate's figures on all dev groups and its paired difference to the best; returns
    (rows, best, chosen), `chosen` by the cheapest-within-noise rule at the same settings."""
    idx = table.all
    top = best_rule(table, idx)
    rows = []
    for c, name in enumerate(table.names):
        figures = estimates(table.counts[c], table.kind, table.labels, n_resamples=n_resamples, seed=seed)
        value = figures[table.measure]
        assert isinstance(value, Estimate)
        merit, cost = table.merit(c, idx), float(table.cost[c])
        if c == top:
            rows.append(Ranked(name, value, figures, None, True, merit.enough, merit.tier, cost))
            continue
        diff = paired_difference(table, c, top, idx, n_resamples=n_resamples, seed=seed, level=level)
        rows.append(Ranked(name, value, figures, diff, _near(table, c, top, idx, diff), merit.enough, merit.tier, cost))
    chosen = min((c for c, r in enumerate(rows) if r.within_noise), key=lambda c: (table.cost[c], c))
    return rows, top, chosen
