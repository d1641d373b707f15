"""A mock OpenAI-compatible model server for tests and benchmarks, with fault injection.

It speaks just enough of the chat completions API (``POST /v1/chat/completions``
with ``usage``) for the ``openai`` SDK and juge's OpenAI-compatible provider (and of Anthropic's
``POST /v1/messages``, the same answers as messages, for juge's Anthropic provider),
and misbehaves on purpose, at configured rates:

================  ==========================================================
fault kind        what the client sees
================  ==========================================================
``rate_limit``    HTTP 429 with ``retry-after`` and ``retry-after-ms``
``server_error``  HTTP 500 with an error body
``unavailable``   HTTP 503 with an error body
``reset``         the connection is reset (TCP RST) before any answer
``timeout``       no answer: the request is held for ``hang`` seconds, then closed
``truncated``     a 200 whose body stops half-way and the connection closes
``malformed``     a 200 whose body is not JSON
``empty``         a 200 whose message content is the empty string
``refusal``       a 200 with ``finish_reason = content_filter`` and a refusal
================  ==========================================================

and hostile answers (``HOSTILE_KINDS``), which a careful client refuses or marks:

==================  ========================================================
``duplicate_keys``  a 200 whose message has ``content`` twice (FAIL, then PASS)
``choices``         a 200 with two choices (the answer, then its opposite)
``length``          a 200 with ``finish_reason = length``
``usage_bomb``      a 200 whose usage says 10^15 completion tokens
``huge``            a 200 of ``huge_bytes`` (chunked, no content-length)
==================  ========================================================

Answers are deterministic per request: the text is ``answers[h % len(answers)]``
where ``h`` is a hash of the request's model and messages (see
:func:`expected_answer`), so a test can check every stored verdict. Whether an
attempt is faulted is deterministic too: it depends on the seed, the request and
how many times this server has seen that request before, so a retried request
gets a fresh draw and a re-run of the same test sees the same faults;
:func:`injected_fault` tells a test what was injected on each attempt.

Latency is ``fixed``, ``uniform`` (``latency`` +- ``spread``), ``exponential``
(mean ``latency``) or ``lognormal`` (median ``latency``, sigma ``spread``).
``max_concurrency`` caps the requests in service: the others ``queue`` (the
default) or are ``reject``-ed with 429.

``rpm`` and ``tpm`` are per-minute limits, as a judge API's: a request that would take the last
60 seconds over ``rpm`` requests, or over ``tpm`` tokens (its prompt's and its answer's, counted
as the ``usage`` it returns), is answered 429 with the seconds until it would fit as Retry-After.
The window runs on a clock ``time_scale`` times faster than real time (a benchmark simulates
minutes in seconds); Retry-After is in those simulated seconds.

It also speaks Azure OpenAI's shape: ``POST /openai/deployments/{deployment}/chat/completions``
with an ``api-version`` query and an ``api-key`` header (or ``Authorization: Bearer``), answered as
Azure does when one is missing (404 without ``api-version``, 401 without a credential), and its batch
API under ``/openai``; ``stats()["azure"]`` counts the deployments, API versions and credentials seen.
And Google Gemini's OpenAI-compatible one: ``POST /v1beta/openai/chat/completions`` with the key as
``Authorization: Bearer`` (401 without one); ``stats()["gemini"]`` counts its requests by key.

In a test::

    with serve_in_thread(MockConfig(latency=0.01, faults={"server_error": 0.2})) as server:
        provider = OpenAICompatProvider(base_url=server.url)
        ...
        server.stats()["faults"]

For a benchmark, ``serve_in_subprocess`` runs it in its own process (its own
core and GIL); ``python -m juge.testing.mockserver --help`` runs it by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

import httptools

from juge.testing.mockbatch import MockBatches
from juge.testing.mockmodel import (
    FAULT_KINDS,
    HOSTILE_KINDS,
    LATENCY_DISTRIBUTIONS,
    MockConfig,
    _completion,
    _prompt_tokens,
    expected_answer,
    fault_for_attempt,
    injected_fault,  # noqa: F401 - re-exported: the docstring's way to read the fault plan
    request_digest,
)

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class MockModelServer:
    """The server's state: configuration, counters and the asyncio server. Use it from one event loop."""

    def __init__(self, config: MockConfig):
        self.config = config
        self.rng = random.Random(config.seed)
        self.seen: Counter[bytes] = Counter()
        self.counts: Counter[str] = Counter()
        self.all_arrived = asyncio.Event()  # see MockConfig.hold_until
        self.inflight = 0
        self.max_inflight = 0
        self.server: asyncio.base_events.Server | None = None
        self.slots = asyncio.Semaphore(config.max_concurrency) if config.max_concurrency else None
        self.port: int | None = None
        self.connections: set[_Connection] = set()
        self.tasks: set[asyncio.Task[None]] = set()  # answers being prepared
        self.batches = MockBatches(config)
        self.window: deque[tuple[float, int]] = deque()  # (simulated time, tokens) admitted in the last minute
        self.window_tokens = 0
        self.started = time.monotonic()
        # What each sight of a request met, in the order they arrived: a client that gave up on an attempt
        # before it arrived (or whose attempt arrived after its retry) numbers its attempts otherwise.
        self.sights: dict[bytes, list[str | None]] = defaultdict(list)
        self.azure: dict[str, Counter[str]] = {"deployments": Counter(), "api_versions": Counter(), "auth": Counter()}
        self.gemini_keys: Counter[str] = Counter()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        loop = asyncio.get_running_loop()
        self.server = await loop.create_server(lambda: _Connection(self), host, port, backlog=2048)
        self.port = self.server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening, drop every open connection and cancel the answers still being prepared."""
        if self.server is not None:
            self.server.close()
            for conn in list(self.connections):
                conn.close()
            await self.server.wait_closed()
        pending = list(self.tasks)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def stats(self) -> dict[str, Any]:
        """Counters since the start (or the last ``POST /stats``).

        `requests`: chat completion requests received; `answered`: whole completions delivered
        (the `empty` and `refusal` faults included); `faults`: injections by kind; `over_capacity`:
        requests rejected by the concurrency cap; `max_inflight`: the most requests in service at
        once; `max_attempts_per_request`: the most times one request (model and messages) was seen.
        """
        return {
            "requests": self.counts["requests"],
            "answered": self.counts["answered"],
            "over_capacity": self.counts["over_capacity"],
            "faults": {k: self.counts[f"fault:{k}"] for k in FAULT_KINDS + HOSTILE_KINDS},
            "max_inflight": self.max_inflight,
            "distinct_requests": len(self.seen),
            "max_attempts_per_request": max(self.seen.values(), default=0),
            "rate_limited": self.counts["rate_limited"],
            "admitted_tokens": self.counts["admitted_tokens"],
            "clock": self._now(),
            "azure": {k: dict(v) for k, v in self.azure.items()},
            "gemini": {"requests": sum(self.gemini_keys.values()), "keys": dict(self.gemini_keys)},
            **self.batches.stats(),
        }

    def sights_by_request(self) -> dict[str, list[str | None]]:
        """{request digest (hex): the fault (None: a plain answer) each sight of it met, in arrival order}
        (see :func:`request_digest`), since the start or the last ``POST /stats``."""
        return {digest.hex(): list(kinds) for digest, kinds in self.sights.items()}

    def reset_stats(self) -> None:
        self.seen.clear()
        self.sights.clear()
        self.counts.clear()
        for counter in self.azure.values():
            counter.clear()
        self.gemini_keys.clear()
        self.max_inflight = self.inflight

    def _fault_for(self, digest: bytes) -> str | None:
        attempt = self.seen[digest]
        self.seen[digest] += 1
        fault = fault_for_attempt(self.config, digest, attempt)
        self.sights[digest].append(fault)
        return fault

    def _latency(self) -> float:
        c = self.config
        if c.latency <= 0:
            return 0.0
        if c.latency_dist == "uniform":
            return max(0.0, self.rng.uniform(c.latency - c.spread, c.latency + c.spread))
        if c.latency_dist == "exponential":
            return self.rng.expovariate(1 / c.latency)
        if c.latency_dist == "lognormal":
            return self.rng.lognormvariate(math.log(c.latency), c.spread)
        return c.latency

    async def respond(
        self,
        conn: _Connection,
        method: bytes,
        url: bytes,
        body: bytes,
        keep_alive: bool,
        credentials: dict[bytes, bytes] | None = None,
    ) -> None:
        path, _, query = url.partition(b"?")
        path = path.rstrip(b"/")
        deployment = None
        if path.startswith(b"/openai/"):
            refusal = self._azure_refusal(query, credentials or {})
            if refusal is not None:
                conn.send(*refusal, keep_alive)
                return
            parts = path.split(b"/")  # b"", b"openai", b"deployments", name, b"chat", b"completions"
            if len(parts) == 6 and parts[2] == b"deployments" and parts[4:] == [b"chat", b"completions"]:
                deployment = parts[3].decode(errors="replace")
                self.azure["deployments"][deployment] += 1
                path = b"/chat/completions"
        elif path == b"/v1beta/openai/chat/completions":  # Gemini's OpenAI-compatible endpoint
            auth = (credentials or {}).get(b"authorization", b"")
            if not auth.lower().startswith(b"bearer "):
                body_401 = {"error": {"code": 401, "message": "API key not valid.", "status": "UNAUTHENTICATED"}}
                conn.send(401, body_401, keep_alive)
                return
            self.gemini_keys[auth[7:].decode(errors="replace")] += 1
            path = b"/chat/completions"
        if path in (b"/stats", b"/v1/stats"):
            if method == b"POST":
                self.reset_stats()
            conn.send(200, self.stats(), keep_alive)
            return
        if path in (b"/sights", b"/v1/sights"):
            conn.send(200, self.sights_by_request(), keep_alive)
            return
        if path in (b"/v1/models", b"/models"):
            conn.send(200, {"object": "list", "data": [{"id": self.config.model, "object": "model"}]}, keep_alive)
            return
        if self.batches.handles(path):
            status, answer = self.batches.respond(method, path, body, f"http://127.0.0.1:{self.port}")
            raw = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
            conn.send_raw(status, raw, keep_alive)
            return
        anthropic = path == b"/v1/messages"  # Anthropic's Messages API: the same answers, as messages
        if path not in (b"/v1/chat/completions", b"/chat/completions") and not anthropic:
            conn.send(404, _error_body(f"no route {path.decode(errors='replace')}", "not_found"), keep_alive)
            return
        if method != b"POST":
            conn.send(405, _error_body("use POST", "method_not_allowed"), keep_alive)
            return
        try:
            payload = json.loads(body)
            model, messages = payload.get("model", deployment), payload["messages"]
        except (ValueError, KeyError, TypeError) as exc:
            conn.send(400, _error_body(f"bad request body: {exc}", "invalid_request_error"), keep_alive)
            return
        self.counts["requests"] += 1
        if self.counts["requests"] >= self.config.hold_until:
            self.all_arrived.set()
        await self.all_arrived.wait()
        if self.config.rpm is not None or self.config.tpm is not None:
            wait = self._over_limit(model, messages)
            if wait is not None:
                self.counts["rate_limited"] += 1
                self.seen[request_digest(model, messages)] += 1  # an attempt, as the client counts it
                headers = {"retry-after": str(max(1, math.ceil(wait))), "retry-after-ms": str(math.ceil(wait * 1000))}
                conn.send(
                    429, _error_body("rate limit reached (per minute)", "rate_limit_exceeded"), keep_alive, headers
                )
                return
        if self.slots is not None and self.config.over_capacity == "reject" and self.slots.locked():
            self.counts["over_capacity"] += 1
            self.seen[request_digest(model, messages)] += 1  # an attempt, as the client counts it
            conn.send(429, _error_body("server at capacity", "rate_limit_exceeded"), keep_alive, self._retry_headers())
            return
        if self.slots is not None:
            async with self.slots:
                await self._serve(conn, model, messages, keep_alive, anthropic)
        else:
            await self._serve(conn, model, messages, keep_alive, anthropic)

    def _azure_refusal(self, query: bytes, headers: dict[bytes, bytes]) -> tuple[int, dict[str, Any]] | None:
        """Azure's answer to a request without an api-version or a credential (None: it has both); counts both."""
        versions = [v for k, _, v in (p.partition(b"=") for p in query.split(b"&")) if k == b"api-version" and v]
        if not versions:
            return 404, {"error": {"code": "404", "message": "Resource not found"}}
        if b"api-key" in headers:
            auth = "api-key"
        elif headers.get(b"authorization", b"").lower().startswith(b"bearer "):
            auth = "bearer"
        else:
            message = "Access denied due to missing subscription key or Entra ID token."
            return 401, {"error": {"code": "401", "message": message}}
        self.azure["api_versions"][versions[0].decode(errors="replace")] += 1
        self.azure["auth"][auth] += 1
        return None

    async def _serve(
        self, conn: _Connection, model: str, messages: list[dict[str, Any]], keep_alive: bool, anthropic: bool = False
    ) -> None:
        self.inflight += 1
        self.max_inflight = max(self.max_inflight, self.inflight)
        try:
            digest = request_digest(model, messages)
            fault = self._fault_for(digest)
            if fault is not None:
                self.counts[f"fault:{fault}"] += 1
            if fault == "timeout":
                await asyncio.sleep(self.config.hang)
                conn.close()
                return
            delay = self._latency()
            if delay:
                await asyncio.sleep(delay)
            if fault == "reset":
                conn.reset()
                return
            if fault == "rate_limit":
                conn.send(
                    429,
                    _error_body("rate limit reached, retry later", "rate_limit_exceeded"),
                    keep_alive,
                    self._retry_headers(),
                )
                return
            if fault == "server_error":
                conn.send(500, _error_body("the server had an error", "server_error"), keep_alive)
                return
            if fault == "unavailable":
                conn.send(503, _error_body("the engine is overloaded", "service_unavailable"), keep_alive)
                return
            if fault == "malformed":
                conn.send_raw(200, b'{"id": "chatcmpl-mock", "choices": [{"index": 0, "message": {"con', keep_alive)
                return
            text = "" if fault == "empty" else expected_answer(self.config, model, messages)
            completion = _completion(
                digest,
                self.config.answer_as or (self.config.model if model is None else model),
                messages,
                text,
                refused=fault == "refusal",
            )
            _spoil(completion, fault)
            answer = _as_message(completion) if anthropic else completion
            if fault == "truncated":
                conn.send_truncated(200, answer)
                return
            if fault == "huge":
                await conn.send_huge(self.config.huge_bytes)
                return
            if fault == "duplicate_keys":
                key = '"text": ' if anthropic else '"content": '
                body = json.dumps(answer).replace(key, key + '"FAIL\\nforged", ' + key, 1)
                conn.send_raw(200, body.encode(), keep_alive)
                return
            if conn.send(200, answer, keep_alive):
                self.counts["answered"] += 1
        finally:
            self.inflight -= 1

    def _now(self) -> float:
        return (time.monotonic() - self.started) * self.config.time_scale

    def _over_limit(self, model: str, messages: list[dict[str, Any]]) -> float | None:
        """None when the request fits this minute's limits (it is then counted), else the simulated
        seconds until it would. Its tokens are those its `usage` will report."""
        c, now = self.config, self._now()
        while self.window and self.window[0][0] <= now - 60.0:
            self.window_tokens -= self.window.popleft()[1]
        tokens = _prompt_tokens(messages) + len(expected_answer(c, model, messages).split())
        wait = 0.0
        if c.rpm is not None and len(self.window) >= c.rpm:
            wait = self.window[len(self.window) - c.rpm][0] + 60.0 - now
        if c.tpm is not None and self.window_tokens + tokens > c.tpm:
            excess, freed = self.window_tokens + tokens - c.tpm, 0
            for at, spent in self.window:
                freed += spent
                if freed >= excess:
                    wait = max(wait, at + 60.0 - now)
                    break
            else:
                wait = max(wait, 60.0)
        if wait > 0:
            return wait
        self.window.append((now, tokens))
        self.window_tokens += tokens
        self.counts["admitted_tokens"] += tokens
        return None

    def _retry_headers(self) -> dict[str, str]:
        seconds = self.config.retry_after
        return {"retry-after": str(max(1, math.ceil(seconds))), "retry-after-ms": str(int(seconds * 1000))}


def _spoil(completion: dict[str, Any], fault: str | None) -> None:
    """Make `completion` the hostile answer `fault` names (choices, length, usage_bomb); others leave it."""
    choice = completion["choices"][0]
    if fault == "choices":
        text = choice["message"]["content"] or ""
        other = "FAIL" if text.startswith("PASS") else "PASS"
        second = {**choice, "index": 1, "message": {"role": "assistant", "content": f"{other}\nThe other choice."}}
        completion["choices"].append(second)
    elif fault == "length":
        choice["finish_reason"] = "length"
    elif fault == "usage_bomb":
        completion["usage"]["completion_tokens"] = 10**15


def _as_message(completion: dict[str, Any]) -> dict[str, Any]:
    """`completion` as an Anthropic message (the `choices` fault has no such form: its first choice is sent)."""
    choice, usage = completion["choices"][0], completion["usage"]
    text = choice["message"]["content"]
    stop = {"length": "max_tokens", "content_filter": "refusal"}.get(choice["finish_reason"], "end_turn")
    return {
        "id": "msg_" + completion["id"].removeprefix("chatcmpl-"),
        "type": "message",
        "role": "assistant",
        "model": completion["model"],
        "content": [] if text is None else [{"type": "text", "text": text}],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]},
    }


def _error_body(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": code, "code": code, "param": None}}


class _Connection(asyncio.Protocol):
    """One client connection: parse requests with httptools, answer them in order."""

    def __init__(self, server: MockModelServer):
        self.server = server
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.url = b""
        self.body: list[bytes] = []
        self.headers: dict[bytes, bytes] = {}  # the credential headers of the request being read
        self.tail: asyncio.Task[None] | None = None  # the last request's task: answers go out in request order

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.server.connections.add(self)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.send(400, _error_body("malformed HTTP request", "invalid_request_error"), False)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.server.connections.discard(self)

    # httptools callbacks
    def on_message_begin(self) -> None:
        self.url, self.body, self.headers = b"", [], {}

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name in (b"api-key", b"authorization"):
            self.headers[name] = value

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        method = self.parser.get_method()
        keep_alive = self.parser.should_keep_alive()
        previous = self.tail
        self.tail = asyncio.get_running_loop().create_task(
            self._answer(previous, method, self.url, b"".join(self.body), keep_alive, self.headers)
        )
        self.server.tasks.add(self.tail)
        self.tail.add_done_callback(self.server.tasks.discard)

    async def _answer(
        self,
        previous: asyncio.Task[None] | None,
        method: bytes,
        url: bytes,
        body: bytes,
        keep_alive: bool,
        headers: dict[bytes, bytes],
    ) -> None:
        if previous is not None:
            await asyncio.shield(previous)
        # Served even if the client has gone (its answer is then dropped): the client counted the
        # attempt, so the server counts it too and the attempt numbers behind the fault draws agree.
        await self.server.respond(self, method, url, body, keep_alive, headers)

    # writing
    def _head(self, status: int, length: int, keep_alive: bool, extra: dict[str, str] | None = None) -> bytes:
        lines = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            "content-type: application/json",
            f"content-length: {length}",
            "connection: " + ("keep-alive" if keep_alive else "close"),
        ]
        lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def send(self, status: int, payload: Any, keep_alive: bool, headers: dict[str, str] | None = None) -> bool:
        return self.send_raw(status, json.dumps(payload).encode(), keep_alive, headers)

    def send_raw(self, status: int, body: bytes, keep_alive: bool, headers: dict[str, str] | None = None) -> bool:
        """Write a whole response; False when the client has already gone."""
        if self.transport is None:
            return False
        self.transport.write(self._head(status, len(body), keep_alive, headers) + body)
        if not keep_alive:
            self.close()
        return True

    def send_truncated(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        if self.transport is None:
            return
        self.transport.write(self._head(status, len(body), False) + body[: len(body) // 2])
        self.close()

    async def send_huge(self, size: int) -> None:
        """A 200 chat completion of about `size` bytes, chunked, written only as fast as the client reads
        (the server never holds more than a few MB of it), then the connection closes."""
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
        start = b'{"model": "mock", "choices": [{"index": 0, "message": {"role": "assistant", "content": "PASS\\n'
        end = b'"}, "finish_reason": "stop"}]}'
        piece = b"x" * 1_000_000
        parts = [start, *[piece] * max(0, (size - len(start) - len(end)) // len(piece)), end]
        if self.transport is None:
            return
        self.transport.write(head)
        for part in parts:
            while self.transport is not None and self.transport.get_write_buffer_size() > 4_000_000:
                await asyncio.sleep(0.001)
            if self.transport is None or self.transport.is_closing():
                return  # the client gave up reading
            self.transport.write(b"%x\r\n%s\r\n" % (len(part), part))
        if self.transport is not None:
            self.transport.write(b"0\r\n\r\n")
        self.close()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            self.transport = None

    def reset(self) -> None:
        """Close with a TCP RST (SO_LINGER 0) instead of an orderly FIN."""
        if self.transport is None:
            return
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.transport.abort()
        self.transport = None


class ServerHandle:
    """A running mock server: its base URL (``.../v1``, what an OpenAI client takes) and its counters."""

    def __init__(self, url: str, stats: Any, sights: Any):
        self.url = url
        self._stats = stats
        self._sights = sights

    def stats(self) -> dict[str, Any]:
        return self._stats()

    def sights(self) -> dict[str, list[str | None]]:
        """What each sight of each request met (:meth:`MockModelServer.sights_by_request`)."""
        return self._sights()


@contextmanager
def serve_in_thread(config: MockConfig | None = None) -> Iterator[ServerHandle]:
    """Run the server on 127.0.0.1 (a free port) in a background thread with its own event loop."""
    config = config or MockConfig()
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, Any] = {}

    def main() -> None:
        asyncio.set_event_loop(loop)
        server = MockModelServer(config)
        try:
            loop.run_until_complete(server.start())
        except BaseException as exc:  # report a failed start to the caller instead of hanging it
            holder["error"] = exc
            ready.set()
            return
        holder["server"] = server
        ready.set()
        loop.run_forever()
        loop.run_until_complete(server.close())
        loop.close()

    thread = threading.Thread(target=main, name="juge-mock-model-server", daemon=True)
    thread.start()
    ready.wait(10)
    if "server" not in holder:
        raise RuntimeError(f"the mock server did not start: {holder.get('error', 'timed out')}")
    server: MockModelServer = holder["server"]

    def stats() -> dict[str, Any]:
        return asyncio.run_coroutine_threadsafe(_async(server.stats), loop).result(10)

    def sights() -> dict[str, list[str | None]]:
        return asyncio.run_coroutine_threadsafe(_async(server.sights_by_request), loop).result(10)

    try:
        yield ServerHandle(server.url, stats, sights)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


async def _async(fn: Any) -> Any:
    return fn()


@contextmanager
def serve_in_subprocess(config: MockConfig | None = None) -> Iterator[ServerHandle]:
    """Run the server in its own Python process (its own core), stopped on exit."""
    import httpx

    config = config or MockConfig()
    proc = subprocess.Popen(
        [sys.executable, "-m", "juge.testing.mockserver", "--config-json", json.dumps(asdict(config))],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("listening "):
            raise RuntimeError(f"the mock server did not start (exit code {proc.poll()}): {line!r}")
        url = line.split(" ", 1)[1].strip()

        def stats() -> dict[str, Any]:
            return httpx.get(url.removesuffix("/v1") + "/stats", timeout=10, trust_env=False).json()

        def sights() -> dict[str, list[str | None]]:
            return httpx.get(url.removesuffix("/v1") + "/sights", timeout=30, trust_env=False).json()

        yield ServerHandle(url, stats, sights)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _parse_args(argv: list[str] | None) -> tuple[MockConfig, str, int]:
    ap = argparse.ArgumentParser(
        prog="python -m juge.testing.mockserver",
        description="A mock OpenAI-compatible chat completions server with fault injection.",
    )
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on start)")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds per answer (see --latency-dist)")
    ap.add_argument("--latency-dist", choices=LATENCY_DISTRIBUTIONS, default="fixed")
    ap.add_argument("--spread", type=float, default=0.0, help="uniform: +- seconds; lognormal: sigma")
    ap.add_argument("--max-concurrency", type=int, default=None)
    ap.add_argument("--over-capacity", choices=("queue", "reject"), default="queue")
    ap.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="KIND=RATE",
        help=f"inject a fault at a rate per attempt; kinds: {', '.join(FAULT_KINDS)}",
    )
    ap.add_argument("--answer", action="append", default=None, help="an answer text (repeat for several)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--config-json", default=None, help="the whole MockConfig as JSON (overrides the other options)")
    args = ap.parse_args(argv)
    if args.config_json:
        raw = json.loads(args.config_json)
        raw["answers"] = tuple(raw.get("answers", MockConfig.answers))
        try:
            return MockConfig(**raw), args.host, args.port
        except (TypeError, ValueError) as exc:
            ap.error(f"--config-json: {exc}")
    faults = {}
    for item in args.fault:
        kind, _, rate = item.partition("=")
        try:
            faults[kind] = float(rate)
        except ValueError:
            ap.error(f"--fault takes KIND=RATE, got {item!r}")
    try:
        config = MockConfig(
            latency=args.latency,
            latency_dist=args.latency_dist,
            spread=args.spread,
            max_concurrency=args.max_concurrency,
            over_capacity=args.over_capacity,
            faults=faults,
            seed=args.seed,
            answers=tuple(args.answer) if args.answer else MockConfig.answers,
        )
    except ValueError as exc:
        ap.error(str(exc))
    return config, args.host, args.port


def main(argv: list[str] | None = None) -> None:
    config, host, port = _parse_args(argv)

    async def serve() -> None:
        server = MockModelServer(config)
        await server.start(host, port)
        print(f"listening http://{host}:{server.port}/v1", flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
