"""What the store and the response cache cost per judge call, and how fast a fully cached re-run is.

1. Store overhead at 1,000 calls/s. The engine judges N cases (default 5,000) with a scripted
   provider that answers after 50 ms, at concurrency 50: 50 / 0.05 s = 1,000 calls/s. Three
   variants run in the same process, one after another:

   - **ours**: the real store (SQLite, WAL) with group commit, as ``juge run`` uses it;
   - **commit each**: the same store with every write committed on its own (the engine before
     group commit: three commits per call);
   - **postgresql** (with ``--postgres URL`` of an empty database): ours on PostgreSQL, CPU of
     juge's process only (the server's is not counted);
   - **no store**: the baseline; the call log, cache and judgment writes do nothing and the cache
     never hits (everything else, rendering, parsing and asyncio, is the same).

   Overhead per call = (CPU seconds of the variant - CPU seconds of "no store") / N, in µs of
   process CPU time (user + system); at 1,000 calls/s one call's budget on one core is 1,000 µs,
   so the overhead is also printed as a share of a core.

2. A fully cached re-run of C calls (default 10,000). ``juge run`` on an eval of C cases against
   the mock model server (in its own process, no latency) fills the cache; the same eval is run
   again as a new run (the first is finished, so it is not resumed), in-process with
   ``run_eval`` and then as the ``juge run`` command (process start-up included). The server
   counts the requests of each re-run: the target is zero, and under 3 s.

    python bench/store.py [--calls 5000] [--cached-calls 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from juge.config import load_eval
from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers import make_provider
from juge.runner import run_eval
from juge.store import Store, open_store
from juge.testing.mockserver import MockConfig, serve_in_subprocess

RATE_LATENCY, RATE_CONCURRENCY = 0.05, 50  # 50 calls in flight, 50 ms each: 1,000 calls/s


class CommitEachStore(Store):
    """The store as it was before group commit: every write is its own transaction."""

    @contextmanager
    def grouped(self) -> Iterator[None]:
        yield


class NoStore(Store):
    """The baseline: the engine's per-call writes do nothing and the cache never hits."""

    def log_call(self, **_: Any) -> None:
        pass

    def cache_get(self, key: str) -> dict[str, Any] | None:
        return None

    def save_judgment(self, *_: Any) -> bool:
        return True


def paced_run(store: Store, n: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of judging n cases at 1,000 calls/s."""
    judge = judge_from_dict(
        {
            "name": "helpful",
            "setup": "passfail",
            "model": "scripted-1",
            "description": "The answer does what the customer asked.",
        }
    )
    cases = [
        Case(
            id=f"c{i}",
            question=f"Question {i}: which bread for a picnic of {i}?",
            output=f"Take {i % 7 + 2} sourdough loaves (#{i}).",
        )
        for i in range(n)
    ]
    provider = make_provider("scripted", default="PASS\nThe answer does what was asked.", delay=RATE_LATENCY)
    engine = Engine(store, EngineOptions(concurrency=RATE_CONCURRENCY, progress=False))
    run_id = store.create_run(dataset_hash="bench", juge_version="bench", cases=cases)
    cpu, wall = time.process_time(), time.perf_counter()
    stored = asyncio.run(engine.run_tasks(run_id, build_tasks(cases, [judge]), {judge.name: provider}))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if stored != n or provider.calls != n:
        raise SystemExit(f"{type(store).__name__}: stored {stored} of {n} with {provider.calls} calls")
    return cpu, wall


def write_eval(folder: Path, base_url: str, n: int) -> Path:
    cases = "".join(
        f'{{"id": "c{i}", "question": "Question {i}: which bread for a picnic of {i}?", '
        f'"output": "Take {i % 7 + 2} sourdough loaves (#{i})."}}\n'
        for i in range(n)
    )
    (folder / "cases.jsonl").write_text(cases, encoding="utf-8")
    path = folder / "eval.toml"
    path.write_text(
        f'''
name = "cached-rerun"
cases = "cases.jsonl"
[provider]
name = "openai"
options = {{ base_url = "{base_url}" }}
[[judges]]
name = "helpful"
setup = "passfail"
description = "The answer does what the customer asked."
model = "{MockConfig().model}"
[engine]
concurrency = 256
retries = 0
''',
        encoding="utf-8",
    )
    return path


def server_requests(url: str) -> int:
    return httpx.get(url.removesuffix("/v1") + "/stats", timeout=10, trust_env=False).json()["requests"]


def store_overhead(n: int, postgres: str | None = None) -> None:
    print(
        f"1. store overhead: {n:,} judge calls at {RATE_CONCURRENCY / RATE_LATENCY:,.0f} calls/s "
        f"(scripted provider, {RATE_LATENCY * 1000:g} ms, concurrency {RATE_CONCURRENCY})"
    )
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, kind in (("no store", NoStore), ("ours (group commit)", Store), ("commit each", CommitEachStore)):
            with kind(Path(tmp) / f"{kind.__name__}.db") as store:
                cpu, wall = paced_run(store, n)
            results[label] = cpu
            print(f"   {label:20s} {cpu / n * 1e6:6.0f} µs CPU per call, {n / wall:6.0f} calls/s")
    if postgres:
        with open_store(postgres) as store:
            if store.list_runs():
                raise SystemExit("--postgres: give an empty database (it holds runs, whose cache would answer)")
            cpu, wall = paced_run(store, n)
        results["postgresql"] = cpu
        print(f"   {'postgresql (group)':20s} {cpu / n * 1e6:6.0f} µs CPU per call, {n / wall:6.0f} calls/s")
    base = results["no store"]
    ours = (results["ours (group commit)"] - base) / n * 1e6
    each = (results["commit each"] - base) / n * 1e6
    print(
        f"   store + cache overhead per call: ours {ours:.0f} µs ({ours / 1000:.1%} of a core at 1,000 calls/s); "
        f"commit each {each:.0f} µs; commit each / ours = {each / max(ours, 1e-9):.1f}"
    )
    if postgres:
        pg = (results["postgresql"] - base) / n * 1e6
        print(f"   on PostgreSQL: {pg:.0f} µs per call in juge's process (the server's own CPU is not counted)")


def cached_rerun(n: int) -> None:
    print(f"2. fully cached re-run of {n:,} judge calls (mock server, no latency)")
    env = dict(os.environ, NO_COLOR="1")
    with serve_in_subprocess(MockConfig()) as server, tempfile.TemporaryDirectory() as tmp:
        eval_path = write_eval(Path(tmp), server.url, n)
        db = Path(tmp) / "juge.db"
        config = load_eval(eval_path)
        quiet = Console(stderr=True, quiet=True)
        with Store(db) as store:
            started = time.perf_counter()
            first = run_eval(config, store, progress=False, console=quiet)
            first_s = time.perf_counter() - started
            before = server_requests(server.url)
            started = time.perf_counter()
            again = run_eval(config, store, progress=False, resume=False, console=quiet)
            again_s = time.perf_counter() - started
            in_process_requests = server_requests(server.url) - before
        before = server_requests(server.url)
        started = time.perf_counter()
        cli = subprocess.run(
            [sys.executable, "-m", "juge.cli", "run", str(eval_path), "--db", str(db), "--no-progress"],
            capture_output=True,
            text=True,
            env=env,
        )
        cli_s = time.perf_counter() - started
        cli_requests = server_requests(server.url) - before
    if first.engine_stats.get("calls") != n or again.stored_now != n or cli.returncode != 0:
        raise SystemExit(
            f"unexpected: first {first.engine_stats}, re-run stored {again.stored_now}, "
            f"juge run exit {cli.returncode}: {cli.stderr[-500:]}"
        )
    print(f"   first run (model calls)   {first_s:6.2f} s, {first.engine_stats['calls']:,} calls")
    print(
        f"   re-run, run_eval          {again_s:6.2f} s, {in_process_requests} requests at the server, "
        f"{again.engine_stats.get('calls', 0)} engine calls, {again.engine_stats.get('cache_hits', 0):,} cache hits"
    )
    print(f"   re-run, juge run command  {cli_s:6.2f} s (process start-up included), {cli_requests} requests")
    met = in_process_requests == 0 and cli_requests == 0 and again_s < 3
    print(
        f"   target zero model calls and < 3 s: {'met' if met else 'NOT met'}; "
        f"first run / cached re-run = {first_s / again_s:.1f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=5000, help="judge calls per store variant at 1,000 calls/s")
    ap.add_argument("--cached-calls", type=int, default=10_000, help="judge calls of the cached re-run")
    ap.add_argument("--postgres", metavar="URL", help="also measure the store in this (empty) PostgreSQL database")
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    store_overhead(args.calls, args.postgres)
    cached_rerun(args.cached_calls)


if __name__ == "__main__":
    main()
