"""Anytime-valid audit statistics: hand-worked bets, a direct transcription of the confidence sequence, and the
simulation the issue asks for (scripted judges whose agreement with simulated raters drops from a given week)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from juge.stats.sequential import (
    BET_CAP,
    betting_confidence_sequence,
    drift_eprocess,
    first_crossing,
    plugin_bets,
)

RUNS, WEEKS, PER_WEEK = 500, 26, 25
BAR, JUDGE, DROP, DROP_WEEK, ALPHA = 0.75, 0.80, 0.15, 8, 0.05


def test_drift_bet_by_hand() -> None:
    # item 1: no evidence yet (the pseudo-item sits at the bar), bet 0. Half-life 1 item: keep = 1/2, so after
    # item 1 weight 1.5, mean (0.375 + 0) / 1.5 = 0.25, variance (0.5 * (0.75^2 + 0.25)) / 1.5 - 0.25^2 = 5/24;
    # gap 0.5, bet 0.5 / (5/24 + 0.25) = 12/11 (under the cap 0.5 / 0.25 = 2); wealth 1 + 12/11 * 0.75.
    wealth = drift_eprocess([0.0, 0.0], 0.75, half_life=1.0)
    assert wealth[0] == pytest.approx(1.0)
    assert wealth[1] == pytest.approx(1 + 12 / 11 * 0.75)


def test_drift_bet_is_capped_and_never_bets_on_good_items() -> None:
    wealth = drift_eprocess(np.ones(200), 0.75)
    assert np.all(wealth == 1.0)  # the judge above the bar: no bet, no loss
    wealth = drift_eprocess(np.zeros(200), 0.75)
    assert wealth[-1] <= (1 + BET_CAP / 0.25 * 0.75) ** 199  # capped bets
    assert first_crossing(wealth, alpha=ALPHA) >= 1


def test_plugin_bets_by_hand() -> None:
    lam = plugin_bets([1.0, 0.0], alpha=0.05)
    assert lam[0] == pytest.approx(math.sqrt(2 * math.log(40) / (0.25 * 1 * math.log(2))))
    mu1 = 1.5 / 2
    sigma2_1 = (0.25 + (1 - mu1) ** 2) / 2
    assert lam[1] == pytest.approx(math.sqrt(2 * math.log(40) / (sigma2_1 * 2 * math.log(3))))


def _kept_by_loop(x: list[float], m: float, alpha: float) -> bool:
    """The hedged capital process written out one item at a time (Waudby-Smith & Ramdas 2024, Theorem 3)."""
    k_up = k_down = 1.0
    mu, ss = 0.5, 0.25  # running mu_t and sum for sigma2_t
    for t, xi in enumerate(x, start=1):
        sigma2_before = ss / t
        lam = math.sqrt(2 * math.log(2 / alpha) / (sigma2_before * t * math.log(1 + t)))
        k_up *= 1 + min(lam, BET_CAP / m if m else math.inf) * (xi - m)
        k_down *= 1 - min(lam, BET_CAP / (1 - m) if m < 1 else math.inf) * (xi - m)
        mu = (0.5 + sum(x[:t])) / (t + 1)
        ss += (xi - mu) ** 2
    return max(k_up, k_down) / 2 < 1 / alpha


def test_confidence_sequence_matches_the_written_out_process() -> None:
    rng = np.random.default_rng(5)
    x = (rng.random(60) < 0.7).astype(float).tolist()
    low, high = betting_confidence_sequence(x, alpha=0.05, grid=101)
    kept = [m for m in np.linspace(0, 1, 101) if _kept_by_loop(x, float(m), 0.05)]
    assert low[-1] == pytest.approx(min(kept))
    assert high[-1] == pytest.approx(max(kept))


def test_confidence_sequence_covers_at_every_time() -> None:
    rng = np.random.default_rng(7)
    misses = 0
    for _ in range(100):
        x = (rng.random(150) < 0.7).astype(float)
        low, high = betting_confidence_sequence(x, alpha=0.1, grid=201)
        misses += bool(((low > 0.7) | (high < 0.7)).any())
    assert misses / 100 <= 0.1 + 2 * math.sqrt(0.1 * 0.9 / 100)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        drift_eprocess([1.5], 0.7)
    with pytest.raises(ValueError, match="bar"):
        drift_eprocess([0.5], 1.0)
    assert betting_confidence_sequence([])[0].size == 0


def simulate(judge_after: float, rng: np.random.Generator, bar: float = BAR) -> np.ndarray:
    """Alarm week (0-based) of each of RUNS 26-week audits, -1 for none: PER_WEEK items a week, each labelled by
    one simulated rater whom the judge agrees with at JUDGE until DROP_WEEK, then at ``judge_after``."""
    n = WEEKS * PER_WEEK
    p = np.where(np.arange(n) < DROP_WEEK * PER_WEEK, JUDGE, judge_after)
    agree = (rng.random((RUNS, n)) < p).astype(float)
    hit = first_crossing(drift_eprocess(agree, bar), alpha=ALPHA)
    return np.where(hit >= 0, hit // PER_WEEK, -1)


def test_weekly_looks_keep_false_alarms_within_alpha_and_a_drop_is_caught() -> None:
    rng = np.random.default_rng(2026)
    # no drop: the judge as on dev, above the bar
    assert (simulate(JUDGE, rng) >= 0).mean() <= ALPHA
    # the worst case of "holding": agreement exactly at the bar for 26 weeks (Ville: at most alpha, up to noise)
    at_bar = simulate(BAR, rng, bar=BAR)
    assert (at_bar >= 0).mean() <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / RUNS)
    # a drop of 0.15 from week DROP_WEEK on
    weeks = simulate(JUDGE - DROP, rng)
    early = ((weeks >= 0) & (weeks < DROP_WEEK)).mean()
    caught = weeks >= DROP_WEEK
    assert early <= ALPHA
    assert caught.mean() >= 0.85
    delay = np.median(weeks[caught] - DROP_WEEK + 1)  # 1 = flagged in the first week of the drop
    assert delay <= 10
