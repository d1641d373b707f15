"""Engine throughput: juge's engine vs a bare asyncio loop calling the same provider.

Both run N judge calls against a scripted provider that sleeps `latency` seconds per
call (a stand-in for network time), with the same concurrency. juge additionally
renders templates, parses strictly, logs every call and writes every judgment to
SQLite. The ratio says what that bookkeeping costs; a second juge run shows the
cache (zero calls).

    python bench/throughput.py [--n 400] [--concurrency 16] [--latency 0.02]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers import Request, make_provider
from juge.store import Store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.02)
    args = ap.parse_args()

    judge = judge_from_dict({"name": "pf", "setup": "passfail", "description": "Is the answer polite?", "model": "m"})
    cases = [Case(id=f"c{i}", question=f"question {i}", output=f"answer {i}") for i in range(args.n)]
    provider = make_provider("scripted", default="PASS\nPolite.", delay=args.latency)

    async def baseline() -> None:
        sem = asyncio.Semaphore(args.concurrency)

        async def one(case: Case) -> None:
            async with sem:
                await provider.complete(Request(messages=({"role": "user", "content": case.output or ""},), model="m"))

        await asyncio.gather(*(one(c) for c in cases))

    t0 = time.perf_counter()
    asyncio.run(baseline())
    base = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.db") as store:
        engine = Engine(store, EngineOptions(concurrency=args.concurrency, progress=False))
        tasks = build_tasks(cases, [judge])
        run_id = store.create_run(dataset_hash="bench", juge_version="bench", cases=cases)
        t0 = time.perf_counter()
        asyncio.run(engine.run_tasks(run_id, tasks, {"pf": provider}))
        ours = time.perf_counter() - t0
        run2 = store.create_run(dataset_hash="bench", juge_version="bench", cases=cases)
        engine2 = Engine(store, EngineOptions(concurrency=args.concurrency, progress=False))
        t0 = time.perf_counter()
        asyncio.run(engine2.run_tasks(run2, tasks, {"pf": provider}))
        cached = time.perf_counter() - t0
        assert engine2.stats["calls"] == 0

    print(f"{args.n} calls, concurrency {args.concurrency}, simulated latency {args.latency * 1000:.0f} ms")
    print(f"bare asyncio loop : {base:6.2f} s  ({args.n / base:7.1f} calls/s)")
    print(f"juge engine       : {ours:6.2f} s  ({args.n / ours:7.1f} calls/s)")
    print(f"juge, all cached  : {cached:6.2f} s  ({args.n / cached:7.1f} judgments/s, 0 calls)")
    print(f"ratio juge / bare : {base / ours:.2f} (1.0 = no overhead)")


if __name__ == "__main__":
    main()
