"""Benchmark: `juge calibrate` on many-valued scores (averaged ratings, weighted error sums), time and peak RSS.

Workload: N items x 3 raters, each rating a true value in [0, 20] plus rater noise, rounded to one decimal
(about 200 distinct values), with a judge's score per item (`--judge`, on by default), `--resamples` 2,000.
Each `juge calibrate` runs in its own subprocess; peak RSS comes from `os.wait4` (that child alone).

Baselines measured in the same run:
- the old path: the same ceiling figures computed the straightforward way (a K x K table per item summed per
  resample for kappa; every resample's rows rebuilt for Krippendorff's alpha, Pearson and Spearman), which is
  what juge did before, on `--baseline-items` items (default 200: it takes minutes at 1,000), next to ours on
  the same items;
- a Python process that only imports juge's calibrate path.

    python bench/calibrate_many_values.py [--items 1000 10000] [--baseline-items 200] [--resamples 2000]

Targets (issue 31): 1,000 x 3 under 10 s and 500 MiB; 10,000 x 3 under 30 s and 1 GiB.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from pathlib import Path

import numpy as np
from memory import LAST_CPU, measure, mib

TARGETS = {1000: (10.0, 500 << 20), 10000: (30.0, 1 << 30)}

OLD_PATH = r"""
import csv, sys
import numpy as np
from juge.stats import kappa_from_tables, pair_tables, pearson, spearman, statistic_estimate, percentile_interval
from juge.stats.alpha import alpha_from_counts
from juge.stats.bootstrap import resampled_totals

path, resamples = sys.argv[1], int(sys.argv[2])
rows = list(csv.DictReader(open(path)))
per_item = [[float(r[k]) for k in ("r1", "r2", "r3")] for r in rows]
a = np.array([p[i] for p in per_item for i, j in ((0, 1), (0, 2), (1, 2))])
b = np.array([p[j] for p in per_item for i, j in ((0, 1), (0, 2), (1, 2))])
item = np.repeat(np.arange(len(per_item)), 3)
labels = sorted(set(a) | set(b))
tables = pair_tables(a, b, item, labels, n_items=len(per_item))
k = len(labels)
totals = resampled_totals(tables.reshape(len(per_item), k * k), n_resamples=resamples).reshape(-1, k, k)
for weights in (None, "quadratic"):
    print("kappa", weights, percentile_interval(kappa_from_tables(totals, weights=weights)))
del totals
values = np.array(sorted({v for p in per_item for v in p}))
counts = np.zeros((len(per_item), values.size))
for i, p in enumerate(per_item):
    for v in p:
        counts[i, np.searchsorted(values, v)] += 1
for level in ("ordinal", "interval"):
    e = statistic_estimate(lambda c: alpha_from_counts(c, values, level=level), counts, n_resamples=resamples)
    print("alpha", level, e.low, e.high)
for fn in (pearson, spearman):
    e = statistic_estimate(fn, a, b, clusters=item, n_resamples=resamples)
    print(fn.__name__, e.low, e.high)
"""


def write_items(folder: Path, n_items: int, seed: int) -> tuple[Path, Path, int]:
    """Items with three raters' one-decimal scores, and a judge's score per item; (items, judgments, values)."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 20, n_items)
    ratings = np.round(np.clip(truth[:, None] + rng.normal(0, 2, (n_items, 3)), 0, 20), 1)
    judge = np.round(np.clip(truth + rng.normal(0, 3, n_items), 0, 20), 1)
    items, judgments = folder / f"items{n_items}.csv", folder / f"judge{n_items}.csv"
    with items.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["id", "output", "r1", "r2", "r3"])
        out.writerows([f"i{i}", "an answer", *ratings[i]] for i in range(n_items))
    with judgments.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["id", "score"])
        out.writerows([f"i{i}", judge[i]] for i in range(n_items))
    return items, judgments, len(np.unique(ratings))


def calibrate(items: Path, judgments: Path | None, resamples: int, log: Path) -> tuple[int, float]:
    """(peak RSS, wall seconds) of one `juge calibrate`; its CPU seconds are in LAST_CPU."""
    command = [sys.executable, "-m", "juge.cli", "calibrate", "--items", str(items), "--label-cols", "r1,r2,r3"]
    command += ["--resamples", str(resamples), "--json", str(log.with_suffix(".json"))]
    if judgments is not None:
        command += ["--judgments", str(judgments), "--judgments-map", "item_id=id,verdict=score", "--judge-name", "j"]
    rss, wall, code = measure(command, log)
    if code != 0:
        sys.exit(f"juge calibrate failed (exit {code}):\n{log.read_text()[-3000:]}")
    return rss, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--baseline-items", type=int, default=200, help="size for the old path (0: skip it)")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--no-judge", dest="judge", action="store_false", help="people only (the ceiling)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="juge-bench-values-") as tmp:
        root = Path(tmp)
        base_rss, base_wall, _ = measure(
            [sys.executable, "-c", "import juge.cli, juge.calibration.grades, juge.reports.terminal"],
            root / "import.log",
        )
        print(f"baseline: python importing juge's calibrate path: peak RSS {mib(base_rss)}, {base_wall:.1f} s")
        print(f"{args.resamples} resamples, 3 raters, one-decimal scores; judge: {'yes' if args.judge else 'no'}\n")
        if args.baseline_items:
            items, judgments, n_values = write_items(root, args.baseline_items, args.seed)
            ours_rss, ours_wall = calibrate(items, judgments if args.judge else None, args.resamples, root / "o.log")
            ours_cpu = LAST_CPU[0]
            old_rss, old_wall, code = measure(
                [sys.executable, "-c", OLD_PATH, str(items), str(args.resamples)], root / "old.log"
            )
            if code != 0:
                sys.exit(f"the old path failed (exit {code}):\n{(root / 'old.log').read_text()[-3000:]}")
            print(f"old path vs ours on {args.baseline_items:,} items ({n_values} values; old = ceiling figures only):")
            print(f"  old path:       {old_wall:7.1f} s wall  {LAST_CPU[0]:7.1f} s CPU  {mib(old_rss):>10}")
            print(
                f"  juge calibrate: {ours_wall:7.1f} s wall  {ours_cpu:7.1f} s CPU  {mib(ours_rss):>10}  (whole command)"
            )
            print(
                f"  old / ours:     {old_wall / ours_wall:7.1f}x       {LAST_CPU[0] / ours_cpu:7.1f}x      {old_rss / ours_rss:9.1f}x\n"
            )
        print(f"{'items':>8} {'values':>7} {'wall':>8} {'CPU':>8} {'peak RSS':>10} {'target':>18} {'met':>4}")
        for n_items in args.items:
            items, judgments, n_values = write_items(root, n_items, args.seed)
            rss, wall = calibrate(items, judgments if args.judge else None, args.resamples, root / f"n{n_items}.log")
            target = TARGETS.get(n_items)
            goal = f"{target[0]:.0f} s, {mib(target[1])}" if target else "-"
            met = ("yes" if wall < target[0] and rss < target[1] else "no") if target else "-"
            cpu = LAST_CPU[0]
            print(
                f"{n_items:>8,} {n_values:>7} {wall:>7.1f}s {cpu:>7.1f}s {mib(rss):>10} {goal:>18} {met:>4}", flush=True
            )


if __name__ == "__main__":
    main()
