"""Benchmark: juge's clustered bootstrap vs a straightforward per-resample loop, 1k to 100k items.

Workload (synthetic, seeded): n items, each with 2-7 human votes among 3 labels
and one judge label. Two figures, each with a 95 % interval from 2,000 item
resamples (all votes of an item move together):

- person vs person agreement: share of equal labels over every pair of votes on an item, pooled;
- judge vs person Cohen's kappa: the judge's label against every vote, pooled table.

"ours" starts from the raw vote rows: it builds the per-item sums
(``pair_tables``, equal pairs) and calls ``ratio_estimate`` and
``kappa_estimate``. "naive" is the straightforward method, measured in the
same run: a Python loop over resamples that draws n item indices, gathers the
rows of the drawn items (vectorised, item row ranges computed once) and computes ``agreement`` and
``cohen_kappa`` on them. At 100k items a naive run of 2,000 resamples takes
minutes, so only ``--naive-resamples`` of them are timed and the time is scaled
to 2,000 (the output says so). "dense W" is the previous method (a resamples x
items count matrix times per-item sums), timed where it fits in memory.

    python bench/bootstrap.py [--sizes 1000 10000 100000] [--resamples 2000] [--naive-resamples 200]

The figures above are for categorical votes, whose items share a few hundred distinct patterns
(what the pattern compression exploits). A second table times the case with no repeated
patterns: a pooled ratio over continuous per-item values (each item its own pattern), juge's
``ratio_estimate`` against ``scipy.stats.bootstrap(..., paired=True, vectorized=True,
batch=200, method="percentile")`` on the same arrays, best of ``--repeats`` runs each.

Prints the times, naive / ours, the intervals of both methods, the peak memory
of ours (tracemalloc), and whether 100k items take under 2 s (the target).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from juge.stats import (
    agreement,
    cohen_kappa,
    kappa_estimate,
    kappa_from_tables,
    pair_tables,
    ratio_estimate,
    resample_weights,
)

LABELS = [0, 1, 2]  # three categories (A, B, tie), as integer codes
TARGET_SECONDS = 2.0
DENSE_MAX_ENTRIES = 50_000_000  # 400 MB of float64: the previous method is timed only below this


@dataclass
class Votes:
    """Raw rows: one per human vote and one per pair of votes on the same item."""

    n_items: int
    judge: np.ndarray  # judge label per item
    vote_item: np.ndarray
    vote_label: np.ndarray
    pair_item: np.ndarray
    pair_first: np.ndarray
    pair_second: np.ndarray


def synthetic_votes(n_items: int, seed: int) -> Votes:
    """Items with a hidden true label; each person (2-7 per item) and the judge give it with
    probability 0.7 and 0.75, else a uniformly random label."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(3, n_items, p=[0.45, 0.40, 0.15])
    n_votes = rng.integers(2, 8, n_items)
    vote_item = np.repeat(np.arange(n_items), n_votes)
    vote_label = np.where(rng.random(vote_item.size) < 0.7, truth[vote_item], rng.integers(0, 3, vote_item.size))
    judge = np.where(rng.random(n_items) < 0.75, truth, rng.integers(0, 3, n_items))
    first, second = _vote_pairs(n_votes)
    return Votes(n_items, judge, vote_item, vote_label, vote_item[first], vote_label[first], vote_label[second])


def _vote_pairs(n_votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (first, second) of every pair of distinct votes on the same item, sorted by item."""
    starts = np.concatenate([[0], np.cumsum(n_votes)[:-1]])
    first, second = [], []
    for size in np.unique(n_votes):
        i, j = np.triu_indices(size, k=1)
        base = starts[n_votes == size][:, None]
        first.append((base + i).ravel())
        second.append((base + j).ravel())
    first, second = np.concatenate(first), np.concatenate(second)
    order = np.argsort(first, kind="stable")
    return first[order], second[order]


def _item_ranges(row_item: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """First row and number of rows of each item, for rows sorted by item."""
    sizes = np.bincount(row_item, minlength=n_items)
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes


def _rows_of(ranges: tuple[np.ndarray, np.ndarray], drawn: np.ndarray) -> np.ndarray:
    """Rows of the drawn items, each item's rows once per draw."""
    starts, sizes = ranges[0][drawn], ranges[1][drawn]
    ends = np.cumsum(sizes)
    return np.repeat(starts - (ends - sizes), sizes) + np.arange(ends[-1])


def ours(v: Votes, n_resamples: int, seed: int) -> tuple[tuple, tuple]:
    """Per-item sums from the raw rows, then the library's vectorised estimates."""
    equal = np.bincount(v.pair_item, weights=v.pair_first == v.pair_second, minlength=v.n_items)
    pairs = np.bincount(v.pair_item, minlength=v.n_items)
    tables = pair_tables(v.judge[v.vote_item], v.vote_label, v.vote_item, LABELS, n_items=v.n_items)
    agree = ratio_estimate(equal, pairs, n_resamples=n_resamples, seed=seed)
    kappa = kappa_estimate(tables, n_resamples=n_resamples, seed=seed)
    return (agree.value, agree.low, agree.high), (kappa.value, kappa.low, kappa.high)


def naive(v: Votes, n_resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One loop iteration per resample: draw item indices, gather the drawn items' rows, compute."""
    rng = np.random.default_rng(seed)
    pair_ranges, vote_ranges = _item_ranges(v.pair_item, v.n_items), _item_ranges(v.vote_item, v.n_items)
    agree, kappa = np.empty(n_resamples), np.empty(n_resamples)
    for b in range(n_resamples):
        drawn = rng.integers(0, v.n_items, v.n_items)
        pair_rows, vote_rows = _rows_of(pair_ranges, drawn), _rows_of(vote_ranges, drawn)
        agree[b] = agreement(v.pair_first[pair_rows], v.pair_second[pair_rows])
        kappa[b] = cohen_kappa(v.judge[v.vote_item[vote_rows]], v.vote_label[vote_rows], labels=LABELS)
    return agree, kappa


def dense(v: Votes, n_resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The previous method: W (resamples x items) times the per-item sums."""
    equal = np.bincount(v.pair_item, weights=v.pair_first == v.pair_second, minlength=v.n_items)
    pairs = np.bincount(v.pair_item, minlength=v.n_items)
    tables = pair_tables(v.judge[v.vote_item], v.vote_label, v.vote_item, LABELS, n_items=v.n_items)
    w = resample_weights(v.n_items, n_resamples=n_resamples, seed=seed).astype(float)
    pooled = (w @ tables.reshape(v.n_items, 9)).reshape(-1, 3, 3)
    return (w @ equal) / (w @ pairs), kappa_from_tables(pooled)


def seconds(fn: Callable, *args, repeat: int = 1):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - start)
    return best, result


def peak_mib(fn: Callable, *args) -> float:
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def interval(values: np.ndarray) -> str:
    low, high = np.quantile(values, [0.025, 0.975])
    return f"[{low:.4f}, {high:.4f}]"


def bench_size(n_items: int, args: argparse.Namespace) -> float:
    """Run one size, print its lines, return our time."""
    v = synthetic_votes(n_items, args.seed)
    print(
        f"\n{n_items:,} items: {v.vote_item.size:,} votes, {v.pair_item.size:,} rater pairs, "
        f"{args.resamples:,} resamples"
    )
    t_ours, (agree, kappa) = seconds(ours, v, args.resamples, args.seed, repeat=3)
    n_naive = args.resamples if n_items <= args.full_naive_up_to else min(args.naive_resamples, args.resamples)
    t_naive_part, (naive_agree, naive_kappa) = seconds(naive, v, n_naive, args.seed + 1)
    t_naive = t_naive_part * args.resamples / n_naive
    scaled = (
        ""
        if n_naive == args.resamples
        else (f"  (SCALED: {n_naive} resamples timed, {t_naive_part:.2f} s, x {args.resamples / n_naive:g})")
    )
    print(
        f"  ours (per-item sums + ratio_estimate + kappa_estimate): {t_ours:8.3f} s   "
        f"peak memory {peak_mib(ours, v, args.resamples, args.seed):6.1f} MiB"
    )
    print(f"  naive per-resample loop, {args.resamples:,} resamples:        {t_naive:8.3f} s{scaled}")
    if n_items * args.resamples <= DENSE_MAX_ENTRIES:
        t_dense, _ = seconds(dense, v, args.resamples, args.seed)
        print(
            f"  dense W (previous method):                             {t_dense:8.3f} s   "
            f"dense / ours: {t_dense / t_ours:.1f}x"
        )
    else:
        print(
            f"  dense W (previous method): not run, W would hold {n_items * args.resamples:,} counts "
            f"({n_items * args.resamples * 8 / 2**30:.1f} GiB as float64)"
        )
    print(f"  naive / ours: {t_naive / t_ours:,.0f}x")
    print(f"  agreement {agree[0]:.4f}  ours [{agree[1]:.4f}, {agree[2]:.4f}]  naive {interval(naive_agree)}")
    print(
        f"  kappa     {kappa[0]:.4f}  ours [{kappa[1]:.4f}, {kappa[2]:.4f}]  naive {interval(naive_kappa)}"
        f"  (naive from {n_naive} resamples)"
    )
    return t_ours


def continuous_vs_scipy(n: int, resamples: int, repeats: int) -> None:
    """juge's ratio_estimate vs scipy.stats.bootstrap (batch=200) on continuous per-item values."""
    import scipy.stats

    rng = np.random.default_rng(n)
    den = rng.integers(1, 6, n).astype(float)
    num = rng.random(n) * den  # no two items alike: every item is its own pattern

    def best(run: Callable[[], object]) -> tuple[float, object]:
        times, out = [], None
        for _ in range(repeats):
            start = time.perf_counter()
            out = run()
            times.append(time.perf_counter() - start)
        return min(times), out

    def pooled(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return a.sum(axis=axis) / b.sum(axis=axis)

    ours, est = best(lambda: ratio_estimate(num, den, n_resamples=resamples, seed=0))
    theirs, res = best(
        lambda: scipy.stats.bootstrap(
            (num, den),
            pooled,
            paired=True,
            vectorized=True,
            n_resamples=resamples,
            batch=200,
            method="percentile",
            random_state=0,
        )
    )
    ci = res.confidence_interval  # type: ignore[attr-defined]
    print(
        f"{n:>9,} {ours:>9.3f}s {theirs:>9.3f}s {theirs / ours:>12.2f}x   "
        f"[{est.low:.4f}, {est.high:.4f}] vs [{ci.low:.4f}, {ci.high:.4f}]"  # type: ignore[attr-defined]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument(
        "--naive-resamples",
        type=int,
        default=200,
        help="resamples of the naive loop actually timed above --full-naive-up-to items",
    )
    parser.add_argument(
        "--full-naive-up-to", type=int, default=10_000, help="largest size at which the naive loop runs all resamples"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5, help="runs of each side of the scipy comparison (best)")
    parser.add_argument("--scipy-only", action="store_true", help="only the continuous-values table against scipy")
    args = parser.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} at start; numpy {np.__version__}"
    )
    times = {} if args.scipy_only else {n: bench_size(n, args) for n in args.sizes}
    if 100_000 in times:
        t = times[100_000]
        verdict = "yes" if t < TARGET_SECONDS else "NO"
        print(f"\ntarget: 100,000 items in under {TARGET_SECONDS:g} s: {verdict} ({t:.3f} s)")
    print(
        f"\ncontinuous per-item values (no repeated patterns), pooled ratio, {args.resamples} resamples, "
        f"best of {args.repeats}:\n{'items':>9} {'juge':>10} {'scipy b=200':>10} {'scipy/juge':>12}   intervals"
    )
    for n in args.sizes:
        continuous_vs_scipy(n, args.resamples, args.repeats)


if __name__ == "__main__":
    main()
