"""What "better" means, one rule per judge kind: read by calibrate's headline, policy derive's judge
choice and ``juge tune``'s ranking, so the three never disagree on which judge is the better one.

- **PASS/FAIL**: Cohen's kappa with each person, never raw agreement alone (a judge that says PASS to
  almost everything agrees with people on most items of an easy set and has a kappa near 0). Beside it,
  *failures caught* (the share of human FAIL votes the judge calls FAIL) and *false flags* (the share
  of human PASS votes it calls FAIL). A candidate that catches fewer failures than one person catches
  of another's (the bar, over ordered pairs of raters) never wins over one that reaches the bar, and
  one that catches none at all when people said FAIL never wins over one that catches some.
- **scores**: the quadratic-weighted kappa with each person (a study may read its correlation instead).
- **pairwise**: agreement with each person.

Figures are compared as printed (3 decimals); ties go to agreement, then to the order given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

JudgeKind = Literal["passfail", "score", "pairwise"]

#: The figure that ranks judges of each kind (a key of the study's figures).
MEASURE: dict[str, str] = {"passfail": "kappa", "score": "weighted_kappa", "pairwise": "agreement"}

#: The same in words, for readers.
MEASURE_WORDS: dict[str, str] = {
    "kappa": "Cohen's kappa with each person",
    "weighted_kappa": "quadratic-weighted kappa with each person",
    "agreement": "agreement with each person",
}

DIGITS = 3


def measure(kind: str) -> str:
    """The figure that says which judge of `kind` is better (``kappa``, ``weighted_kappa``, ``agreement``)."""
    return MEASURE["score" if kind not in MEASURE else kind]


def _printed(value: float | None) -> float | None:
    return None if value is None else round(float(value), DIGITS)


def catches_enough(caught: float | None, bar: float | None) -> bool:
    """Whether a PASS/FAIL judge catches enough failures: at least what one person catches of another's
    (``bar``), and at least one failure whenever people said FAIL. ``caught`` is None when people said
    no FAIL (nothing to catch: enough); ``bar`` is None when no two people rated an item one of them
    called FAIL (then only "at least one" holds)."""
    enough, _ = tiers(np.array([np.nan if caught is None else caught]), bar, passfail=True)
    return bool(enough[0])


def tiers(caught: np.ndarray, bar: float | None, *, passfail: bool) -> tuple[np.ndarray, np.ndarray]:
    """(catches enough failures, catches any) per candidate, from each one's failures caught (NaN: people
    said no FAIL, nothing to catch). A candidate of a lower tier never wins over a higher one, whatever
    its measure, so a judge that says PASS to everything never wins where people said FAIL."""
    caught = np.asarray(caught, dtype=float)
    if not passfail:
        ones = np.ones(caught.shape, dtype=bool)
        return ones, ones
    got = np.round(caught, DIGITS)
    nothing = np.isnan(got)
    some = nothing | (got > 0)
    reaches = nothing | (got >= (np.round(bar, DIGITS) if bar is not None else 0.0))
    return some & reaches, some


def rank_keys(
    values: Sequence[float | None] | np.ndarray,
    agreements: Sequence[float | None] | np.ndarray,
    caught: Sequence[float | None] | np.ndarray | None = None,
    bar: float | None = None,
) -> np.ndarray:
    """One row per candidate, larger is better column by column: catches enough failures, catches any
    (PASS/FAIL, when `caught` is given), the measure and agreement as printed (undefined: -2)."""

    def printed(x: Sequence[float | None] | np.ndarray) -> np.ndarray:
        a = np.round(np.asarray(x, dtype=float), DIGITS)  # None is NaN
        a[np.isnan(a)] = -2.0
        return a

    value = printed(values)
    if caught is None:
        enough = some = np.ones(value.shape, dtype=bool)
    else:
        enough, some = tiers(np.asarray(caught, dtype=float), bar, passfail=True)
    return np.stack([enough, some, value, printed(agreements)], axis=1).astype(float)


def order_of(keys: np.ndarray) -> list[int]:
    """Candidate indices, better first; ties keep the order given."""
    return np.lexsort((np.arange(len(keys)), *(-keys.T[::-1]))).tolist()


@dataclass(frozen=True)
class Merit:
    """What the rule reads of one candidate: its measure (kappa, weighted kappa or agreement), its
    agreement (ties), and for PASS/FAIL its failures caught and the people's bar."""

    value: float | None
    agreement: float | None = None
    caught: float | None = None
    bar: float | None = None
    passfail: bool = False

    @property
    def enough(self) -> bool:
        return catches_enough(self.caught, self.bar) if self.passfail else True

    @property
    def tier(self) -> tuple[bool, bool]:
        """(catches enough failures, catches any): see :func:`tiers`."""
        enough, some = tiers(np.array([np.nan if self.caught is None else self.caught]), self.bar,
                             passfail=self.passfail)  # fmt: skip
        return bool(enough[0]), bool(some[0])


def _keys(merits: Sequence[Merit]) -> np.ndarray:
    passfail = any(m.passfail for m in merits)
    bar = next((m.bar for m in merits if m.bar is not None), None)
    return rank_keys(
        [m.value for m in merits], [m.agreement for m in merits], [m.caught for m in merits] if passfail else None, bar
    )


def best(merits: Sequence[Merit]) -> int:
    """The index of the better candidate (ties: the first listed)."""
    if not merits:
        raise ValueError("no candidate to choose from")
    return order_of(_keys(merits))[0]


def order(merits: Sequence[Merit]) -> list[int]:
    """Candidate indices, better first (ties keep the order given)."""
    return order_of(_keys(merits)) if merits else []
