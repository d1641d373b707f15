"""The mock model server (juge.testing.mockserver) as juge's OpenAI-compatible provider sees it.

Each fault kind must reach the client as the module's table says, answers and fault draws must
be reproducible, the concurrency cap must hold, and the latency samplers must have the means
they are configured with.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import socket
import statistics
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from juge.providers.base import ProviderError, Request, Response, retry_after_seconds
from juge.providers.openai_compat import OpenAICompatProvider
from juge.testing.mockserver import (
    FAULT_KINDS,
    MockConfig,
    MockModelServer,
    expected_answer,
    injected_fault,
    request_digest,
    serve_in_subprocess,
    serve_in_thread,
)

MODEL = "mock-judge"


def request(text: str = "Is the sky blue?") -> Request:
    return Request(
        messages=({"role": "system", "content": "You judge answers."}, {"role": "user", "content": text}), model=MODEL
    )


async def _call(provider: OpenAICompatProvider, req: Request) -> Response | ProviderError:
    try:
        return await provider.complete(req)
    except ProviderError as exc:
        return exc


def call_all(url: str, requests: list[Request], timeout: float = 10.0) -> list[Response | ProviderError]:
    """Send `requests` at once through one provider; each result is its Response or its ProviderError."""

    async def main() -> list[Response | ProviderError]:
        provider = OpenAICompatProvider(base_url=url, timeout=timeout)
        try:
            return list(await asyncio.gather(*(_call(provider, r) for r in requests)))
        finally:
            await provider.aclose()

    return asyncio.run(main())


def call_in_turn(url: str, requests: list[Request]) -> list[Response | ProviderError]:
    """Send `requests` one after the other (so the server sees them in this order)."""

    async def main() -> list[Response | ProviderError]:
        provider = OpenAICompatProvider(base_url=url, timeout=10)
        try:
            return [await _call(provider, r) for r in requests]
        finally:
            await provider.aclose()

    return asyncio.run(main())


# What each fault looks like through OpenAICompatProvider: (status, message pattern) of the
# retryable ProviderError, or None where a Response comes back.
ERRORS = {
    "rate_limit": (429, "HTTP 429"),
    "server_error": (500, "HTTP 500"),
    "unavailable": (503, "HTTP 503"),
    "reset": (None, "connection failed: .*reset by peer"),
    "timeout": (None, "timeout"),
    "truncated": (None, "connection failed: .*without sending complete message body"),
    "malformed": (None, "the server's answer was not valid JSON"),
}


@pytest.mark.usefixtures("each_http_client")
@pytest.mark.parametrize("kind", sorted(ERRORS))
def test_failing_faults_are_retryable_provider_errors(kind):
    # the client's time limit is for the hanging fault alone: a loaded machine may take longer than a
    # short one to deliver the other faults' answers
    config = MockConfig(faults={kind: 1.0}, hang=60)
    with serve_in_thread(config) as server:
        [result] = call_all(server.url, [request()], timeout=0.3 if kind == "timeout" else 30)
        stats = server.stats()
    status, pattern = ERRORS[kind]
    assert isinstance(result, ProviderError), result
    assert result.retryable and result.status == status
    assert re.search(pattern, str(result)), str(result)
    assert stats["faults"][kind] == 1 and sum(stats["faults"].values()) == 1
    assert stats["requests"] == 1 and stats["answered"] == 0


@pytest.mark.usefixtures("each_http_client")
def test_rate_limit_carries_the_servers_retry_after():
    with serve_in_thread(MockConfig(faults={"rate_limit": 1.0}, retry_after=0.25)) as server:
        [limited] = call_all(server.url, [request()])
    with serve_in_thread(MockConfig(faults={"server_error": 1.0})) as server:
        [failed] = call_all(server.url, [request()])
    assert isinstance(limited, ProviderError) and limited.retry_after == pytest.approx(0.25)  # retry-after-ms wins
    assert isinstance(failed, ProviderError) and failed.retry_after is None


def test_retry_after_header_forms():
    assert retry_after_seconds(httpx.Headers({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    assert retry_after_seconds(httpx.Headers({"Retry-After": "7"})) == 7.0
    soon = datetime.now(UTC) + timedelta(seconds=30)
    from_date = retry_after_seconds(httpx.Headers({"retry-after": format_datetime(soon, usegmt=True)}))
    assert from_date is not None and 27 <= from_date <= 30
    past = datetime.now(UTC) - timedelta(seconds=30)
    assert retry_after_seconds({"retry-after": format_datetime(past, usegmt=True)}) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({"retry-after-ms": "-5"}) is None
    assert retry_after_seconds({}) is None
    assert retry_after_seconds(None) is None


@pytest.mark.usefixtures("each_http_client")
def test_answering_faults_come_back_as_responses():
    req = request()
    with serve_in_thread(MockConfig(faults={"empty": 1.0})) as server:
        [empty] = call_all(server.url, [req])
        empty_stats = server.stats()
    with serve_in_thread(MockConfig(faults={"refusal": 1.0})) as server:
        [refused] = call_all(server.url, [req])
    with serve_in_thread(MockConfig()) as server:
        [plain] = call_all(server.url, [req])
    assert isinstance(empty, Response) and empty.text == "" and not empty.refused
    assert empty_stats["answered"] == 1 and empty_stats["faults"]["empty"] == 1
    assert isinstance(refused, Response) and refused.refused and refused.text == ""
    assert refused.refusal_reason == "I can't help with that request."
    assert isinstance(plain, Response) and not plain.refused
    assert plain.text == expected_answer(MockConfig(), MODEL, list(req.messages))
    assert plain.model == MODEL and plain.tokens_in == 7 and plain.tokens_out == len(plain.text.split())


def test_answers_are_deterministic_per_request():
    config = MockConfig(answers=("PASS\none", "FAIL\ntwo", "PASS\nthree", "FAIL\nfour"))
    reqs = [request(f"question {k}") for k in range(24)]
    with serve_in_thread(config) as server:
        first = call_all(server.url, reqs)
        again = call_all(server.url, list(reversed(reqs)))[::-1]
    texts = [r.text for r in first]
    assert texts == [r.text for r in again]
    assert texts == [expected_answer(config, MODEL, list(r.messages)) for r in reqs]
    assert len(set(texts)) == 4  # the hash spreads requests over all the answers


def _fault_pattern(config: MockConfig, n: int) -> list[str | None]:
    """What the server did to the same request sent n times in turn (None: answered)."""
    errors = {(429, "HTTP 429"): "rate_limit", (500, "HTTP 500"): "server_error"}
    with serve_in_thread(config) as server:
        results = call_in_turn(server.url, [request()] * n)
        stats, sights = server.stats(), server.sights()
    assert stats["max_attempts_per_request"] == n and stats["distinct_requests"] == 1
    pattern = [None if isinstance(r, Response) else errors[(r.status, str(r)[:8])] for r in results]
    assert sights == {request_digest(MODEL, list(request().messages)).hex(): pattern}  # each sight, in order
    return pattern


def test_fault_draws_are_reproducible_with_the_seed_and_fresh_per_retry():
    config = MockConfig(faults={"rate_limit": 0.3, "server_error": 0.3}, seed=7)
    pattern = _fault_pattern(config, 40)
    assert pattern == _fault_pattern(config, 40)  # a re-run sees the same faults
    assert pattern != _fault_pattern(MockConfig(faults=config.faults, seed=8), 40)
    # Each attempt is a fresh draw: the one request is faulted some times and answered others,
    # exactly as the documented function of (seed, request, attempt) says.
    assert pattern == [injected_fault(config, MODEL, list(request().messages), k) for k in range(40)]
    assert {None, "rate_limit", "server_error"} == set(pattern)
    assert 0.2 <= pattern.count(None) / 40 <= 0.6


def test_fault_rates_hold_over_many_requests():
    config = MockConfig(faults={kind: 0.05 for kind in FAULT_KINDS}, seed=3)
    n = 4000
    drawn = [injected_fault(config, MODEL, [{"role": "user", "content": str(k)}], 0) for k in range(n)]
    for kind in FAULT_KINDS:  # binomial(4000, 0.05): mean 200, sd 13.8; 5 sd either side
        assert 131 <= drawn.count(kind) <= 269, (kind, drawn.count(kind))
    assert 0.55 * n - 5 * math.sqrt(n * 0.45 * 0.55) <= drawn.count(None) <= 0.55 * n + 5 * math.sqrt(n * 0.45 * 0.55)


def test_max_concurrency_queues_requests_beyond_the_cap():
    # answers held until all 24 have arrived: then more than four are waiting, however slowly they came
    config = MockConfig(latency=0.05, max_concurrency=4, hold_until=24)
    with serve_in_thread(config) as server:
        started = time.perf_counter()
        results = call_all(server.url, [request(f"q{k}") for k in range(24)])
        elapsed = time.perf_counter() - started
        stats = server.stats()
    assert all(isinstance(r, Response) for r in results)
    assert stats["max_inflight"] == 4 and stats["answered"] == 24 and stats["over_capacity"] == 0
    assert elapsed >= 24 / 4 * 0.05 * 0.95  # six waves of four


def test_max_concurrency_rejects_with_429_beyond_the_cap():
    # all 12 arrive before any is answered: two get the slots, the other ten meet a full server
    config = MockConfig(latency=0.2, max_concurrency=2, over_capacity="reject", retry_after=0.5, hold_until=12)
    with serve_in_thread(config) as server:
        results = call_all(server.url, [request(f"q{k}") for k in range(12)])
        stats = server.stats()
    rejected = [r for r in results if isinstance(r, ProviderError)]
    assert all(r.status == 429 and r.retryable and r.retry_after == 0.5 for r in rejected)
    assert stats["max_inflight"] == 2
    assert len(rejected) == stats["over_capacity"] == 10
    assert stats["answered"] == 2
    assert stats["distinct_requests"] == 12  # a rejected request was an attempt too (the client counts it)


@pytest.mark.parametrize(
    ("dist", "spread", "mean"),
    [
        ("fixed", 0.0, 0.05),
        ("uniform", 0.03, 0.05),
        ("exponential", 0.0, 0.05),
        ("lognormal", 0.5, 0.05 * math.exp(0.5**2 / 2)),  # median 0.05: mean = median * exp(sigma^2 / 2)
    ],
)
def test_latency_distributions_have_the_configured_mean(dist, spread, mean):
    server = MockModelServer(MockConfig(latency=0.05, latency_dist=dist, spread=spread, seed=1))
    draws = [server._latency() for _ in range(20000)]
    assert min(draws) >= 0
    assert statistics.fmean(draws) == pytest.approx(mean, rel=0.03)
    if dist == "uniform":
        assert 0.02 <= min(draws) and max(draws) <= 0.08
    if dist == "lognormal":
        assert statistics.median(draws) == pytest.approx(0.05, rel=0.03)


def test_latency_delays_the_answer():
    with serve_in_thread(MockConfig(latency=0.15)) as server:
        started = time.perf_counter()
        [result] = call_all(server.url, [request()])
    assert isinstance(result, Response) and time.perf_counter() - started >= 0.15


def test_bad_configurations_are_refused():
    with pytest.raises(ValueError, match="unknown fault kind"):
        MockConfig(faults={"gremlins": 0.1})
    with pytest.raises(ValueError, match="sum to at most 1"):
        MockConfig(faults={"reset": 0.6, "timeout": 0.6})
    with pytest.raises(ValueError, match="latency_dist"):
        MockConfig(latency_dist="pareto")


def test_subprocess_mode_serves_and_counts():
    config = MockConfig(faults={"server_error": 0.5}, seed=2)
    reqs = [request(f"q{k}") for k in range(20)]
    with serve_in_subprocess(config) as server:
        results = call_all(server.url, reqs)
        stats = server.stats()
        models = httpx.get(server.url + "/models", timeout=5, trust_env=False).json()
    planned = [injected_fault(config, MODEL, list(r.messages), 0) for r in reqs]
    for req, result, fault in zip(reqs, results, planned):
        if fault is None:
            assert isinstance(result, Response) and result.text == expected_answer(config, MODEL, list(req.messages))
        else:
            assert isinstance(result, ProviderError) and result.status == 500
    assert stats["requests"] == 20 and stats["faults"]["server_error"] == planned.count("server_error")
    assert stats["answered"] == planned.count(None)
    assert models["data"][0]["id"] == config.model


@pytest.mark.usefixtures("each_http_client")
def test_provider_closes_its_http_client():
    with serve_in_thread(MockConfig()) as server:

        async def main() -> OpenAICompatProvider:
            provider = OpenAICompatProvider(base_url=server.url)
            await provider.complete(request())
            await provider.aclose()
            return provider

        provider = asyncio.run(main())
    assert provider.closed


@pytest.mark.usefixtures("each_http_client")
def test_stopping_drops_requests_still_held():
    with serve_in_thread(MockConfig(faults={"timeout": 1.0}, hang=60)) as server:
        [result] = call_all(server.url, [request()], timeout=0.2)
        stopping = time.perf_counter()
    assert isinstance(result, ProviderError) and "timeout" in str(result)
    assert time.perf_counter() - stopping < 30  # the held answer is cancelled, not waited for (60 s)


def test_a_request_whose_client_left_still_counts_as_an_attempt():
    """A client that gives up after sending has made an attempt: the server must count it, or its
    attempt numbers (and so its fault draws) fall behind the client's. Here the client sends two
    requests on one connection and leaves while the server still prepares the first answer."""
    req = request()
    body = json.dumps({"model": MODEL, "messages": list(req.messages)}).encode()
    head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
    message = head + b"content-length: %d\r\n\r\n%s" % (len(body), body)
    with serve_in_thread(MockConfig(latency=0.1)) as server:
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(message + message)
        deadline = time.monotonic() + 60
        while server.stats()["requests"] < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        [answer] = call_all(server.url, [req])
        stats = server.stats()
    assert isinstance(answer, Response)
    assert stats["requests"] == 3 and stats["max_attempts_per_request"] == 3 and stats["answered"] == 1


def test_hold_until_answers_nothing_until_that_many_requests_have_arrived():
    with serve_in_thread(MockConfig(hold_until=3)) as server:
        alone = call_all(server.url, [request("one"), request("two")], timeout=0.5)
        assert all(isinstance(r, ProviderError) and "timeout" in str(r) for r in alone)  # 2 of 3: held
        together = call_all(server.url, [request(str(k)) for k in range(3)])
        assert all(isinstance(r, Response) for r in together)  # the third arrival lets every answer go
        assert call_in_turn(server.url, [request("later")])[0].text  # and later ones are not held
