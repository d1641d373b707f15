"""A model server's answers that a careless client would read as verdicts (issue 27): a key twice, several
choices, an answer cut at max_tokens, an absurd usage, a body of hundreds of MB."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import httpx
import pytest

from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers import ProviderError, Request, make_provider
from juge.providers.base import json_with_unique_keys
from juge.providers.openai_compat import OpenAICompatProvider
from juge.testing.mockserver import MockConfig, serve_in_thread

REQUEST = Request(messages=({"role": "user", "content": "q"},), model="m1", max_tokens=16)


def complete(provider, request=REQUEST):
    async def main():
        try:
            return await provider.complete(request)
        finally:
            await provider.aclose()

    return asyncio.run(main())


@pytest.mark.usefixtures("each_http_client")
@pytest.mark.parametrize(
    "fault, says",
    [("duplicate_keys", "'content' appears twice"), ("choices", "2 choices"), ("usage_bomb", "before it is costed")],
)
def test_a_hostile_answer_is_a_clear_error_that_is_not_retried(fault, says):
    with serve_in_thread(MockConfig(faults={fault: 1.0})) as server:
        with pytest.raises(ProviderError, match=says) as exc:
            complete(OpenAICompatProvider(base_url=server.url))
    assert not exc.value.retryable


def test_a_key_twice_anywhere_in_the_json_is_refused_and_a_plain_body_reads():
    assert json_with_unique_keys(b'{"a": {"b": 1, "c": [{"d": 2}]}}') == {"a": {"b": 1, "c": [{"d": 2}]}}
    with pytest.raises(ValueError, match="'verdict' appears twice"):
        json_with_unique_keys(b'{"a": [{"verdict": "FAIL", "verdict": "PASS"}]}')


def judge_with(server_url: str, store, fault: str):
    judge = judge_from_dict(
        {"name": "pf", "setup": "passfail", "description": "Polite?", "model": "m1", "max_tokens": 16}
    )
    cases = [Case(id=f"c{k}", question="q", output=f"answer {k}") for k in range(4)]
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
    provider = OpenAICompatProvider(base_url=server_url)

    async def main():
        try:
            engine = Engine(store, EngineOptions(progress=False, retries=2, backoff=0.0))
            await engine.run_tasks(run_id, build_tasks(cases, [judge]), {"pf": provider})
        finally:
            await provider.aclose()

    asyncio.run(main())
    return store.judgments(run_id)


@pytest.mark.usefixtures("each_http_client")
@pytest.mark.parametrize("fault", ["duplicate_keys", "choices", "usage_bomb", "length"])
def test_no_hostile_answer_becomes_a_verdict_or_a_cost(store, fault):
    with serve_in_thread(MockConfig(faults={fault: 1.0})) as server:
        judgments = judge_with(server.url, store, fault)
        asked = server.stats()["requests"] if "requests" in server.stats() else None
    assert len(judgments) == 4
    assert all(j.verdict is None for j in judgments)
    assert all((j.cost or 0.0) < 1.0 for j in judgments)
    if fault == "length":  # the answer read, and marked: unparsed, cut
        assert {j.outcome for j in judgments} == {"unparsed"}
        assert all(j.reason.startswith("cut: the answer was cut at max_tokens (16)") for j in judgments)
    else:  # refused, once each (not retried)
        assert {j.outcome for j in judgments} == {"error"}
        assert all(j.attempts == 1 for j in judgments), asked


@pytest.mark.parametrize(
    "client", ["aiohttp", pytest.param("pyreqwest", marks=pytest.mark.needs("pyreqwest")), "httpx"]
)
def test_a_body_over_max_response_bytes_is_refused_as_it_is_read(client, monkeypatch):
    monkeypatch.setenv("JUGE_HTTP", "aiohttp" if client == "httpx" else client)
    http = httpx.AsyncClient() if client == "httpx" else None
    with serve_in_thread(MockConfig(faults={"huge": 1.0}, huge_bytes=20_000_000)) as server:
        provider = OpenAICompatProvider(base_url=server.url, max_response_bytes=1_000_000, http_client=http)
        with pytest.raises(ProviderError, match=r"over max_response_bytes \(1,000,000\)") as exc:
            complete(provider)
    assert not exc.value.retryable


def test_an_announced_length_over_the_bound_is_refused_and_one_under_it_reads():
    body = {"model": "m1", "choices": [{"message": {"content": "PASS\n" + "x" * 5000}, "finish_reason": "stop"}]}
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(200, json=body)))
    small = OpenAICompatProvider(base_url="http://test/v1", api_key="k", http_client=client, max_response_bytes=1000)
    with pytest.raises(ProviderError, match="max_response_bytes"):
        complete(small)
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(200, json=body)))
    roomy = OpenAICompatProvider(base_url="http://test/v1", api_key="k", http_client=client)
    assert complete(roomy).text.startswith("PASS\nxxx")


def test_the_bound_is_a_provider_option_checked_when_the_provider_is_made():
    with pytest.raises(ValueError, match="max_response_bytes must be a whole number"):
        make_provider("openai", base_url="http://127.0.0.1:9/v1", max_response_bytes="8MB")
    assert make_provider("openai", base_url="http://127.0.0.1:9/v1", max_response_bytes=5000).max_response_bytes == 5000


def test_the_anthropic_provider_bounds_its_body_too():
    pytest.importorskip("anthropic")
    from juge.providers.anthropic import AnthropicProvider

    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test-2026",
        "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "PASS\n" + "x" * 50_000}],
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }
    try:
        import httpx2 as library
    except ImportError:
        library = httpx
    client = library.AsyncClient(transport=library.MockTransport(lambda request: library.Response(200, json=message)))
    provider = AnthropicProvider(api_key="k", http_client=client, max_response_bytes=10_000)
    with pytest.raises(ProviderError, match="max_response_bytes") as exc:
        complete(provider)
    assert not exc.value.retryable
    client = library.AsyncClient(transport=library.MockTransport(lambda request: library.Response(200, json=message)))
    assert complete(AnthropicProvider(api_key="k", http_client=client)).text.startswith("PASS")


PEAK_RSS = """
import asyncio, json, sys
from juge.providers import ProviderError, Request
from juge.providers.openai_compat import OpenAICompatProvider

async def main():
    provider = OpenAICompatProvider(base_url=sys.argv[1])
    try:
        await provider.complete(Request(messages=({"role": "user", "content": "q"},), model="m"))
        return "answered"
    except ProviderError as exc:
        return str(exc)
    finally:
        await provider.aclose()

said = asyncio.run(main())
# This process's own peak (VmHWM): ru_maxrss also counts the forking parent's size at the fork, so under a
# large pytest process it measured pytest, not the client.
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"said": said, "peak_kb": peak}))
"""


@pytest.mark.slow
@pytest.mark.usefixtures("each_http_client")  # the child inherits JUGE_HTTP
def test_a_200_mb_answer_costs_the_client_no_more_memory_than_the_bound():
    from juge.testing.mockserver import serve_in_subprocess

    with serve_in_subprocess(MockConfig(faults={"huge": 1.0}, huge_bytes=200_000_000)) as server:
        done = subprocess.run([sys.executable, "-c", PEAK_RSS, server.url], capture_output=True, text=True, timeout=120)
    got = json.loads(done.stdout)
    assert "max_response_bytes" in got["said"]
    assert got["peak_kb"] < 250_000, got  # the interpreter and its imports, plus the 8 MB bound


def test_a_batch_answer_with_a_key_twice_is_that_requests_error_and_the_others_read():
    from juge.providers.batch_api import BatchStatus
    from juge.providers.openai_batches import OpenAIBatches
    from juge.providers.openai_compat import _payload, _response

    def line(key: str, message: str) -> str:
        body = f'{{"model": "m1", "choices": [{{"message": {message}, "finish_reason": "stop"}}]}}'
        return f'{{"custom_id": "{key}", "response": {{"status_code": 200, "body": {body}}}}}'

    content = "\n".join(
        [line("a", '{"content": "PASS\\nok"}'), line("b", '{"content": "FAIL\\nx", "content": "PASS\\ny"}')]
    )
    batches = OpenAIBatches("http://test/v1", {}, trust_env=False, payload=_payload, response=_response)
    batches._client = httpx.AsyncClient(
        transport=httpx.MockTransport(lambda request: httpx.Response(200, text=content))
    )
    status = BatchStatus(id="b1", state="completed", ended=True, counts={}, detail={"output_file_id": "f1"})
    got = asyncio.run(batches.results(status, {"a": "m1", "b": "m1"}))
    assert got["a"].text == "PASS\nok"
    assert isinstance(got["b"], ProviderError) and "'content' appears twice" in str(got["b"])
