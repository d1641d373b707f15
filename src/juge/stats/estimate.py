"""The one result type every interval-producing statistic returns."""

from __future__ import annotations

import math
from dataclasses import dataclass


def finite_or_none(x: float | None) -> float | None:
    """Return ``float(x)``, or None when ``x`` is None, NaN or infinite (keeps NaN out of JSON)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a confidence interval and the count it rests on.

    ``value`` is None when the statistic is undefined (for example ``n == 0``);
    ``low``/``high`` are None when no interval could be formed. NaN and infinities
    are turned into None on construction, so ``to_dict()`` is always valid JSON.

    ``n`` counts the pooled units the value is computed from (pairs, votes, items:
    each producing function documents which). ``n_items`` is the number of
    resampled clusters (items) when the interval is a clustered bootstrap; it is
    an attribute only and is not part of ``to_dict()``.
    """

    value: float | None
    low: float | None
    high: float | None
    n: int
    n_items: int | None = None

    def __post_init__(self) -> None:
        for name in ("value", "low", "high"):
            object.__setattr__(self, name, finite_or_none(getattr(self, name)))
        object.__setattr__(self, "n", int(self.n))
        if self.value is None:
            object.__setattr__(self, "low", None)
            object.__setattr__(self, "high", None)

    def to_dict(self) -> dict[str, float | int | None]:
        """The JSON shape used everywhere: ``{"value", "low", "high", "n"}``."""
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}

    def fmt(self, digits: int = 3) -> str:
        """Human form, e.g. ``"0.712 [0.650, 0.770] n=155"``; ``"n/a n=0"`` when undefined."""
        if self.value is None:
            return f"n/a n={self.n}"
        text = f"{self.value:.{digits}f}"
        if self.low is not None and self.high is not None:
            text += f" [{self.low:.{digits}f}, {self.high:.{digits}f}]"
        return f"{text} n={self.n}"
