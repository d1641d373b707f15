"""The figures of a drift study, from verdicts and votes alone (no I/O, no model): what the simulation tests drive.

For each anchor item ``i`` with ``m_i`` human votes, ``a_i`` of them equal to the old judge's verdict and ``b_i``
to the new judge's (a missing verdict agrees with nobody: fail closed):

- agreement with people, per judge: the pooled ratio ``sum a_i / sum m_i`` (judge vs each person, as calibrate);
- the paired difference ``sum b_i / sum m_i - sum a_i / sum m_i`` (new minus old), its interval from the clustered
  bootstrap over items (:func:`juge.stats.paired_ratio_difference`: both judges are recomputed on the same
  resampled items, so an item's difficulty cancels);
- the share of items whose verdict changed, with its interval.

Conclusion: ``too few items`` below ``min_items`` labelled items (or no interval); ``moved`` when the paired
interval excludes 0 (``better`` or ``worse``); else ``within noise``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from juge.stats import paired_ratio_difference, ratio_estimate
from juge.stats.estimate import Estimate

Conclusion = Literal["moved", "within noise", "too few items"]
MIN_ITEMS = 30


@dataclass(frozen=True)
class DriftFigures:
    """Agreement of each judge with people, their paired difference, the verdict changes, the conclusion."""

    items: list[str]
    changed: list[str]
    agreement_old: Estimate
    agreement_new: Estimate
    difference: Estimate
    changed_share: Estimate
    conclusion: Conclusion
    direction: Literal["better", "worse"] | None
    reason: str


def drift_figures(
    old: Mapping[str, Hashable | None],
    new: Mapping[str, Hashable | None],
    votes: Mapping[str, Sequence[Hashable]],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    min_items: int = MIN_ITEMS,
) -> DriftFigures:
    """The drift figures over the items with at least one vote (``votes``: item id -> the people's labels);
    ``old`` and ``new``: item id -> the judge's verdict in the labels' terms (None or absent: no verdict)."""
    items = sorted(i for i, v in votes.items() if len(v))
    den = np.array([len(votes[i]) for i in items], dtype=float)
    a = np.array([_agreeing(old.get(i), votes[i]) for i in items], dtype=float)
    b = np.array([_agreeing(new.get(i), votes[i]) for i in items], dtype=float)
    changed = [i for i in items if old.get(i) != new.get(i)]
    flags = np.array([i in set(changed) for i in items], dtype=float)
    agreement_old = ratio_estimate(a, den, n_resamples=n_resamples, seed=seed, level=level)
    agreement_new = ratio_estimate(b, den, n_resamples=n_resamples, seed=seed, level=level)
    difference = paired_ratio_difference(b, den, a, den, n_resamples=n_resamples, seed=seed, level=level)
    share = ratio_estimate(flags, np.ones(len(items)), n_resamples=n_resamples, seed=seed, level=level)
    conclusion, direction, reason = _conclude(difference, len(items), min_items)
    return DriftFigures(items, changed, agreement_old, agreement_new, difference, share, conclusion, direction, reason)


def _agreeing(verdict: Hashable | None, labels: Sequence[Hashable]) -> int:
    return 0 if verdict is None else sum(label == verdict for label in labels)


def _conclude(
    difference: Estimate, n_items: int, min_items: int
) -> tuple[Conclusion, Literal["better", "worse"] | None, str]:
    if n_items < min_items or difference.low is None or difference.high is None:
        return "too few items", None, f"{n_items} labelled anchor items; at least {min_items} are needed to decide"
    if difference.low > 0 or difference.high < 0:
        direction: Literal["better", "worse"] = "better" if difference.low > 0 else "worse"
        return (
            "moved",
            direction,
            (
                f"the new judge agrees with people {direction} than the old one: the paired interval "
                f"[{difference.low:+.3f}, {difference.high:+.3f}] excludes 0"
            ),
        )
    return (
        "within noise",
        None,
        (
            f"the paired interval [{difference.low:+.3f}, {difference.high:+.3f}] contains 0: no change in agreement "
            "with people that these items can tell"
        ),
    )
