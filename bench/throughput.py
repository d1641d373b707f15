"""Throughput of juge's engine against the mock model server: capacity, the Engine with and without uvloop and
orjson, `juge run` end to end, and the openai SDK, in one run against one server.

Workload: pass/fail judge calls (default 3,000 per row) against ``juge.testing.mockserver`` run in its own
process with a fixed latency (default 50 ms), at one concurrency (default 256). Every client sends the same kind of
request: the judge's rendered prompt of a case, on cases no other row used (no row reads another's cache). Rows run
``--rounds`` times (default 3), in alternating order, and the table gives medians: on a shared machine the CPU per
call (user + system of this process, or of the child for `juge run`) and ratios within one run are the figures to
read, not calls/s.

- **capacity**: the leanest client we could write: raw asyncio streams, one keep-alive connection per slot, a
  hand-written HTTP/1.1 request and only the body's JSON parsed. *Limit* = min(concurrency / latency, capacity).
- **Engine**: ``Engine.run_tasks`` with ``OpenAICompatProvider``: template rendering, cache look-up, the HTTP call,
  strict parsing, the call log, the cache entry and the judgment in SQLite (a new database per row), on uvloop or
  asyncio's loop, with orjson on or off (``juge.fastjson.enabled``). The first is juge's default.
- **juge run**: the command end to end in its own process (start-up, reading and checking the cases file, creating
  the run, judging, the summary), with its default fast paths and with ``JUGE_FAST=0``.
- **openai SDK**: ``asyncio.gather`` over ``openai.AsyncOpenAI().chat.completions.create`` (retries off) with a
  semaphore of the same concurrency, over the SDK's aiohttp transport (``openai[aiohttp]``, the fair comparison) and
  its default httpx one; ``--sdk-calls`` calls each (skipped when the SDK is not installed: ``.[bench]``).
- **Inspect AI** and **DeepEval**, where installed (Inspect with ``.[bench]``; DeepEval by hand, best in an
  environment of its own: see pyproject.toml): one judge call per case through each one's own evaluation (``eval``
  with ``generate()``; ``evaluate`` with a GEval metric), each in a child process with only the evaluation timed
  (``bench/peers.py``); ``--peer-calls`` calls each; a row is skipped, with a line that says so, when not installed.
- **HTTP clients** (``--clients``, where pyreqwest is installed: ``.[fast-http]``): the default Engine and
  `juge run` on pyreqwest (``http = "pyreqwest"``, ``JUGE_HTTP``), and each client alone: the provider's transport
  (aiohttp, pyreqwest) posting the same request bodies with a semaphore of the same concurrency, no engine, no
  parsing; and the Engine with the Anthropic provider (the mock's /v1/messages) on aiohttp, on pyreqwest, and
  through the anthropic SDK (its httpx client, the path before issue 32; where the SDK is installed).
- ``--profile``: the Engine's CPU per call by part, in µs measured directly (``bench/engine_parts.py``): a row of
  the Engine on a provider that answers at once (juge's own work; the rest of the Engine's CPU is the HTTP client
  and its event-loop work), and render, cache key, JSON, parse, the typed record and the store each timed alone on
  the same prompts and answers; then the default Engine once more under cProfile, its self time grouped by the
  same parts (cProfile inflates Python-level calls: read those shares beside the µs).

    python bench/throughput.py [--calls 3000] [--concurrency 256] [--rounds 3] [--profile]

The machine has 2 cores: the server takes one, the client the other. Target: Engine >= 0.9 of the limit at 256.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib.util
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

try:
    import openai
except ImportError:  # the SDK baselines are skipped (pip install -e '.[bench]')
    openai = None  # type: ignore[assignment]
try:
    import uvloop
except ImportError:
    uvloop = None  # type: ignore[assignment]
try:
    import pyreqwest
except ImportError:  # the pyreqwest rows are skipped (pip install -e '.[fast-http]')
    pyreqwest = None

from juge import fastjson
from juge.data.records import Case
from juge.engine import Engine, EngineOptions, JudgeTask, build_tasks
from juge.judges import judge_from_dict
from juge.providers.openai_compat import OpenAICompatProvider
from juge.providers.transport import make_transport
from juge.store import Store
from juge.testing.mockserver import MockConfig, serve_in_subprocess

sys.path.insert(0, str(Path(__file__).parent))
import engine_parts  # noqa: E402 (bench/engine_parts.py, beside this file)
import peers  # noqa: E402 (bench/peers.py, beside this file)

MODEL = MockConfig().model


@dataclass
class Rate:
    calls_per_s: float
    cpu_us: float  # client process CPU time (user + system) per call, µs; the server is another process


# The engine's variants: (row name, uvloop, orjson). The first is juge's default where uvloop is installed.
VARIANTS = [
    ("Engine, uvloop + orjson", True, True),
    ("Engine, asyncio + orjson", False, True),
    ("Engine, uvloop + json", True, False),
    ("Engine, asyncio + json (JUGE_FAST=0)", False, False),
]


def timed(n: int, run: Any, *, fast_loop: bool = False) -> Rate:
    """Rate of `asyncio.run(run)` (on uvloop with `fast_loop`) doing n calls, with the client's CPU per call."""
    cpu, wall = time.process_time(), time.perf_counter()
    with asyncio.Runner(loop_factory=uvloop.new_event_loop if fast_loop else None) as runner:
        runner.run(run)
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


async def ours(
    url: str,
    tasks: list[JudgeTask],
    concurrency: int,
    db: Path,
    profile: cProfile.Profile | None = None,
    http: str | None = None,
    anthropic: str | None = None,
) -> Rate:
    """The engine judging `tasks`; only `run_tasks` is timed (not creating the run or checking it after).
    `anthropic`: with the Anthropic provider instead (on the server's /v1/messages), over juge's client ("juge")
    or the anthropic SDK ("sdk", its httpx client: the path before issue 32)."""
    provider: Any = OpenAICompatProvider(base_url=url, http=http)
    if anthropic is not None:
        from juge.providers.anthropic import AnthropicProvider

        sdk_client = None
        if anthropic == "sdk":
            import anthropic as sdk

            sdk_client = sdk.DefaultAsyncHttpxClient()
        provider = AnthropicProvider(base_url=url.removesuffix("/v1"), api_key="k", http=http, http_client=sdk_client)
    with Store(db) as store:
        engine = Engine(store, EngineOptions(concurrency=concurrency, retries=0, timeout=60, progress=False))
        run_id = store.create_run(dataset_hash="bench", juge_version="bench", cases=[t.case for t in tasks])
        if profile is not None:
            profile.enable()
        cpu, wall = time.process_time(), time.perf_counter()
        stored = await engine.run_tasks(run_id, tasks, {tasks[0].judge.name: provider})
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        if profile is not None:
            profile.disable()
        await provider.aclose()
        outcomes = {j.outcome for j in store.judgments(run_id)}
    if stored != len(tasks) or engine.stats["calls"] != len(tasks) or outcomes != {"ok"}:
        raise SystemExit(f"ours: stored {stored} of {len(tasks)}, {engine.stats['calls']} calls, outcomes {outcomes}")
    return Rate(len(tasks) / wall, cpu / len(tasks) * 1e6)


def engine_rate(
    url: str,
    tasks: list[JudgeTask],
    concurrency: int,
    db: Path,
    *,
    fast_loop: bool,
    fast_json: bool,
    profile: cProfile.Profile | None = None,
    http: str | None = None,
    anthropic: str | None = None,
) -> Rate:
    """`ours` on uvloop or asyncio's loop, with orjson on or off (juge.fastjson.enabled), over client `http`."""
    fastjson.enabled = fast_json
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop if fast_loop else None) as runner:
            return runner.run(ours(url, tasks, concurrency, db, profile, http, anthropic))
    finally:
        fastjson.enabled = True


async def transport_only(url: str, bodies: list[list[dict[str, str]]], concurrency: int, client: str) -> None:
    """The provider's HTTP client alone: its transport posts each request body (the Engine's bytes), at most
    `concurrency` at once; the answer's body is read (within the bound) but not parsed."""
    transport = make_transport(client, timeout=60, max_response_bytes=8_000_000, proxy=None, owner="bench")
    headers = {"authorization": "Bearer not-needed", "content-type": "application/json", "accept": "application/json"}
    semaphore = asyncio.Semaphore(concurrency)
    target = url.rstrip("/") + "/chat/completions"

    async def one(messages: list[dict[str, str]]) -> None:
        body = fastjson.dump_bytes({"model": MODEL, "messages": messages, "temperature": 0.0, "max_tokens": 1024})
        async with semaphore:
            status, _, _ = await transport.post(target, body, headers)
        if status != 200:
            raise SystemExit(f"transport {client}: HTTP {status}")

    try:
        await asyncio.gather(*(one(m) for m in bodies))
    finally:
        await transport.aclose()


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


def juge_run(
    url: str,
    tasks: list[JudgeTask],
    concurrency: int,
    folder: Path,
    *,
    fast: bool = True,
    src: Path | None = None,
    http: str = "aiohttp",
) -> Rate:
    """`juge run` on the cases of `tasks` in its own process: calls / wall time, start-up included
    (``JUGE_FAST=0`` without `fast`: asyncio's loop and json; `src`: another checkout's source tree; `http`: the
    HTTP client, ``JUGE_HTTP``)."""
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
    env = {**os.environ, "JUGE_FAST": "1" if fast else "0", "JUGE_HTTP": http}
    # An installed juge has its bytecode compiled (pip does it); without it every run compiles ~120 modules.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src is not None:
        env["PYTHONPATH"] = str(src.resolve())
    child = subprocess.Popen([*command, "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"juge run failed: {child.stderr.read().decode()[-2000:] if child.stderr else ''}")
    return Rate(len(tasks) / wall, (usage.ru_utime + usage.ru_stime) / len(tasks) * 1e6)


def peer_rate(name: str, url: str, calls: int, concurrency: int, tag: str) -> Rate:
    """A peer (bench/peers.py) in its own process: calls / wall time and CPU per call of its evaluation only."""
    child = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "peers.py"), name, url, str(calls), str(concurrency), tag],
        env={**os.environ, **peers.QUIET_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    lines = child.stdout.strip().splitlines()
    if child.returncode != 0 or not lines:
        raise SystemExit(f"{name} failed: {child.stderr[-2000:]}")
    got = json.loads(lines[-1])  # the peer may print its own summary before
    if got["answered"] != calls:
        raise SystemExit(f"{name}: {got['answered']} of {calls} calls answered")
    return Rate(calls / got["wall"], got["cpu"] / calls * 1e6)


async def sdk_sequential(url: str, bodies: list[list[dict[str, str]]]) -> None:
    client = openai.AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=0, timeout=60)
    for messages in bodies:
        await client.chat.completions.create(
            model=MODEL,
            messages=messages,  # type: ignore[arg-type]
            temperature=0.0,
            max_tokens=1024,
        )
    await client.close()


# The parts of the engine's CPU, by where a function lives (cProfile self time). A built-in (C) function's time
# goes to the part of the Python function that called it (sqlite3's execute to the store, re's finditer to the
# parser); uvloop's C loop shows as the built-in method that runs it.
PARTS = [
    ("HTTP client (aiohttp, yarl, multidict, sockets)", ("aiohttp", "yarl", "multidict", "socket", "ssl", "_http_")),
    ("event loop (asyncio, uvloop)", ("asyncio", "uvloop", "selectors", "run_until_complete", "_weakrefset")),
    ("JSON (orjson, json, juge.fastjson)", ("orjson", "/json/", "fastjson")),
    ("store (SQLite and juge.store)", ("sqlite3", "juge/store")),
    ("render (Jinja, juge.judges.render)", ("jinja2", "judges/render", "judges/judge.py", "markupsafe", "<template>")),
    (
        "parse (parsers, textnorm, contradictions, verdicts)",
        ("judges/parsers", "textnorm", "verdict", "contradictions"),
    ),
    ("engine (juge.engine)", ("juge/engine",)),
    ("provider (juge.providers)", ("juge/providers",)),
]
OTHER = "other (pydantic, records, re, ...)"
OWN = "Engine without HTTP (juge's own work)"  # the --profile row (bench/engine_parts.py)


def _part(path: str, name: str) -> str:
    where = f"{path}:{name}"
    return next((label for label, marks in PARTS if any(m in where for m in marks)), OTHER)


def parts(profile: cProfile.Profile) -> dict[str, float]:
    """Self time by part, as shares of the profiled total."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    totals: dict[str, float] = {}
    for (path, _line, name), (_cc, _nc, self_time, _ct, callers) in stats.items():
        shares = [(_part(path, name), self_time)]
        if path == "~" and callers:  # a built-in: its time goes to its callers' parts
            whole = sum(c[2] for c in callers.values()) or 1.0
            shares = [
                (_part(path, name) if c_path == "~" else _part(c_path, c_name), self_time * c[2] / whole)
                for (c_path, _l, c_name), c in callers.items()
            ]
        for part, time_spent in shares:
            totals[part] = totals.get(part, 0.0) + time_spent
    whole = sum(totals.values()) or 1.0
    return {part: t / whole for part, t in sorted(totals.items(), key=lambda kv: -kv[1])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=3000, help="judge calls per row and round")
    ap.add_argument("--latency", type=float, default=0.05, help="the mock server's fixed latency, seconds")
    ap.add_argument("--concurrency", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3, help="rounds; each runs every row once, in alternating order")
    ap.add_argument("--sdk-calls", type=int, default=1000, help="calls for the openai SDK baselines")
    ap.add_argument("--peer-calls", type=int, default=500, help="calls for Inspect AI and DeepEval (0: skip them)")
    ap.add_argument("--sequential-calls", type=int, default=50, help="calls timed for the sequential SDK loop")
    ap.add_argument("--profile", action="store_true", help="also profile the default engine once (cProfile)")
    ap.add_argument("--run-calls", type=int, nargs="*", default=[500], help="more `juge run` rows, at these sizes")
    ap.add_argument("--before-src", type=Path, help="also `juge run` from this source tree (e.g. main's src/)")
    ap.add_argument(
        "--clients",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the HTTP client rows: the Engine on pyreqwest, each client alone (default: on, where pyreqwest is installed)",
    )
    args = ap.parse_args()
    c = args.concurrency
    variants = [v for v in VARIANTS if uvloop is not None or not v[1]]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
        f"Python {platform.python_version()}; mock server in its own process, latency {args.latency * 1000:g} ms; "
        f"{args.calls:,} calls per row, concurrency {c}, {args.rounds} rounds (medians below)",
        flush=True,
    )
    rows: dict[str, list[Rate]] = {}
    tag = iter(range(1_000_000))
    with serve_in_subprocess(MockConfig(latency=args.latency)) as server, tempfile.TemporaryDirectory() as tmp:
        url = server.url

        def fresh(n: int) -> list[JudgeTask]:
            return judge_tasks(n, f"t{next(tag)}")  # new prompts: no row reads another's cache

        def engine_row(name: str, fast_loop: bool, fast_json: bool) -> Rate:
            db = Path(tmp) / f"e{next(tag)}.db"
            return engine_rate(url, fresh(args.calls), c, db, fast_loop=fast_loop, fast_json=fast_json)

        measures: list[tuple[str, Any]] = [
            ("capacity (raw-socket client)", lambda: timed(args.calls, raw_client(url, prompts(fresh(args.calls)), c))),
            *((name, (lambda n=name, lo=lo, js=js: engine_row(n, lo, js))) for name, lo, js in variants),
            (
                "juge run, uvloop + orjson",
                lambda: juge_run(url, fresh(args.calls), c, Path(tmp) / f"r{next(tag)}"),
            ),
            (
                "juge run, JUGE_FAST=0",
                lambda: juge_run(url, fresh(args.calls), c, Path(tmp) / f"r{next(tag)}", fast=False),
            ),
            *(
                (f"juge run, {n:,} calls", (lambda n=n: juge_run(url, fresh(n), c, Path(tmp) / f"r{next(tag)}")))
                for n in args.run_calls
            ),
        ]
        if args.before_src is not None:
            measures += [
                (
                    f"juge run, {n:,} calls, --before-src",
                    (lambda n=n: juge_run(url, fresh(n), c, Path(tmp) / f"r{next(tag)}", src=args.before_src)),
                )
                for n in sorted({args.calls, *args.run_calls})
            ]
        if args.clients and pyreqwest is not None:
            fast_loop = uvloop is not None
            measures += [
                (
                    "Engine, pyreqwest, uvloop + orjson",
                    lambda: engine_rate(
                        url,
                        fresh(args.calls),
                        c,
                        Path(tmp) / f"e{next(tag)}.db",
                        fast_loop=fast_loop,
                        fast_json=True,
                        http="pyreqwest",
                    ),  # fmt: skip
                ),
                *(
                    (
                        f"client alone: {client}",
                        (
                            lambda client=client: timed(
                                args.calls,
                                transport_only(url, prompts(fresh(args.calls)), c, client),
                                fast_loop=fast_loop,
                            )
                        ),
                    )
                    for client in ("aiohttp", "pyreqwest")
                ),
                (
                    "juge run, pyreqwest",
                    lambda: juge_run(url, fresh(args.calls), c, Path(tmp) / f"r{next(tag)}", http="pyreqwest"),
                ),
                *(
                    (
                        f"Engine, anthropic provider, {name}",
                        (
                            lambda http=http, how=how: engine_rate(
                                url,
                                fresh(args.calls),
                                c,
                                Path(tmp) / f"e{next(tag)}.db",
                                fast_loop=fast_loop,
                                fast_json=True,
                                http=http,
                                anthropic=how,
                            )
                        ),
                    )
                    for name, http, how in (
                        ("aiohttp", "aiohttp", "juge"),
                        ("pyreqwest", "pyreqwest", "juge"),
                        ("anthropic SDK (before)", None, "sdk"),
                    )
                    if how == "juge" or importlib.util.find_spec("anthropic") is not None
                ),
            ]
        if openai is not None:
            measures += [
                (
                    "openai SDK + aiohttp",
                    lambda: timed(args.sdk_calls, sdk_aiohttp_gather(url, prompts(fresh(args.sdk_calls)), c)),
                ),
                (
                    "openai SDK (httpx)",
                    lambda: timed(args.sdk_calls, sdk_gather(url, prompts(fresh(args.sdk_calls)), c)),
                ),
            ]
        if args.profile:
            measures.append(
                (
                    OWN,
                    lambda: Rate(
                        *engine_parts.own_rate(
                            fresh(args.calls),
                            c,
                            Path(tmp) / f"o{next(tag)}.db",
                            uvloop.new_event_loop if uvloop else None,
                        )
                    ),
                )
            )
        for peer in peers.PEERS:
            if not args.peer_calls:
                continue
            if not peers.installed(peer):
                print(f"{peers.ROW_NAMES[peer]}: skipped, {peers.PEERS[peer]} is not installed", flush=True)
                continue
            measures.append(
                (
                    f"{peers.ROW_NAMES[peer]} ({args.peer_calls:,} calls)",
                    (lambda p=peer: peer_rate(p, url, args.peer_calls, c, f"t{next(tag)}")),
                )
            )
        for round_no in range(args.rounds):
            order = measures if round_no % 2 == 0 else measures[::-1]
            for name, measure in order:
                rate = measure()
                rows.setdefault(name, []).append(rate)
                print(
                    f"round {round_no + 1}: {name:34s} {rate.calls_per_s:6.0f} calls/s {rate.cpu_us:6.0f} µs CPU/call",
                    flush=True,
                )
        if openai is not None and args.sequential_calls:
            seq = timed(args.sequential_calls, sdk_sequential(url, prompts(fresh(args.sequential_calls))))
            print(f"sequential openai SDK loop: {seq.calls_per_s:.1f} calls/s ({args.sequential_calls} calls)")
        profiled, part_us = None, {}
        if args.profile:
            part_us = engine_parts.part_costs(fresh(args.calls), Path(tmp) / f"p{next(tag)}.db")
            profiled = cProfile.Profile()
            engine_rate(url, fresh(args.calls), c, Path(tmp) / "profiled.db", fast_loop=uvloop is not None,
                        fast_json=True, profile=profiled)  # fmt: skip

    median = {name: Rate(statistics.median(r.calls_per_s for r in rates), statistics.median(r.cpu_us for r in rates))
              for name, rates in rows.items()}  # fmt: skip
    capacity = median["capacity (raw-socket client)"].calls_per_s
    limit = min(c / args.latency, capacity)
    base = median[variants[0][0]].cpu_us
    print()
    print(f"| client (c={c}) | calls/s | / limit | CPU µs/call (range) | CPU / {variants[0][0]} |")
    print("|---|---:|---:|---:|---:|")
    for name, rate in median.items():
        spread = f"{min(r.cpu_us for r in rows[name]):.0f}-{max(r.cpu_us for r in rows[name]):.0f}"
        print(
            f"| {name} | {rate.calls_per_s:,.0f} | {rate.calls_per_s / limit:.2f} | {rate.cpu_us:,.0f} ({spread}) "
            f"| {rate.cpu_us / base:.2f}× |"
        )
    print(
        f"(limit = min(concurrency / latency = {c / args.latency:,.0f}, server capacity {capacity:,.0f}) = {limit:,.0f})"
    )
    engine = median[variants[0][0]]
    for runs in (name for name in median if name.startswith("juge run")):
        print(f"{runs}: {median[runs].cpu_us / engine.cpu_us:.2f}× the default Engine's CPU per call")
    for name in (n for n in median if n.startswith(tuple(peers.ROW_NAMES.values()))):
        print(
            f"{name}: {median[name].cpu_us / engine.cpu_us:.1f}× the default Engine's CPU per call; "
            f"the Engine made {engine.calls_per_s / median[name].calls_per_s:.1f}× its calls/s"
        )
    if "client alone: pyreqwest" in median:
        alone = median["client alone: pyreqwest"].cpu_us / median["client alone: aiohttp"].cpu_us
        fast = median["Engine, pyreqwest, uvloop + orjson"].cpu_us / engine.cpu_us
        print(f"pyreqwest / aiohttp CPU per call: client alone {alone:.2f}×, Engine {fast:.2f}×")
    if "Engine, anthropic provider, aiohttp" in median:
        on = {name.rsplit(", ", 1)[1]: r.cpu_us for name, r in median.items() if "anthropic provider" in name}
        print(
            "anthropic provider, CPU per call: "
            + ", ".join(f"{name} {us:,.0f} µs" for name, us in on.items())
            + f"; pyreqwest / aiohttp {on['pyreqwest'] / on['aiohttp']:.2f}×"
        )
    ratio = engine.calls_per_s / limit
    print(f"target Engine / limit >= 0.9 at concurrency {c}: {ratio:.2f} -> {'met' if ratio >= 0.9 else 'NOT met'}")
    if part_us:
        own = median[OWN].cpu_us
        print()
        print(f"| part of the Engine's CPU per call ({variants[0][0]}) | µs | share |")
        print("|---|---:|---:|")
        lines = [
            (
                "HTTP client, sockets and their event-loop work (the Engine minus the row without HTTP)",
                engine.cpu_us - own,
            )
        ]
        lines += [("juge's own work (the Engine without HTTP)", own)]
        lines += [(f"- {part}", us) for part, us in part_us.items()]
        lines += [("- engine and its event-loop work (the rest of juge's own)", own - sum(part_us.values()))]
        for part, us in lines:
            print(f"| {part} | {us:,.0f} | {us / engine.cpu_us:.0%} |")
        budget = 1e6 / (0.9 * limit)
        http = {"aiohttp": engine.cpu_us - own}
        if "Engine, pyreqwest, uvloop + orjson" in median:
            http["pyreqwest"] = median["Engine, pyreqwest, uvloop + orjson"].cpu_us - own
        print(
            f"0.9 of the limit ({0.9 * limit:,.0f} calls/s) needs at most {budget:,.0f} µs of CPU per call on a core of "
            f"the client's own; juge's own work takes {own:,.0f}, the HTTP client and its loop work "
            + ", ".join(f"{us:,.0f} on {client}" for client, us in http.items())
        )
        core = engine.calls_per_s * engine.cpu_us / 1e6  # the share of a core the Engine's process had
        if engine.cpu_us > budget:
            if own > budget:
                keeps = f"juge's own work ({own:,.0f} µs per call alone)"
            else:
                keeps = (
                    f"the HTTP client and its loop work ({http['aiohttp']:,.0f} µs where {budget - own:,.0f} are left)"
                )
            print(f"what keeps the Engine from 0.9: {keeps}")
        elif ratio < 0.9:
            print(f"the Engine's CPU per call fits 0.9 on a core of its own; it had {core:.0%} of one (the load)")
    if profiled is not None:
        print()
        print(f"| part of the Engine's CPU ({variants[0][0]}, cProfile self time) | share |")
        print("|---|---:|")
        for part, share in parts(profiled).items():
            print(f"| {part} | {share:.1%} |")


if __name__ == "__main__":
    main()
