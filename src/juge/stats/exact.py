"""Exact binomial intervals and tests (used by judge policies and paired comparisons)."""

from __future__ import annotations

from scipy.stats import beta, binom


def _check(k: int, n: int, confidence: float) -> None:
    if not (0 <= k <= n):
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")


def clopper_pearson(k: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Exact two-sided interval for a binomial proportion with ``k`` successes of ``n``.

    ``low = Beta^-1(alpha/2; k, n-k+1)`` (0 if k = 0),
    ``high = Beta^-1(1-alpha/2; k+1, n-k)`` (1 if k = n), ``alpha = 1 - confidence``
    (Clopper & Pearson 1934; as ``scipy.stats.binomtest(k, n).proportion_ci("exact")``).
    For ``n = 0`` the interval is the whole ``(0.0, 1.0)``.
    """
    _check(k, n, confidence)
    alpha = 1 - confidence
    low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def binomial_upper_bound(k: int, n: int, *, confidence: float = 0.95) -> float:
    """One-sided exact upper confidence bound on a binomial proportion.

    ``Beta^-1(confidence; k+1, n-k)``, 1.0 when ``k = n`` (Clopper-Pearson, one-sided).
    E.g. 0 errors in 299 trials bound the error rate below 1 % at 95 %.
    """
    _check(k, n, confidence)
    return 1.0 if k == n else float(beta.ppf(confidence, k + 1, n - k))


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts ``b`` and ``c``.

    Under H0 ``b ~ Binomial(b + c, 1/2)``; ``p = min(1, 2 * P(X <= min(b, c)))``
    (McNemar 1947; exact form as ``scipy.stats.binomtest(b, b + c, 0.5)``).
    Returns 1.0 when there are no discordant pairs.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    if b + c == 0:
        return 1.0
    return float(min(1.0, 2 * binom.cdf(min(b, c), b + c, 0.5)))
