"""Simulated studies of a PASS/FAIL or score policy (``juge plan`` on a grade study).

The rule is :func:`juge.policy.grades.decide` (with :func:`juge.policy.decision.too_few`), run unchanged on each
simulated study. A study of ``m`` items is drawn with replacement from the category's judged items, each with its
votes. Every figure the rule reads is a smooth function of per-item sums, so each study carries, per check, the
paired difference judge minus people and its delta-method (normal) interval (the item bootstrap's large-sample
form; a test checks they agree): agreement and failures caught are pooled ratios, and Cohen's kappa of pooled
pairs with quadratic weights is ``1 - mean((x - y)^2) / (mean(x^2) + mean(y^2) - 2 mean(x) mean(y))`` over scale
positions (for PASS/FAIL, two points, it is the plain kappa). The study is settled as judge when the rule says
judge with every judge figure at the low end of its interval (people's figure plus the low end of the
difference), and as person when it says person with every judge figure at the high end; a study too thin to
decide is never settled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from juge.calibration.grades import GradedItem, Kind, _judge_pairs, _rater_pairs
from juge.policy.decision import category_decision, too_few
from juge.policy.grades import _has_grade, _ordered_rater_pairs, decide

# Per-item columns: judge-vs-person pairs (J) then person-vs-person pairs (P), each n, agreeing, and the
# sums kappa needs; then the rate columns of the kind.
N_J, AGREE_J, X_J, Y_J, XX_J, YY_J, D2_J = range(7)
N_P, AGREE_P, X_P, Y_P, XX_P, YY_P, D2_P = range(7, 14)
FC_J, FCN_J, FC_P, FCN_P, FF_J, FFN_J, FF_P, FFN_P = range(14, 22)  # PASS/FAIL: failures caught, false flags
AT_J, AT_P = 14, 15  # scores: agreeing at the threshold
CHUNK = 2_000_000  # floats per batch of simulated studies (reps x m x columns)

Measure = Callable[[np.ndarray], np.ndarray]
Influence = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _ratio(num: int, den: int) -> Measure:
    return lambda mean: mean[..., num] / mean[..., den]


def _ratio_influence(num: int, den: int) -> Influence:
    """Per item of each study (draw: studies x items x columns; mean: studies x columns): d(ratio)."""

    def influence(draw: np.ndarray, mean: np.ndarray) -> np.ndarray:
        r = (mean[:, num] / mean[:, den])[:, None]
        return (draw[..., num] - r * draw[..., den]) / mean[:, den][:, None]

    return influence


def _kappa(n: int) -> Measure:
    """Cohen's kappa of pooled pairs, quadratic weights over positions, from the means of the side's columns."""

    def kappa(mean: np.ndarray) -> np.ndarray:
        count, x, y, xx, yy, d2 = (mean[..., n + k] for k in (0, 2, 3, 4, 5, 6))
        expected = xx / count + yy / count - 2 * (x / count) * (y / count)
        return 1 - (d2 / count) / expected

    return kappa


def _kappa_influence(n: int) -> Influence:
    """d(kappa) per item: kappa = 1 - D / E with D = d2 / n, E = (xx + yy) / n - 2 x y / n^2 (column means)."""

    def influence(draw: np.ndarray, mean: np.ndarray) -> np.ndarray:
        count, x, y, xx, yy, d2 = (mean[:, n + k][:, None] for k in (0, 2, 3, 4, 5, 6))
        ci, xi, yi, xxi, yyi, d2i = (draw[..., n + k] for k in (0, 2, 3, 4, 5, 6))
        big_d = d2 / count
        big_e = (xx + yy) / count - 2 * x * y / count**2
        d_d = (d2i - big_d * ci) / count
        d_e = (xxi + yyi - (xx + yy) * ci / count) / count - 2 * (
            (xi * y + x * yi) / count**2 - 2 * x * y * ci / count**3
        )
        return -(d_d * big_e - big_d * d_e) / big_e**2

    return influence


def _kappa_sums(pairs: list[tuple[Any, Any]], position: dict[Any, int]) -> list[float]:
    x = np.array([position[a] for a, _ in pairs], dtype=float)
    y = np.array([position[b] for _, b in pairs], dtype=float)
    return [len(pairs), float((x == y).sum()), x.sum(), y.sum(), (x * x).sum(), (y * y).sum(), ((x - y) ** 2).sum()]


def _rate_sums(pairs: list[tuple[Any, Any]], human: str) -> list[float]:
    """Among pairs whose second side said ``human``, those whose first side said FAIL (as ``_caught`` counts)."""
    return [sum(a == "FAIL" and b == human for a, b in pairs), sum(b == human for _, b in pairs)]


@dataclass(frozen=True)
class Check:
    """One figure the rule compares: judge and people as functions of the column means, with their influences."""

    name: str
    judge: Measure
    people: Measure
    judge_influence: Influence
    people_influence: Influence


def _ratio_check(name: str, judge: tuple[int, int], people: tuple[int, int]) -> Check:
    return Check(name, _ratio(*judge), _ratio(*people), _ratio_influence(*judge), _ratio_influence(*people))


def checks_of(kind: Kind) -> list[Check]:
    kappa = Check("kappa", _kappa(N_J), _kappa(N_P), _kappa_influence(N_J), _kappa_influence(N_P))
    if kind == "passfail":
        return [
            _ratio_check("agreement", (AGREE_J, N_J), (AGREE_P, N_P)),
            kappa,
            _ratio_check("failures caught", (FC_J, FCN_J), (FC_P, FCN_P)),
        ]
    return [
        _ratio_check("agreement at the threshold", (AT_J, N_J), (AT_P, N_P)),
        Check("weighted kappa", kappa.judge, kappa.people, kappa.judge_influence, kappa.people_influence),
    ]


def grade_counts(
    items: Sequence[GradedItem], key: str, kind: Kind, scale: Sequence[Any], threshold: float | None
) -> np.ndarray:
    """One row of column sums per item the judge graded (the rows simulated studies are drawn from)."""
    position = {v: k for k, v in enumerate(scale)}
    jp_pairs = _judge_pairs(key, "each")
    rows = []
    for it in items:
        if not _has_grade(it, key):
            continue
        judge, people = jp_pairs(it), _rater_pairs(it)
        row = _kappa_sums(judge, position) + _kappa_sums(people, position)
        if kind == "passfail":
            ordered = _ordered_rater_pairs(it)
            row += _rate_sums(judge, "FAIL") + _rate_sums(ordered, "FAIL")
            row += _rate_sums(judge, "PASS") + _rate_sums(ordered, "PASS")
        else:
            cut = threshold if threshold is not None else float("inf")
            row += [sum((float(a) >= cut) == (float(b) >= cut) for a, b in pairs) for pairs in (judge, people)]
        rows.append(row)
    width = 22 if kind == "passfail" else 16
    return np.array(rows, dtype=float).reshape(-1, width)


def _se(influence: np.ndarray) -> np.ndarray:
    """The delta-method se of a mean of per-item influences (studies x items)."""
    return influence.std(1, ddof=1) / np.sqrt(influence.shape[1])


def _figures(kind: Kind, judge: dict[str, float], people: dict[str, float], fails: tuple[int, int]) -> dict:
    """The figures in the shape :func:`juge.policy.grades.decide` reads."""

    def est(v: float) -> dict[str, Any]:
        return {"value": float(v) if np.isfinite(v) else None}

    if kind == "passfail":
        side = lambda f, caught: {  # noqa: E731
            "agreement": est(f["agreement"]), "kappa": est(f["kappa"]),
            "failures_caught": {"k": caught[0], "n": caught[1], "rate": est(f["failures caught"])},
            "false_flags": {"rate": est(f["false flags"])},
        }  # fmt: skip
        return {"judge": side(judge, fails), "people": side(people, (0, 0))}
    side = lambda f, _: {  # noqa: E731
        "at_threshold": {"agreement": est(f["agreement at the threshold"])}, "weighted_kappa": est(f["weighted kappa"]),
    }  # fmt: skip
    return {"judge": side(judge, None), "people": side(people, None)}


def grade_settled_shares(
    counts: np.ndarray,
    m: int,
    *,
    kind: Kind,
    margin: float,
    min_recall: float | None,
    level: float,
    reps: int,
    rng: np.random.Generator,
) -> tuple[float, float, float]:
    """Of ``reps`` studies of ``m`` items drawn from ``counts``: the share settled, as judge, as person."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    checks = checks_of(kind)
    judge = person = 0
    batch = max(1, CHUNK // max(1, m * counts.shape[1]))
    for start in range(0, reps, batch):
        draw = counts[rng.integers(0, len(counts), (min(batch, reps - start), m))]
        sums, mean = draw.sum(1), draw.mean(1)
        people: dict[str, np.ndarray] = {}
        ends: list[dict[str, np.ndarray]] = [{}, {}]  # the judge's figures at the low and the high end
        with np.errstate(divide="ignore", invalid="ignore"):
            for c in checks:
                judge_influence = c.judge_influence(draw, mean)
                diff = c.judge(mean) - c.people(mean)
                se = _se(judge_influence - c.people_influence(draw, mean))
                people[c.name] = c.people(mean)
                for side, sign in ((0, -1), (1, 1)):
                    ends[side][c.name] = people[c.name] + diff + sign * z * se
                if c.name == "failures caught" and min_recall is not None:
                    # Both bars must be cleared: the people's rate (paired difference) and min_recall (the
                    # judge's own rate); the figure handed to the rule is below max(both) iff either fails.
                    own, se_own = c.judge(mean), _se(judge_influence)
                    bar = np.maximum(people[c.name], min_recall)
                    for side, sign in ((0, -1), (1, 1)):
                        ends[side][c.name] = np.minimum(
                            bar + diff + sign * z * se, own + sign * z * se_own + bar - min_recall
                        )
            if kind == "passfail":  # reported beside the rule, not part of it: the point figures
                flags = (_ratio(FF_J, FFN_J)(mean), _ratio(FF_P, FFN_P)(mean))
        for r in range(len(draw)):
            if too_few(m, {"n": int(sums[r, N_J])}, {"n": int(sums[r, N_P])}):
                continue
            if not all(np.isfinite(e[name][r]) for e in ends for name in e):
                continue
            point = {k: v[r] for k, v in people.items()}
            low = {k: v[r] for k, v in ends[0].items()}
            high = {k: v[r] for k, v in ends[1].items()}
            if kind == "passfail":
                caught = (int(sums[r, FC_J]), int(sums[r, FCN_J]))
                low["false flags"] = high["false flags"] = flags[0][r]
                point["false flags"] = flags[1][r]
            else:
                caught = (0, 0)
            at_low = decide(_figures(kind, low, point, caught), kind, margin=margin, min_recall=min_recall)[0]
            if category_decision("", decision=at_low, reason="").ruling == "judge":
                judge += 1
                continue  # the rule is monotone in the judge's figures: judge at the low end is judge at the high
            at_high = decide(_figures(kind, high, point, caught), kind, margin=margin, min_recall=min_recall)[0]
            person += category_decision("", decision=at_high, reason="").ruling == "person"
    return (judge + person) / reps, judge / reps, person / reps


def grade_distance(row: dict[str, Any], *, margin: float, min_recall: float | None) -> tuple[str, float] | None:
    """The check a category's decision turns on, and how far its figure is from its bar now (negative: below):
    the one failing most clearly, else the one closest to failing."""
    gaps = []
    for name, c in (row.get("checks") or {}).items():
        if c.get("gap") is not None:
            gaps.append((name, c["gap"] + margin))
        elif c.get("judge") is not None and c.get("people") is not None:
            bar = max(c["people"], min_recall) if min_recall is not None else c["people"]
            gaps.append((name, c["judge"] - bar))
    failing = [g for g in gaps if g[1] < 0]
    if not gaps or (row.get("by_figures") == "person" and not failing):
        return None  # e.g. no human FAIL on dev: no figure is on its bar, none can be measured
    return min(failing, key=lambda g: g[1]) if failing else min(gaps, key=lambda g: g[1])
