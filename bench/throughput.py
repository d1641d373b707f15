"""Throughput of juge's engine against the mock model server, vs the limit and two baselines.

Workload: N pass/fail judge calls (default 10,000) against ``juge.testing.mockserver`` run in its
own process (its own core) with a fixed latency (default 50 ms), at each concurrency (default 64,
256, 1,024). Every client sends the same requests: the judge's rendered prompts, one per case.

- **ours**: ``Engine.run_tasks`` with ``OpenAICompatProvider``: template rendering, cache look-up,
  the HTTP call, strict parsing, the call log, the cache entry and the judgment in SQLite (a new
  database per concurrency, so every call goes to the server).
- **limit** = min(concurrency / latency, server capacity). The server capacity is measured in the
  same run by the leanest client we could write: raw asyncio streams, one keep-alive connection per
  slot, a hand-written HTTP/1.1 request and only the body's JSON parsed. It is what the server
  answers per second at that concurrency when the client costs almost nothing; above it the server
  (one Python process, one core) and not the client is the bottleneck.
- **SDK gather**: a plain ``asyncio.gather`` over ``openai.AsyncOpenAI().chat.completions.create``
  (its default HTTP client, retries off) with a semaphore of the same concurrency. It is slow, so it
  runs ``--sdk-calls`` calls (default 2,000), not N; calls/s is what is compared.
- **SDK+aiohttp gather**: the same, with the SDK's aiohttp transport (``openai[aiohttp]``,
  ``DefaultAioHttpClient``): the fair comparison, since juge's provider also talks over aiohttp.
- **juge run**: the command end to end in its own process (start-up, reading and checking the
  cases file, creating the run, judging, the summary), ``--calls`` cases against the same server;
  calls/s = calls / the process's wall time. Beside the engine alone it shows what the rest costs.
- **sequential**: the same SDK call in a plain ``for`` loop, one call at a time. Only
  ``--sequential-calls`` (default 200) are timed and the rate is scaled to N (the output says so).

    python bench/throughput.py [--calls 10000] [--latency 0.05] [--concurrency 64 256 1024]

The machine has 2 cores: the server takes one, the client the other, so other work on the machine
lowers every figure; the ratios are measured in the same run. Target: ours >= 0.9 of the limit at 256.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import openai

from juge.data.records import Case
from juge.engine import Engine, EngineOptions, JudgeTask, build_tasks
from juge.judges import judge_from_dict
from juge.providers.openai_compat import OpenAICompatProvider
from juge.store import Store
from juge.testing.mockserver import MockConfig, serve_in_subprocess

MODEL = MockConfig().model


@dataclass
class Rate:
    calls_per_s: float
    cpu_us: float  # client process CPU time (user + system) per call, µs; the server is another process


@dataclass
class Level:
    concurrency: int
    server: Rate  # the raw client's: the server's capacity at this concurrency
    ours: Rate
    sdk: Rate
    max_inflight: int  # the most requests the server had in service during our run
    sdk_aiohttp: Rate
    run: Rate  # `juge run` end to end, start-up included

    def limit(self, latency: float) -> float:
        return min(self.concurrency / latency, self.server.calls_per_s)


def timed(n: int, run: Any) -> Rate:
    """Rate of `asyncio.run(run)` doing n calls, with the client's CPU per call."""
    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(run)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return Rate(n / wall, cpu / n * 1e6)


def judge_tasks(n: int, tag: str) -> list[JudgeTask]:
    """n pass/fail judge tasks on distinct cases (`tag` makes their prompts differ from another level's)."""
    judge = judge_from_dict(
        {
            "name": "helpful",
            "setup": "passfail",
            "model": MODEL,
            "description": "The answer does what the customer asked.",
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


def prompts(tasks: list[JudgeTask]) -> list[list[dict[str, str]]]:
    return [list(t.judge.render(t.case, order=t.order)) for t in tasks]


async def raw_client(url: str, bodies: list[list[dict[str, str]]], concurrency: int) -> None:
    """The leanest client: `concurrency` keep-alive connections, each sending the next body."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/") + "/chat/completions"
    todo = iter(bodies)

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        for messages in todo:
            body = json.dumps({"model": MODEL, "messages": messages, "temperature": 0.0, "max_tokens": 1024}).encode()
            writer.write(
                f"POST {path} HTTP/1.1\r\nhost: {parts.netloc}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\n\r\n".encode()
                + body
            )
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
            )
            json.loads(await reader.readexactly(length))
        writer.close()

    await asyncio.gather(*(connection() for _ in range(concurrency)))


async def ours(url: str, tasks: list[JudgeTask], concurrency: int, db: Path) -> Rate:
    """The engine judging `tasks`; only `run_tasks` is timed (not creating the run or checking it after)."""
    provider = OpenAICompatProvider(base_url=url)
    with Store(db) as store:
        engine = Engine(store, EngineOptions(concurrency=concurrency, retries=0, timeout=60, progress=False))
        run_id = store.create_run(dataset_hash="bench", juge_version="bench", cases=[t.case for t in tasks])
        cpu, wall = time.process_time(), time.perf_counter()
        stored = await engine.run_tasks(run_id, tasks, {tasks[0].judge.name: provider})
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        await provider.aclose()
        outcomes = {j.outcome for j in store.judgments(run_id)}
    if stored != len(tasks) or engine.stats["calls"] != len(tasks) or outcomes != {"ok"}:
        raise SystemExit(f"ours: stored {stored} of {len(tasks)}, {engine.stats['calls']} calls, outcomes {outcomes}")
    return Rate(len(tasks) / wall, cpu / len(tasks) * 1e6)


async def sdk_gather(url: str, bodies: list[list[dict[str, str]]], concurrency: int) -> None:
    client = openai.AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=0, timeout=60)
    semaphore = asyncio.Semaphore(concurrency)

    async def one(messages: list[dict[str, str]]) -> str | None:
        async with semaphore:
            completion = await client.chat.completions.create(
                model=MODEL,
                messages=messages,  # type: ignore[arg-type]
                temperature=0.0,
                max_tokens=1024,
            )
            return completion.choices[0].message.content

    await asyncio.gather(*(one(m) for m in bodies))
    await client.close()


async def sdk_aiohttp_gather(url: str, bodies: list[list[dict[str, str]]], concurrency: int) -> None:
    """`sdk_gather` with the SDK's aiohttp transport (openai[aiohttp])."""
    client = openai.AsyncOpenAI(
        base_url=url, api_key="not-needed", max_retries=0, timeout=60, http_client=openai.DefaultAioHttpClient()
    )
    semaphore = asyncio.Semaphore(concurrency)

    async def one(messages: list[dict[str, str]]) -> str | None:
        async with semaphore:
            completion = await client.chat.completions.create(
                model=MODEL,
                messages=messages,  # type: ignore[arg-type]
                temperature=0.0,
                max_tokens=1024,
            )
            return completion.choices[0].message.content

    await asyncio.gather(*(one(m) for m in bodies))
    await client.close()


def juge_run(url: str, tasks: list[JudgeTask], concurrency: int, folder: Path) -> Rate:
    """`juge run` on the cases of `tasks` in its own process: calls / wall time, start-up included."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as out:
        for t in tasks:
            out.write(json.dumps({"id": t.case.id, "question": t.case.question, "output": t.case.output}) + "\n")
    (folder / "eval.toml").write_text(
        f'cases = "cases.jsonl"\n[provider]\nname = "openai"\noptions = {{ base_url = "{url}" }}\n'
        f'[[judges]]\nname = "helpful"\nsetup = "passfail"\nmodel = "{MODEL}"\n'
        'description = "The answer does what the customer asked."\n'
        f"[engine]\nconcurrency = {concurrency}\nretries = 0\ntimeout = 60\n"
    )
    command = [sys.executable, "-m", "juge.cli", "run", str(folder / "eval.toml"), "--db", str(folder / "j.db")]
    start = time.perf_counter()
    child = subprocess.Popen([*command, "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"juge run failed: {child.stderr.read().decode()[-2000:] if child.stderr else ''}")
    return Rate(len(tasks) / wall, (usage.ru_utime + usage.ru_stime) / len(tasks) * 1e6)


async def sdk_sequential(url: str, bodies: list[list[dict[str, str]]]) -> None:
    client = openai.AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=0, timeout=60)
    for messages in bodies:
        await client.chat.completions.create(
            model=MODEL,
            messages=messages,
            temperature=0.0,  # type: ignore[arg-type]
            max_tokens=1024,
        )
    await client.close()


def reset_server_stats(url: str) -> None:
    httpx.post(url.removesuffix("/v1") + "/stats", timeout=10, trust_env=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=10_000, help="judge calls per concurrency level (ours and raw)")
    ap.add_argument("--latency", type=float, default=0.05, help="the mock server's fixed latency, seconds")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[64, 256, 1024])
    ap.add_argument("--sdk-calls", type=int, default=2000, help="calls for the openai SDK gather baseline")
    ap.add_argument("--sequential-calls", type=int, default=200, help="calls timed for the sequential loop")
    args = ap.parse_args()

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"mock server in its own process, latency {args.latency * 1000:g} ms fixed; {args.calls:,} calls per level"
    )
    levels: list[Level] = []
    with serve_in_subprocess(MockConfig(latency=args.latency)) as server, tempfile.TemporaryDirectory() as tmp:
        sequential = timed(
            args.sequential_calls, sdk_sequential(server.url, prompts(judge_tasks(args.sequential_calls, "seq")))
        ).calls_per_s
        print(
            f"sequential openai SDK loop: {sequential:.1f} calls/s ({args.sequential_calls} calls timed; "
            f"{args.calls:,} would take {args.calls / sequential:.0f} s)",
            flush=True,
        )
        for concurrency in args.concurrency:
            tasks = judge_tasks(args.calls, f"c{concurrency}")
            bodies = prompts(tasks)
            server_rate = timed(len(bodies), raw_client(server.url, bodies, concurrency))
            reset_server_stats(server.url)
            our_rate = asyncio.run(ours(server.url, tasks, concurrency, Path(tmp) / f"c{concurrency}.db"))
            max_inflight = server.stats()["max_inflight"]
            sdk_bodies = bodies[: args.sdk_calls]
            sdk_rate = timed(len(sdk_bodies), sdk_gather(server.url, sdk_bodies, concurrency))
            aio_rate = timed(len(sdk_bodies), sdk_aiohttp_gather(server.url, sdk_bodies, concurrency))
            run_rate = juge_run(
                server.url, judge_tasks(args.calls, f"r{concurrency}"), concurrency, Path(tmp) / f"r{concurrency}"
            )
            levels.append(Level(concurrency, server_rate, our_rate, sdk_rate, max_inflight, aio_rate, run_rate))
            print(
                f"concurrency {concurrency:5d}: raw client (server capacity) {server_rate.calls_per_s:6.0f}/s "
                f"({server_rate.cpu_us:4.0f} µs CPU/call), ours {our_rate.calls_per_s:6.0f}/s "
                f"({our_rate.cpu_us:4.0f} µs; server saw <= {max_inflight} at once), "
                f"SDK gather {sdk_rate.calls_per_s:5.0f}/s ({sdk_rate.cpu_us:5.0f} µs), "
                f"SDK+aiohttp {aio_rate.calls_per_s:5.0f}/s ({aio_rate.cpu_us:5.0f} µs), "
                f"juge run {run_rate.calls_per_s:5.0f}/s ({run_rate.cpu_us:4.0f} µs)",
                flush=True,
            )

    print()
    print(
        "| concurrency | limit c/latency | server capacity | limit | ours calls/s | ours/limit "
        "| ours/SDK gather | ours/SDK+aiohttp | juge run calls/s | juge run/limit | ours/sequential |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for lv in levels:
        ours_rate = lv.ours.calls_per_s
        print(
            f"| {lv.concurrency} | {lv.concurrency / args.latency:.0f} | {lv.server.calls_per_s:.0f}"
            f" | {lv.limit(args.latency):.0f} | {ours_rate:.0f} | {ours_rate / lv.limit(args.latency):.2f}"
            f" | {ours_rate / lv.sdk.calls_per_s:.1f} | {ours_rate / lv.sdk_aiohttp.calls_per_s:.1f}"
            f" | {lv.run.calls_per_s:.0f} | {lv.run.calls_per_s / lv.limit(args.latency):.2f}"
            f" | {ours_rate / sequential:.0f} |"
        )
    cpu = ", ".join(
        f"{lv.concurrency}: ours {lv.ours.cpu_us:.0f}, juge run {lv.run.cpu_us:.0f}, raw {lv.server.cpu_us:.0f}, "
        f"SDK {lv.sdk.cpu_us:.0f}, SDK+aiohttp {lv.sdk_aiohttp.cpu_us:.0f}"
        for lv in levels
    )
    print(f"client CPU per call, µs (one core; 1e6 / µs bounds calls/s): {cpu}")
    print(
        f"(limit = min(concurrency / {args.latency:g} s, server capacity measured by a raw-socket client in this "
        f"run); SDK gather = asyncio.gather over the openai SDK at the same concurrency ({args.sdk_calls:,} calls); "
        f"sequential = {sequential:.1f} calls/s from {args.sequential_calls} timed calls)"
    )
    at_256 = [lv for lv in levels if lv.concurrency == 256]
    if at_256:
        ratio = at_256[0].ours.calls_per_s / at_256[0].limit(args.latency)
        print(f"target ours/limit >= 0.9 at concurrency 256: {ratio:.2f} -> {'met' if ratio >= 0.9 else 'NOT met'}")


if __name__ == "__main__":
    main()
