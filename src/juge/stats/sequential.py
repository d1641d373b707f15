"""Anytime-valid inference on a bounded mean by betting: figures that may be looked at after every batch
(e.g. every week's audit) without inflating false alarms.

Observations ``x`` lie in ``[0, 1]`` (e.g. the share of people a judge agrees with on an audited item); the last
axis is time (item order), leading axes are independent runs (simulations). Two pieces:

- :func:`betting_confidence_sequence`: bounds ``(low_t, high_t)`` that hold for every ``t`` at once with
  probability ``1 - alpha`` (the hedged capital process with predictable plug-in bets, Waudby-Smith & Ramdas,
  "Estimating means of bounded random variables by betting", JRSS B 2024, arXiv:2010.09686, Theorem 3 and
  eq. (26)).
- :func:`drift_eprocess`: the wealth of a gambler betting that the mean is below ``bar``:
  ``K_t = prod_{i<=t} (1 + lambda_i (bar_i - x_i))`` with ``0 <= lambda_i <= c / (1 - bar_i)`` chosen from the
  items before ``i`` only. While every item's mean is at or above its bar, ``K`` is a non-negative
  supermartingale, so by Ville's inequality ``P(sup_t K_t >= 1/alpha) <= alpha``: an alarm when ``K`` reaches
  ``1/alpha`` is a level-``alpha`` test however often one looks. The bet is the aGRAPA plug-in of the same paper
  (eq. (25)) computed on exponentially discounted past items, so it stops betting while the judge is fine and bets
  again as soon as recent items fall below the bar (the wealth is not worn down by a long good history; cf. the
  e-detectors of Shin, Ramdas & Rinaldo 2024, arXiv:2203.03532).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

BET_CAP = 0.5  # c: at most half the wealth at risk per item, as in Waudby-Smith & Ramdas's experiments
DRIFT_HALF_LIFE = 25.0  # items: how fast the drift bet forgets the past


def _as_unit(x: ArrayLike) -> NDArray[np.float64]:
    a = np.asarray(x, dtype=float)
    if a.ndim == 0:
        raise ValueError("x must have at least one axis (time)")
    if a.size and (np.isnan(a).any() or a.min() < 0 or a.max() > 1):
        raise ValueError("every observation must lie in [0, 1]")
    return a


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")


def plugin_bets(x: ArrayLike, *, alpha: float = 0.05) -> NDArray[np.float64]:
    """The predictable plug-in bets ``lambda_t = sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(1 + t)))`` with
    ``sigma2_t = (1/4 + sum_{i<=t} (x_i - mu_i)^2) / (t + 1)`` and ``mu_t = (1/2 + sum_{i<=t} x_i) / (t + 1)``
    (Waudby-Smith & Ramdas 2024, eq. (26)), before any cap."""
    a = _as_unit(x)
    _check_alpha(alpha)
    t = np.arange(1, a.shape[-1] + 1, dtype=float)
    mu = (0.5 + np.cumsum(a, axis=-1)) / (t + 1)
    sigma2 = (0.25 + np.cumsum((a - mu) ** 2, axis=-1)) / (t + 1)
    before = np.concatenate([np.full(a.shape[:-1] + (1,), 0.25), sigma2[..., :-1]], axis=-1)
    return np.sqrt(2 * math.log(2 / alpha) / (before * t * np.log1p(t)))


def _log_wealth(
    a: NDArray[np.float64], m: NDArray[np.float64], alpha: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """log K+_t(m) and log K-_t(m) for candidates ``m`` (shape (g, 1)) after each item of ``a`` (1-D)."""
    lam = plugin_bets(a, alpha=alpha)[None, :]
    with np.errstate(divide="ignore"):
        up = np.minimum(lam, BET_CAP / m)
        down = np.minimum(lam, BET_CAP / (1 - m))
    # log-wealth, so long sequences do not overflow; a factor is never below 1 - c > 0
    return np.cumsum(np.log1p(up * (a - m)), axis=1), np.cumsum(np.log1p(-down * (a - m)), axis=1)


def items_to_clear(x: ArrayLike, bar: float, *, alpha: float = 0.05, limit: int = 5000) -> int | None:
    """If ``x`` went on as it has (its values repeated in order), after how many items in all the confidence
    sequence's lower bound would clear ``bar`` (its hedged wealth at ``bar`` reaching ``1/alpha``); None if not
    within ``limit`` items or ``x`` is empty."""
    a = _as_unit(x)
    if a.size == 0:
        return None
    longer = np.resize(a, max(limit, a.size))
    log_up, _ = _log_wealth(longer, np.array([[bar]]), alpha)
    hit = np.flatnonzero(log_up[0] + math.log(0.5) >= math.log(1 / alpha))
    return int(hit[0]) + 1 if hit.size else None


def items_to_alarm(
    x: ArrayLike, bar: ArrayLike, *, alpha: float = 0.05, limit: int = 5000, half_life: float = DRIFT_HALF_LIFE
) -> int | None:
    """If ``x`` (with its bars) went on as it has, after how many items in all :func:`drift_eprocess` would reach
    ``1/alpha``; None if not within ``limit`` items or ``x`` is empty."""
    a = _as_unit(x)
    if a.size == 0:
        return None
    size = max(limit, a.size)
    b = np.resize(np.broadcast_to(np.asarray(bar, dtype=float), a.shape), size)
    hit = first_crossing(drift_eprocess(np.resize(a, size), b, half_life=half_life), alpha=alpha)
    return int(hit) + 1 if hit >= 0 else None


def betting_confidence_sequence(
    x: ArrayLike, *, alpha: float = 0.05, grid: int = 1001
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A ``1 - alpha`` confidence sequence for the mean of ``x`` (1-D, in ``[0, 1]``): ``(low, high)`` after each
    item, valid at every ``t`` simultaneously.

    A candidate mean ``m`` is kept while the hedged wealth ``max(K+_t(m), K-_t(m)) / 2`` stays below ``1/alpha``,
    where ``K+-_t(m) = prod (1 +- min(lambda_i, c/m or c/(1-m)) (x_i - m))`` (Waudby-Smith & Ramdas 2024,
    Theorem 3); candidates are the ``grid`` points of ``[0, 1]`` (bounds are rounded outwards to them). The bounds
    are not intersected over time: when the mean moves (a drifting judge) the band follows the items so far
    instead of staying on the old mean. An empty sequence gives empty arrays.
    """
    a = _as_unit(x)
    if a.ndim != 1:
        raise ValueError("x must be one sequence (1-D)")
    if a.size == 0:
        return np.empty(0), np.empty(0)
    m = np.linspace(0.0, 1.0, grid)[:, None]
    log_up, log_down = _log_wealth(a, m, alpha)
    kept = np.maximum(log_up, log_down) + math.log(0.5) < math.log(1 / alpha)
    grid_m = m[:, 0]
    low = np.where(kept.any(axis=0), grid_m[np.argmax(kept, axis=0)], np.nan)
    high = np.where(kept.any(axis=0), grid_m[grid - 1 - np.argmax(kept[::-1], axis=0)], np.nan)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def drift_eprocess(
    x: ArrayLike, bar: ArrayLike, *, half_life: float = DRIFT_HALF_LIFE, cap: float = BET_CAP
) -> NDArray[np.float64]:
    """The wealth ``K_t`` (after each item) of betting that the mean of ``x`` is below ``bar`` (a number, or one
    per item: the bar of the item's category); its running maximum reaching ``1/alpha`` rejects "every item's
    mean is at or above its bar" at level ``alpha``, at any look.

    The bet on item ``i`` is ``lambda_i = clip(g / (s2 + g^2), 0, cap / (1 - bar_i))`` with ``g = bar_i - mu``,
    where ``mu`` and ``s2`` are the mean and variance of the earlier items discounted by half every
    ``half_life`` items (with one pseudo-item at the bar of variance 1/4, so the first bet is 0): the aGRAPA bet
    of Waudby-Smith & Ramdas (2024, eq. (25)) on recent items.
    """
    a = _as_unit(x)
    b = np.broadcast_to(np.asarray(bar, dtype=float), a.shape)
    if b.size and (np.isnan(b).any() or b.min() <= 0 or b.max() >= 1):
        raise ValueError("the bar must lie strictly between 0 and 1")
    if half_life <= 0:
        raise ValueError(f"half_life must be positive, got {half_life}")
    n = a.shape[-1]
    keep = 0.5 ** (1 / half_life)
    weight = np.ones(a.shape[:-1])
    total = b[..., 0].copy() if n else np.zeros(a.shape[:-1])  # pseudo-item at the first bar
    squares = total**2 + 0.25
    log_wealth = np.zeros(a.shape)
    running = np.zeros(a.shape[:-1])
    for i in range(n):  # a loop over time only; runs are vectorised
        mu = total / weight
        s2 = np.maximum(squares / weight - mu**2, 1e-6)
        g = b[..., i] - mu
        lam = np.clip(g / (s2 + g**2), 0.0, cap / (1 - b[..., i]))
        running = running + np.log1p(lam * (b[..., i] - a[..., i]))
        log_wealth[..., i] = running
        weight = keep * weight + 1
        total = keep * total + a[..., i]
        squares = keep * squares + a[..., i] ** 2
    return np.exp(log_wealth)


def first_crossing(wealth: ArrayLike, *, alpha: float = 0.05) -> NDArray[np.int64]:
    """The index (0-based, along the last axis) at which ``wealth`` first reaches ``1/alpha``; -1 if never."""
    _check_alpha(alpha)
    w = np.asarray(wealth, dtype=float)
    hit = w >= 1 / alpha
    return np.where(hit.any(axis=-1), np.argmax(hit, axis=-1), -1)
