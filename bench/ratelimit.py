"""Rate budgets: how much of a rate-limited API's per-minute limit juge sustains, and how many 429s it meets.

The mock server (its own process) enforces `--rpm` requests and `--tpm` tokens per minute over a
sliding minute and answers 429 beyond them, with Retry-After. Time is simulated: the server's and
the engine's clocks run `--time-scale` times faster than real time, so 5 simulated minutes take
300 / time-scale real seconds. Each setting runs juge's engine (OpenAI-compatible provider, the
call log, the cache and the judgments in SQLite) on more pass/fail tasks than the limit allows in
`--warmup` + `--minutes`; the server's counters are read `--warmup` simulated minutes after the
first request (a burst at the start is allowed by any per-minute limit and says nothing about the
rate sustained) and again `--minutes` later, when the run is stopped.

- **budget = limit**: `[engine] rpm` and `tpm` equal to the server's limits (what the issue asks).
- **no budget**: the same engine with no budget: only backoff and adaptive concurrency (AIMD) on 429s.

Reported per setting, over the simulated window: requests and tokens the server admitted per
minute as a share of its limits (the binding one is the figure), and the share of requests it
answered 429. Target: budget = limit sustains >= 0.95 of the limit with <= 1 % of requests 429.

    python bench/ratelimit.py [--rpm 600] [--tpm 30000] [--minutes 5] [--warmup 1] [--time-scale 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers.openai_compat import OpenAICompatProvider
from juge.store import Store
from juge.testing.mockserver import MockConfig, serve_in_subprocess

MODEL = MockConfig().model


def tasks(n: int, tag: str) -> list[Any]:
    judge = judge_from_dict(
        {
            "name": "helpful",
            "setup": "passfail",
            "model": MODEL,
            "description": "The answer does what the customer asked.",
            "max_tokens": 16,
        }
    )
    cases = [
        Case(
            id=f"{tag}-{i}",
            question=f"Question {i}: which bread suits a {tag} picnic for {i} people?",
            output=f"Take {i % 7 + 2} sourdough loaves and some rye ({tag}, #{i}).",
        )
        for i in range(n)
    ]
    return build_tasks(cases, [judge])


def stats(url: str) -> dict[str, Any]:
    return httpx.get(url.removesuffix("/v1") + "/stats", timeout=10, trust_env=False).json()


async def one_setting(url: str, args: argparse.Namespace, budget: bool, db: Path, tag: str) -> dict[str, float]:
    httpx.post(url.removesuffix("/v1") + "/stats", timeout=10, trust_env=False)  # counters from zero
    todo = tasks(int(args.rpm * (args.minutes + args.warmup) * 1.5), tag)
    provider = OpenAICompatProvider(base_url=url)
    options = EngineOptions(
        concurrency=args.concurrency,
        retries=20,
        timeout=60,
        backoff=1.0,
        max_backoff=60.0,
        progress=False,
        time_scale=args.time_scale,
        rpm=args.rpm if budget else None,
        tpm=args.tpm if budget else None,
    )
    with Store(db) as store:
        engine = Engine(store, options)
        run_id = store.create_run(dataset_hash="bench", juge_version="bench", cases=[t.case for t in todo])
        cpu = time.process_time()
        run = asyncio.ensure_future(engine.run_tasks(run_id, todo, {"helpful": provider}))
        first: float | None = None
        start: dict[str, Any] | None = None
        while True:  # the window starts `warmup` after the first request the server sees
            await asyncio.sleep(0.05)
            now = await asyncio.to_thread(stats, url)
            if first is None and now["requests"]:
                first = now["clock"]
            if start is None and first is not None and now["clock"] - first >= args.warmup * 60:
                start = now
            if start is not None and now["clock"] - start["clock"] >= args.minutes * 60:
                break
            if run.done():
                raise SystemExit(f"the run ended before {args.minutes} simulated minutes: give more tasks")
        run.cancel()
        try:
            await run
        except asyncio.CancelledError:
            pass
        await provider.aclose()
        cpu = time.process_time() - cpu
    assert start is not None
    minutes = (now["clock"] - start["clock"]) / 60
    requests = now["requests"] - start["requests"]
    limited = now["rate_limited"] - start["rate_limited"]
    admitted = requests - limited
    tokens = now["admitted_tokens"] - start["admitted_tokens"]
    gate = next(iter(engine._adaptive.values()))
    return {
        "minutes": minutes,
        "rpm_share": admitted / minutes / args.rpm,
        "tpm_share": tokens / minutes / args.tpm,
        "limited_share": limited / requests if requests else 0.0,
        "requests": requests,
        "limited": limited,
        "decreases": gate.decreases,
        "cpu_us": cpu / max(admitted, 1) * 1e6,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rpm", type=int, default=600, help="the server's (and the budget's) requests per minute")
    ap.add_argument("--tpm", type=int, default=30_000, help="the server's (and the budget's) tokens per minute")
    ap.add_argument("--minutes", type=float, default=5.0, help="simulated minutes measured")
    ap.add_argument("--warmup", type=float, default=1.0, help="simulated minutes before the measured window")
    ap.add_argument("--time-scale", type=float, default=2.0, help="simulated seconds per real second")
    ap.add_argument("--latency", type=float, default=0.02, help="the server's latency, real seconds")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each setting")
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, load "
        f"{os.getloadavg()[0]:.1f}; server limits {args.rpm:,} rpm, {args.tpm:,} tpm; {args.minutes:g} simulated "
        f"minutes at {args.time_scale:g}x; latency {args.latency * 1000:g} ms real; concurrency {args.concurrency}"
    )
    config = MockConfig(latency=args.latency, rpm=args.rpm, tpm=args.tpm, time_scale=args.time_scale)
    print(
        f"\n{'setting':<16} {'sim min':>7} {'req/limit':>9} {'tok/limit':>9} {'binding':>8} {'429 share':>9} "
        f"{'requests':>8} {'429s':>6} {'AIMD halvings':>13}"
    )
    with serve_in_subprocess(config) as server, tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            for budget in (True, False):
                name = "budget = limit" if budget else "no budget"
                out = asyncio.run(one_setting(server.url, args, budget, Path(tmp) / f"{r}-{budget}.db", f"{r}{budget}"))
                binding = max(out["rpm_share"], out["tpm_share"])
                print(
                    f"{name:<16} {out['minutes']:>7.2f} {out['rpm_share']:>9.3f} {out['tpm_share']:>9.3f} "
                    f"{binding:>8.3f} {out['limited_share']:>9.2%} {out['requests']:>8,} {out['limited']:>6,} "
                    f"{out['decreases']:>13}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
