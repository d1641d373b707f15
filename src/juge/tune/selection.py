"""Choosing among candidate judges without quoting the figure they were chosen on.

Pure functions over per-group agreement counts (all items of a group, e.g. a question, move
together: folds and bootstrap resamples take groups whole). For candidate ``c`` and dev group
``g``, ``matches[c, g]`` is how many human labels in the group equal the judge's verdict and
``pairs[g]`` how many human labels the group has (a missing verdict matches nothing: fail closed).
A candidate's agreement with each person is ``sum(matches[c]) / sum(pairs)``.

Three figures come out of a tuning round:

- **in-sample**: the chosen candidate's agreement on all of dev, the data it was chosen on, with
  the usual interval. This is the figure tools that tune on their labels quote; it is optimistic
  (the winner's curse), and its interval ignores the choice.
- **out-of-fold**: cross-fitting over K folds of dev groups. For each fold k the selection rule is
  applied to the other K-1 folds and the candidate it picks is scored on fold k; the pooled fold
  scores estimate how the *procedure* does on groups it did not see. Its interval bootstraps the
  whole procedure (resample groups, redo every fold's choice), because the folds' choices are
  correlated and a bootstrap of fixed out-of-fold scores is too narrow.
- **optimism**: in-sample minus out-of-fold.

Few-shot examples and rubric proposals are made per fold from the other folds (see
:mod:`juge.tune.variants`), so a verdict on a group never rests on that group's labels.

The selection rule: take the best agreement; choose the cheapest candidate whose paired, clustered
bootstrap difference to the best has an interval that reaches 0 (within noise of the best).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from juge.stats import Estimate, paired_ratio_difference, percentile_interval, ratio_estimate

Rule = Callable[["Table", np.ndarray], int]


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


@dataclass(frozen=True)
class Table:
    """Per-group counts of every candidate, the groups' folds and each candidate's cost per item."""

    names: list[str]
    matches: np.ndarray  # candidates x groups
    pairs: np.ndarray  # groups
    folds: np.ndarray  # groups
    cost: np.ndarray  # candidates

    @classmethod
    def from_items(
        cls,
        names: Sequence[str],
        matches: Mapping[str, Sequence[float]],
        pairs: Sequence[float],
        groups: Sequence[str],
        folds: dict[str, int],
        cost: dict[str, float],
    ) -> Table:
        """Sum per-item counts into their groups (items aligned across `matches`, `pairs`, `groups`)."""
        unique = sorted(set(groups))
        index = np.array([unique.index(g) for g in groups], dtype=int) if groups else np.zeros(0, dtype=int)

        def per_group(values: Sequence[float]) -> np.ndarray:
            out = np.zeros(len(unique))
            np.add.at(out, index, np.asarray(values, dtype=float))
            return out

        return cls(
            list(names),
            np.array([per_group(matches[n]) for n in names]).reshape(len(names), len(unique)),
            per_group(pairs),
            np.array([folds[g] for g in unique], dtype=int),
            np.array([cost[n] for n in names], dtype=float),
        )

    @property
    def all(self) -> np.ndarray:
        return np.arange(self.pairs.size)

    def agreement(self, c: int, idx: np.ndarray) -> float:
        total = self.pairs[idx].sum()
        return float(self.matches[c, idx].sum() / total) if total else 0.0


def best_rule(table: Table, idx: np.ndarray) -> int:
    """The candidate with the highest agreement on groups `idx` (ties: the first listed)."""
    pairs = table.pairs[idx].sum()
    scores = table.matches[:, idx].sum(axis=1) / pairs if pairs else np.zeros(len(table.names))
    return int(np.argmax(scores))


def cheapest_within_noise_rule(n_resamples: int = 200, seed: int = 0, level: float = 0.95) -> Rule:
    """The cheapest candidate whose paired difference to the best has an interval reaching 0."""

    def rule(table: Table, idx: np.ndarray) -> int:
        best = best_rule(table, idx)
        p = table.pairs[idx]
        near = [best]
        for c in range(len(table.names)):
            if c != best:
                diff = paired_ratio_difference(
                    table.matches[c, idx], p, table.matches[best, idx], p,
                    n_resamples=n_resamples, seed=seed, level=level,
                )  # fmt: skip
                if diff.high is not None and diff.high >= 0:
                    near.append(c)
        return min(near, key=lambda c: (table.cost[c], c))

    return rule


def out_of_fold(table: Table, rule: Rule, idx: np.ndarray | None = None) -> tuple[float, list[int]]:
    """Cross-fitted agreement of `rule` on groups `idx` (a multiset: a bootstrap resample may repeat
    a group, and a repeated group stays in its fold), and the candidate chosen for each fold."""
    idx = table.all if idx is None else idx
    hits = total = 0.0
    chosen = []
    for k in range(int(table.folds.max()) + 1):
        held, train = idx[table.folds[idx] == k], idx[table.folds[idx] != k]
        if held.size == 0 or train.size == 0:
            chosen.append(-1)
            continue
        c = rule(table, train)
        chosen.append(c)
        hits += table.matches[c, held].sum()
        total += table.pairs[held].sum()
    return (hits / total if total else float("nan")), chosen


def out_of_fold_estimate(
    table: Table, rule: Rule, *, n_resamples: int = 400, seed: int = 0, level: float = 0.95
) -> tuple[Estimate, list[int]]:
    """:func:`out_of_fold` with a percentile interval from resampling groups and redoing the whole
    procedure (every fold's choice) in each resample."""
    value, chosen = out_of_fold(table, rule)
    rng = np.random.default_rng(seed)
    g = table.pairs.size
    draws = np.array([out_of_fold(table, rule, rng.integers(0, g, g))[0] for _ in range(n_resamples)])
    low, high = percentile_interval(draws[np.isfinite(draws)], level=level)
    return Estimate(float(value), low, high, n=int(table.pairs.sum()), n_items=g), chosen


@dataclass(frozen=True)
class Ranked:
    name: str
    agreement: Estimate
    difference_to_best: Estimate | None  # None for the best itself
    within_noise: bool
    cost: float


def rank(table: Table, *, n_resamples: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[list[Ranked], int, int]:
    """Every candidate's agreement on all dev groups and its paired difference to the best; returns
    (rows, best, chosen), `chosen` by the cheapest-within-noise rule at the same settings."""
    idx = table.all
    best = best_rule(table, idx)
    rows = []
    for c, name in enumerate(table.names):
        est = ratio_estimate(table.matches[c], table.pairs, n_resamples=n_resamples, seed=seed, level=level)
        if c == best:
            rows.append(Ranked(name, est, None, True, float(table.cost[c])))
            continue
        diff = paired_ratio_difference(
            table.matches[c], table.pairs, table.matches[best], table.pairs,
            n_resamples=n_resamples, seed=seed, level=level,
        )  # fmt: skip
        rows.append(Ranked(name, est, diff, diff.high is not None and diff.high >= 0, float(table.cost[c])))
    chosen = min((c for c, r in enumerate(rows) if r.within_noise), key=lambda c: (table.cost[c], c))
    return rows, best, chosen
