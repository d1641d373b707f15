"""Benchmark: how fast the weekly audit (``juge audit status``) notices a judge that drifted, and how often it
raises a false alarm, in simulated 26-week audits.

Each run: ``--per-week`` audited items a week, each labelled by one simulated person whom the judge agrees with at
``--judge`` (0.80) until week ``--drop-week`` (9th week), then at ``--judge - --drop``; the policy's bar is
``--bar`` (0.75: a person-vs-person figure of 0.80 less a margin of 0.05). The decision is
``juge.stats.sequential.drift_eprocess`` with an alarm at ``1/alpha``, looked at after every week, as
``juge audit status`` does. Also shown: the same bet on all past items alike (no forgetting), the usual
betting e-process, to show what the discounting buys.

    python bench/audit_drift.py [--runs 500] [--per-week 10 25 50]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from juge.stats.sequential import DRIFT_HALF_LIFE, drift_eprocess, first_crossing


def alarm_weeks(p: np.ndarray, per_week: int, runs: int, bar: float, half_life: float, seed: int) -> np.ndarray:
    agree = (np.random.default_rng(seed).random((runs, p.size)) < p).astype(float)
    hit = first_crossing(drift_eprocess(agree, bar, half_life=half_life), alpha=0.05)
    return np.where(hit >= 0, hit // per_week, -1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--weeks", type=int, default=26)
    ap.add_argument("--per-week", type=int, nargs="+", default=[10, 25, 50])
    ap.add_argument("--judge", type=float, default=0.80)
    ap.add_argument("--bar", type=float, default=0.75)
    ap.add_argument("--drop", type=float, default=0.15)
    ap.add_argument("--drop-week", type=int, default=8, help="0-based week the drop starts")
    args = ap.parse_args()
    print(
        f"{args.runs} runs of {args.weeks} weeks, judge {args.judge} vs bar {args.bar}, drop {args.drop} "
        f"from week {args.drop_week + 1}; alpha 0.05"
    )
    print("| items/week | bet memory | false alarms, no drop | false alarms, at the bar | caught | median delay |")
    print("|---:|---|---:|---:|---:|---:|")
    for per_week in args.per_week:
        n = args.weeks * per_week
        steps = np.arange(n)
        for label, half_life in ((f"half-life {DRIFT_HALF_LIFE:g} items", DRIFT_HALF_LIFE), ("all items", math.inf)):
            hl = half_life if math.isfinite(half_life) else 1e12
            none = alarm_weeks(np.full(n, args.judge), per_week, args.runs, args.bar, hl, 1)
            at_bar = alarm_weeks(np.full(n, args.bar), per_week, args.runs, args.bar, hl, 2)
            p = np.where(steps < args.drop_week * per_week, args.judge, args.judge - args.drop)
            weeks = alarm_weeks(p, per_week, args.runs, args.bar, hl, 3)
            caught = weeks >= args.drop_week
            delay = np.median(weeks[caught] - args.drop_week + 1) if caught.any() else float("nan")
            print(
                f"| {per_week} | {label} | {(none >= 0).mean():.1%} | {(at_bar >= 0).mean():.1%} | "
                f"{caught.mean():.1%} | {delay:g} weeks |"
            )


if __name__ == "__main__":
    main()
