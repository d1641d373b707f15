"""The Engine's CPU per call by part, in µs measured directly (for `bench/throughput.py --profile`).

cProfile's shares inflate Python-level calls (aiohttp is Python, pyreqwest Rust), so the parts are measured here
without it, on the benchmark's own prompts and the mock's own answers:

- **juge's own**: the Engine (``run_tasks``, the same store, concurrency and loop) on a provider that answers at
  once with the mock's answer: everything but the HTTP client and its sockets.
- **HTTP client and event loop**: the Engine's CPU per call in the same run minus juge's own.
- within juge's own, each part timed alone on the same tasks: **render** (``Judge.render``), **cache key**,
  **JSON** (the request body and reading the mock's chat completion, as the provider does), **parse**
  (``Judge.parse``), **record** (the typed ``Judgment``), **store** (the call log row, the cache entry and the
  judgment row, JSON included, committed once per 256 calls as the Engine's group commit does, in a new SQLite
  database), and **engine** (the rest: tasks, slots, budgets, time limits, the cache look-up, commits' futures).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from juge.data.records import Judgment
from juge.engine import Engine, EngineOptions, JudgeTask
from juge.engine.calls import _response_to_dict, cache_key, payer_of
from juge.fastjson import dump_bytes
from juge.providers.base import Provider, Request, Response, json_with_unique_keys
from juge.providers.openai_compat import _payload, _response
from juge.store import Store
from juge.testing.mockmodel import MockConfig, expected_answer


def _completion_body(request: Request, text: str) -> bytes:
    """A chat completion as the mock server writes it (same fields, same JSON writer)."""
    words = sum(len(m["content"].split()) for m in request.messages)
    return json.dumps(
        {
            "id": "chatcmpl-0123456789ab",
            "object": "chat.completion",
            "created": 1_790_000_000,
            "model": request.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": words, "completion_tokens": len(text.split()), "total_tokens": words + 2},
        }
    ).encode()


class InstantProvider(Provider):
    """Answers each request at once with the mock server's answer to it, written beforehand as the mock's JSON
    body and read as the OpenAI-compatible provider reads one: the Engine without an HTTP client."""

    name = "openai"

    def __init__(self, tasks: list[JudgeTask]) -> None:
        self.bodies = {}
        for t in tasks:
            messages = t.judge.render(t.case, order=t.order)
            request = Request(messages=tuple(messages), model=t.judge.model)
            self.bodies[messages[-1]["content"]] = _completion_body(
                request, expected_answer(MockConfig(), request.model, messages)
            )

    async def complete(self, request: Request) -> Response:
        await asyncio.sleep(0)  # one turn of the loop, as an answer arriving would take
        return _response(json_with_unique_keys(self.bodies[request.messages[-1]["content"]]), request.model)


def own_rate(
    tasks: list[JudgeTask], concurrency: int, db: Path, loop_factory: Callable[[], Any] | None
) -> tuple[float, float]:
    """(calls/s, CPU µs per call) of ``Engine.run_tasks`` on `InstantProvider`: juge's own work."""

    async def run() -> tuple[float, float]:
        provider = InstantProvider(tasks)
        with Store(db) as store:
            engine = Engine(store, EngineOptions(concurrency=concurrency, retries=0, timeout=60, progress=False))
            run_id = store.create_run(dataset_hash="bench", juge_version="bench", cases=[t.case for t in tasks])
            cpu, wall = time.process_time(), time.perf_counter()
            stored = await engine.run_tasks(run_id, tasks, {tasks[0].judge.name: provider})
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        if stored != len(tasks):
            raise SystemExit(f"own: stored {stored} of {len(tasks)}")
        return len(tasks) / wall, cpu / len(tasks) * 1e6

    with asyncio.Runner(loop_factory=loop_factory) as runner:
        return runner.run(run())


def _per_call(work: Callable[[], None], n: int) -> float:
    cpu = time.process_time()
    work()
    return (time.process_time() - cpu) / n * 1e6


def part_costs(tasks: list[JudgeTask], db: Path) -> dict[str, float]:
    """CPU µs per call of each part of juge's own work, each timed alone on `tasks`: the lower of two passes (the
    second on the same cases under other ids), as the first pays for warming up (patterns, caches, the allocator)."""
    again = [JudgeTask(case=t.case.model_copy(update={"id": f"again-{t.case.id}"}), judge=t.judge, order=t.order,
                       repeat=t.repeat) for t in tasks]  # fmt: skip
    first, second = _parts(tasks, db), _parts(again, db.with_name(db.stem + "-again.db"))
    return {part: min(first[part], second[part]) for part in first}


def _parts(tasks: list[JudgeTask], db: Path) -> dict[str, float]:
    n = len(tasks)
    judge = tasks[0].judge
    out: dict[str, float] = {}
    messages: list[list[dict[str, str]]] = []
    out["render"] = _per_call(lambda: messages.extend(judge.render(t.case, order=t.order) for t in tasks), n)
    meta = [
        {"item_id": t.case.id, "judge": judge.name, "template": judge.template_id, "order": t.order, "repeat": t.repeat}
        for t in tasks
    ]
    requests = [
        Request(
            messages=tuple(m), model=judge.model, temperature=judge.temperature, max_tokens=judge.max_tokens, meta=d
        )
        for m, d in zip(messages, meta, strict=True)
    ]
    keys: list[str] = []
    out["cache key"] = _per_call(lambda: keys.extend(cache_key("openai", r) for r in requests), n)
    texts = [expected_answer(MockConfig(), r.model, list(r.messages)) for r in requests]
    bodies = [_completion_body(r, text) for r, text in zip(requests, texts, strict=True)]
    responses: list[Response] = []

    def json_part() -> None:
        for r, body in zip(requests, bodies, strict=True):
            dump_bytes(_payload(r))
            responses.append(_response(json_with_unique_keys(body), r.model))

    out["JSON (request body, reading the answer)"] = _per_call(json_part, n)
    parsed: list[Any] = []
    out["parse"] = _per_call(lambda: parsed.extend(judge.parse(text) for text in texts), n)
    judgments: list[Judgment] = []
    store = Store(db)
    run_id = store.create_run(dataset_hash="bench", juge_version="bench", cases=[t.case for t in tasks])

    def record() -> None:
        for t, response, p in zip(tasks, responses, parsed, strict=True):
            judgments.append(
                Judgment(
                    item_id=t.case.id,
                    judge=judge.name,
                    template=judge.template_id,
                    template_hash=judge.template_hash,
                    order=t.order,
                    repeat=t.repeat,
                    run_id=run_id,
                    model=response.model,
                    text=response.text,
                    tokens_in=response.tokens_in,
                    tokens_out=response.tokens_out,
                    cost=None,
                    latency=0.05,
                    distribution=None,
                    attempts=1,
                    outcome=p.outcome,
                    verdict=p.verdict,
                    reason=p.reason,
                )  # fmt: skip
            )

    out["record (the typed Judgment)"] = _per_call(record, n)

    def store_part() -> None:
        with store.grouped():
            for i, (t, r, key, response, j) in enumerate(zip(tasks, requests, keys, responses, judgments)):  # noqa: B905
                log = {"messages": list(r.messages), "model": r.model, **r.cache_params(), "meta": r.meta}
                store.log_call(
                    run_id=run_id, cache_key=key, provider="openai", model=r.model, attempt=0, request=log,
                    response=_response_to_dict(response), error=None, status=None, latency=0.05,
                    payer=payer_of(*t.key), cache=True,
                )  # fmt: skip
                store.save_judgment(run_id, j)
                if i % 256 == 255:
                    store.commit()

    with store:
        out["store (call log, cache entry, judgment; JSON included)"] = _per_call(store_part, n)
    return out
