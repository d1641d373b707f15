"""The one result type every interval-producing statistic returns, :class:`Estimate` (value, interval, n),
its variants, and its one text form, :func:`format_estimate`."""

from __future__ import annotations

import math
import numbers
from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr, model_validator

from juge.parts import Part


def finite_or_none(x: Any) -> float | None:
    """Return ``float(x)``, or None when ``x`` is None, NaN or infinite (keeps NaN out of JSON)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _is_number(x: Any) -> bool:
    """A real number, numpy's too, but not a bool (JSON's true is no figure)."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def estimate_parts(
    est: Estimate | dict[str, Any] | None, digits: int = 3, *, percent: bool = False, signed: bool = False
) -> tuple[str, str, str]:
    """The three pieces :func:`format_estimate` joins: value, interval and n (an absent piece is ``""``).

    For a report cell that wraps each piece in its own markup; the rounding and the ``n/a`` rule live here.

    >>> estimate_parts(Estimate(0.71234, 0.65, 0.7701, n=155), 1, percent=True)
    ('71.2 %', '[65.0, 77.0]', 'n=155')
    >>> estimate_parts(Estimate(None, n=0))
    ('n/a', '', 'n=0')
    """
    if not est:
        return "n/a", "", ""
    if isinstance(est, dict):
        try:
            est = Estimate(est.get("value"), est.get("low"), est.get("high"), n=est.get("n") or 0)
        except (TypeError, ValueError):
            return "n/a", "", ""
    n_text = f"n={est.n}"
    if est.value is None:
        return "n/a", "", n_text
    scale, unit = (100.0, " %") if percent else (1.0, "")
    sign = "+" if signed else ""  # a difference shows its direction
    interval = ""
    if est.low is not None and est.high is not None:
        interval = f"[{scale * est.low:{sign}.{digits}f}, {scale * est.high:{sign}.{digits}f}]"
    return f"{scale * est.value:{sign}.{digits}f}{unit}", interval, n_text


def format_estimate(
    est: Estimate | dict[str, Any] | None,
    digits: int = 3,
    *,
    with_n: bool = True,
    percent: bool = False,
    signed: bool = False,
) -> str:
    """The one text form of an estimate: ``0.712 [0.650, 0.770] n=155``.

    ``percent=True`` gives ``71.2 % [65.0, 77.0] n=155``; an undefined figure is ``n/a n=0`` and an
    absent one ``n/a``. Accepts an :class:`Estimate` or its JSON dict (reports read stored files).

    >>> format_estimate(Estimate(0.71234, 0.65, 0.7701, n=155))
    '0.712 [0.650, 0.770] n=155'
    >>> format_estimate({"value": 0.5, "low": None, "high": None, "n": 4}, 2, percent=True)
    '50.00 % n=4'
    >>> format_estimate(Estimate(-0.02, -0.08, 0.031, n=40), signed=True)  # a difference
    '-0.020 [-0.080, +0.031] n=40'
    """
    value, interval, n_text = estimate_parts(est, digits, percent=percent, signed=signed)
    return " ".join(part for part in (value, interval, n_text if with_n else "") if part)


class Estimate(Part):
    """A point estimate with a confidence interval and the count it rests on.

    ``value`` is None when the statistic is undefined (for example ``n == 0``); ``low``/``high`` are
    None when no interval could be formed. NaN and infinities become None, so ``to_dict()`` is always
    valid JSON. ``n`` counts the pooled units the value is computed from (pairs, votes, items: each
    producing function documents which). ``n_items`` is the number of resampled clusters (items) of a
    clustered bootstrap: an attribute only, not part of the JSON.

    >>> e = Estimate(0.71234, 0.65, 0.7701, n=155)
    >>> e.to_dict()
    {'value': 0.71234, 'low': 0.65, 'high': 0.7701, 'n': 155}
    >>> str(e)
    '0.712 [0.650, 0.770] n=155'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # strict: a string ("0.7") or a bool is not a number, nor a float a count
    value: float | None = Field(strict=True)
    """The point estimate; null when it is undefined (e.g. n = 0)."""
    low: float | None = Field(default=None, strict=True)
    """The interval's lower bound; null when no interval could be formed."""
    high: float | None = Field(default=None, strict=True)
    """The interval's upper bound; null when no interval could be formed."""
    n: int = Field(default=0, ge=0, strict=True)
    """The pooled units the value is computed from (pairs, votes, items: each figure says which)."""
    _n_items: int | None = PrivateAttr(default=None)

    def __init__(
        self,
        value: Any = None,
        low: Any = None,
        high: Any = None,
        n: Any = 0,
        n_items: int | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(**{"value": value, "low": low, "high": high, "n": n}, **extra)
        self._n_items = n_items

    @model_validator(mode="before")
    @classmethod
    def _finite(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        # Numbers of any kind (numpy's too) become floats, NaN None; anything else (text in a file, a bool)
        # is left for the strict fields to refuse with the field's name.
        for name in ("value", "low", "high"):
            if _is_number(data.get(name)):
                data[name] = finite_or_none(data[name])
        if data.get("value") is None:
            for name in ("low", "high"):
                if name in data:
                    data[name] = None
        if isinstance(data.get("n"), numbers.Integral) and not isinstance(data["n"], bool):
            data["n"] = int(data["n"])  # numpy's integers
        return data

    @property
    def n_items(self) -> int | None:
        return self._n_items

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape used everywhere: ``{"value", "low", "high", "n"}`` (plus a subclass's keys)."""
        return super().to_dict()

    def fmt(self, digits: int = 3, *, with_n: bool = True, percent: bool = False) -> str:
        """Human form, e.g. ``"0.712 [0.650, 0.770] n=155"``; ``"n/a n=0"`` when undefined."""
        return format_estimate(self, digits, with_n=with_n, percent=percent)

    def __str__(self) -> str:
        return self.fmt()


class TunedEstimate(Estimate):
    """The PPI++ estimate: an Estimate and its power-tuning weight ``lambda``."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    lambda_: float = Field(alias="lambda")
    """PPI++'s power-tuning weight: 0 trusts people only, 1 is plain PPI."""


class PlugInEstimate(Estimate):
    """The Rogan-Gladen plug-in: an Estimate, the judge's sensitivity and specificity, and why it has no value."""

    sensitivity: float | None = None
    """The judge's PASS rate on the cases people passed (labelled cases)."""
    specificity: float | None = None
    """The judge's FAIL rate on the cases people failed (labelled cases)."""
    why_not: str | None = None
    """Why there is no value (e.g. sensitivity + specificity <= 1), if there is none."""


class ExactRate(Estimate):
    """A rate ``k / n`` with an exact (Clopper-Pearson) interval."""

    k: int
    """The count of hits."""
    method: str
    """How the interval was formed (exact Clopper-Pearson)."""


class PooledRate(Part):
    """A pooled rate ``k / n`` over items with a clustered bootstrap interval (the probe's overall rates)."""

    value: float | None = None
    """k / n, pooled over items."""
    low: float | None = None
    """The interval's lower bound; null with too few items."""
    high: float | None = None
    """The interval's upper bound; null with too few items."""
    n: int
    """Trials pooled (an item contributes one per kind it was tried with)."""
    k: int
    """Hits pooled."""
    n_items: int
    """Items the trials come from (the clusters the bootstrap resamples)."""
    method: str
    """How the interval was formed (clustered bootstrap over items)."""
    resamples: int
    """Bootstrap resamples."""
    seed: int
    """The bootstrap's seed."""
    too_few: str | None = None
    """Why there is no interval: too few items to resample (low and high are null)."""

    def fmt(self, digits: int = 3, *, with_n: bool = True, percent: bool = False) -> str:
        return format_estimate(self.to_dict(), digits, with_n=with_n, percent=percent)
