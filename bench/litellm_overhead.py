"""CPU per call of the `litellm` provider against juge's own OpenAI-compatible one, on the same server.

Workload: N chat completion calls (default 2,000) with a judge-sized prompt against ``juge.testing.mockserver``
in its own process (its own core), fixed latency (default 20 ms), at one concurrency (default 64), through
each provider's ``complete`` inside one ``asyncio.gather`` with a semaphore:

- **ours**: ``OpenAICompatProvider`` (aiohttp, the JSON body parsed by juge).
- **litellm**: ``LiteLLMProvider`` (``litellm.acompletion`` with the ``openai/`` route and ``api_base``, its
  retries off), the same requests.

Both run twice, alternating, and the lower CPU per call of each is kept (other work on the machine only adds).
Also timed: ``import litellm`` in a fresh interpreter (paid once per process that builds the provider).
Prints CPU µs per call, calls/s and the ratio litellm / ours; ``--json`` writes them.

    pip install -e '.[litellm]'
    python bench/litellm_overhead.py [--calls 2000] [--concurrency 64] [--latency 0.02]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from juge.providers.base import Request
from juge.providers.litellm import LiteLLMProvider
from juge.providers.openai_compat import OpenAICompatProvider
from juge.testing.mockserver import MockConfig, serve_in_subprocess

PROMPT = (
    "You are grading an answer. Reply PASS or FAIL on the first line, then one sentence.\n\n"
    "<question>\nAre you open on Sunday? (case {i})\n</question>\n<response>\nYes, from 8:00 to 13:00.\n</response>"
)


def requests(n: int, model: str) -> list[Request]:
    return [Request(messages=({"role": "user", "content": PROMPT.format(i=i)},), model=model) for i in range(n)]


async def timed(provider: Any, batch: list[Request], concurrency: int) -> dict[str, float]:
    gate = asyncio.Semaphore(concurrency)

    async def one(request: Request) -> None:
        async with gate:
            await provider.complete(request)

    # A few calls first: opening connections and LiteLLM's first-call set-up are not per call.
    await asyncio.gather(*(one(r) for r in batch[:20]))
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(r) for r in batch))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await provider.aclose()
    return {"cpu_us_per_call": cpu / len(batch) * 1e6, "calls_per_s": len(batch) / wall}


def import_seconds() -> float:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import litellm"], check=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    config = MockConfig(latency=args.latency)
    results: dict[str, list[dict[str, float]]] = {"ours": [], "litellm": []}
    with serve_in_subprocess(config) as server:
        for _ in range(2):
            ours = OpenAICompatProvider(base_url=server.url)
            results["ours"].append(asyncio.run(timed(ours, requests(args.calls, config.model), args.concurrency)))
            theirs = LiteLLMProvider(api_base=server.url, api_key="not-needed")
            batch = requests(args.calls, "openai/" + config.model)
            results["litellm"].append(asyncio.run(timed(theirs, batch, args.concurrency)))
    best = {name: min(runs, key=lambda r: r["cpu_us_per_call"]) for name, runs in results.items()}
    ratio = best["litellm"]["cpu_us_per_call"] / best["ours"]["cpu_us_per_call"]
    seconds = import_seconds()
    print(f"{args.calls} calls, concurrency {args.concurrency}, latency {args.latency * 1000:.0f} ms, "
          f"{platform.python_implementation()} {platform.python_version()}, load {os.getloadavg()[0]:.1f}")  # fmt: skip
    for name, r in best.items():
        print(f"  {name:8s} {r['cpu_us_per_call']:8.0f} µs CPU per call  {r['calls_per_s']:8.0f} calls/s")
    print(f"  litellm / ours CPU per call: {ratio:.1f}x; import litellm: {seconds:.1f} s")
    if args.json:
        args.json.write_text(
            json.dumps({"calls": args.calls, "concurrency": args.concurrency, "latency": args.latency,
                        "runs": results, "best": best, "ratio": ratio, "import_seconds": seconds}, indent=1)
        )  # fmt: skip


if __name__ == "__main__":
    main()
