"""Selective judging with a stated guarantee: the fixed-sequence threshold of "Trust or Escalate".

Jung, Brahman & Choi, "Trust or Escalate: LLM Judges with Provable Guarantees for
Human Agreement" (2024, arXiv:2407.18370). Each item gets a judge confidence ``c``.
The judge decides alone the items with ``c >= t``; the rest go to a person. We want
``P(judge disagrees with the human majority | c >= t) <= alpha`` (``alpha = 1 - target``)
to hold with probability at least ``confidence`` over the draw of the dev items.

Fixed-sequence testing (Bates et al. 2021, "Distribution-free, risk-controlling
prediction sets", for the general scheme): walk the candidate thresholds (the distinct
confidences seen on dev) from the highest down. At each ``t`` take the ``n`` dev items
with ``c >= t`` and their ``k`` disagreements, and compute the exact one-sided
Clopper-Pearson upper bound ``U(k, n)`` at the confidence level. While
``U <= alpha`` the threshold is accepted and the walk goes on; the first ``t`` with
``U > alpha`` stops it. The chosen threshold is the last accepted one (the lowest);
if the highest already fails, no item may be judged alone. ``U <= alpha`` is the same
as the exact binomial test ``P(Bin(n, alpha) <= k) <= 1 - confidence`` rejecting
"risk > alpha", and testing in a fixed order needs no multiplicity correction.

Only items the judge could decide alone are calibration items: one whose two orders disagree,
or with no verdict, always goes to a person, so it is left out of the walk (the caller's job).
On the holdout the guarantee is checked on the items the policy actually routed to the judge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from juge.data.records import Judgment, RecordedCall
from juge.stats import binomial_upper_bound, clopper_pearson

_LETTER_FOR = {"12": {"A": "A", "B": "B", "tie": "C"}, "21": {"A": "B", "B": "A", "tie": "C"}}


@dataclass
class Step:
    """One threshold tested on the way down."""

    threshold: float
    n: int
    disagreements: int
    upper_bound: float
    accepted: bool


@dataclass
class GuaranteeThreshold:
    """The chosen threshold (None: every item goes to a person) and what it buys on dev."""

    threshold: float | None
    target: float
    confidence: float
    n_items: int
    n_covered: int
    disagreements: int
    upper_bound: float | None
    steps: list[Step] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        """Share of the calibration items the judge decides alone."""
        return self.n_covered / self.n_items if self.n_items else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "coverage": self.coverage}


def fixed_sequence_threshold(
    confidences: Iterable[float], disagrees: Iterable[bool], *, target: float = 0.9, confidence: float = 0.9
) -> GuaranteeThreshold:
    """Lowest threshold, tested from the top down, whose disagreement upper bound stays within 1 - target.

    ``confidences[i]`` is the judge's confidence on dev item ``i`` and ``disagrees[i]``
    whether its verdict differs from the human majority (items without a majority or
    without a verdict must be left out by the caller).
    """
    if not 0 < target < 1 or not 0 < confidence < 1:
        raise ValueError(f"target and confidence must be between 0 and 1, got {target} and {confidence}")
    c = np.asarray(list(confidences), float)
    d = np.asarray(list(disagrees), bool)
    if c.shape != d.shape:
        raise ValueError("one confidence per disagreement flag")
    alpha = 1 - target
    result = GuaranteeThreshold(None, target, confidence, int(c.size), 0, 0, None)
    for t in np.unique(c)[::-1]:
        above = c >= t
        n, k = int(above.sum()), int(d[above].sum())
        bound = binomial_upper_bound(k, n, confidence=confidence)
        accepted = bound <= alpha
        result.steps.append(Step(float(t), n, k, bound, accepted))
        if not accepted:
            break
        result.threshold, result.n_covered, result.disagreements, result.upper_bound = float(t), n, k, bound
    return result


def guarantee_block(
    confidences: Sequence[float | None],
    disagrees: Sequence[bool | None],
    *,
    target: float,
    confidence: float,
    source: str,
    repeats: int | None = None,
) -> dict[str, Any]:
    """Rule 6 on dev for any judge kind: the fixed-sequence walk and what it covers.

    ``confidences[i]``: the judge's confidence on dev item ``i`` (None: it may never decide the item alone: no
    verdict, or a pair's orders disagree); ``disagrees[i]``: its verdict differs from the human majority (None:
    no majority, or no verdict). The walk reads the items with both; coverage is over all dev items
    (``n_covered``: a confidence at or above the threshold, with or without a majority). ``repeats``: the calls
    per item (and order) the confidences read (:func:`juge.policy.confidence.repeats_on`).
    """
    rated = [(c, w) for c, w in zip(confidences, disagrees) if c is not None and w is not None]
    walk = fixed_sequence_threshold(
        [c for c, _ in rated], [w for _, w in rated], target=target, confidence=confidence
    ).to_dict()
    threshold = walk["threshold"]
    n_covered = 0 if threshold is None else sum(c is not None and c >= threshold for c in confidences)
    n = len(confidences)
    return {
        **walk,
        "n_calibration": walk["n_items"],
        "n_calibration_covered": walk["n_covered"],
        "n_items": n,
        "n_covered": n_covered,
        "coverage": n_covered / n if n else 0.0,
        "coverage_denominator": "all dev items (missing, inconsistent and no-majority ones included)",
        "confidence_source": source,
        "repeats": repeats,
    }


def check_on_holdout(
    threshold: float | None,
    decided: Iterable[bool],
    disagrees: Iterable[bool | None],
    *,
    target: float,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Did the guarantee hold on new items: the disagreement rate on the items the judge decided alone.

    ``decided[i]``: the policy routed item ``i`` to the judge (consistent verdict, confidence at or above
    the threshold); ``disagrees[i]``: its verdict differs from the human majority (None: no majority, left
    out of the rate). Reports the rate with a two-sided Clopper-Pearson interval, ``held`` = rate <= 1 - target,
    and the coverage over all items (``n_covered / n_items``).
    """
    decided_ = np.asarray(list(decided), bool)
    wrong = list(disagrees)
    if len(wrong) != decided_.size:
        raise ValueError("one disagreement flag (or None) per item")
    rated = [w for w, dec in zip(wrong, decided_) if dec and w is not None]
    n, k = len(rated), int(sum(rated))
    low, high = clopper_pearson(k, n, confidence=confidence) if n else (None, None)
    rate = k / n if n else None
    n_covered = int(decided_.sum())
    return {
        "threshold": threshold,
        "n_items": int(decided_.size),
        "n_covered": n_covered,
        "coverage": n_covered / decided_.size if decided_.size else 0.0,
        "n_covered_without_majority": n_covered - n,
        "disagreement": {"value": rate, "low": low, "high": high, "n": n},
        "allowed_disagreement": round(1 - target, 10),
        "held": None if rate is None else rate <= 1 - target,
    }


def pair_confidence(verdict: str | None, calls: Iterable[Judgment | RecordedCall]) -> float:
    """The judge's confidence in a pairwise verdict, from all its calls on the item (both orders, repeats).

    Each call scores the probability it gave the verdict's letter in its order: from the
    provider's distribution over letters (log-probabilities) when recorded, else 1 if the
    letter it wrote maps to the verdict and 0 if not (or if it has no letter). The
    confidence is the mean over calls; an inconsistent or missing verdict has confidence 0.
    With one call per order and no distribution this is 1 for a consistent verdict.
    """
    if verdict not in ("A", "B", "tie"):
        return 0.0
    scores = []
    for j in calls:
        if j.order not in _LETTER_FOR:
            continue
        wanted = _LETTER_FOR[j.order][verdict]
        if j.distribution:
            total = sum(j.distribution.values())
            scores.append(j.distribution.get(wanted, 0.0) / total if total > 0 else 0.0)
        else:
            scores.append(1.0 if j.outcome == "ok" and j.verdict == wanted else 0.0)
    return float(np.mean(scores)) if scores else 0.0
