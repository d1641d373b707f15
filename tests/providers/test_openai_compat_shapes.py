"""OpenAI-compatible answers of the less common shapes, proxies and time limits."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers import Provider, ProviderError, Request, Response
from juge.providers.openai_compat import OpenAICompatProvider, _env_proxy
from juge.testing.mockserver import MockConfig, serve_in_thread

REQUEST = Request(messages=({"role": "user", "content": "q"},), model="m1", max_tokens=16)


def answer_of(body, status: int = 200) -> Response:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(status, json=body)))
    provider = OpenAICompatProvider(base_url="http://test/v1", api_key="k", http_client=client)
    return asyncio.run(provider.complete(REQUEST))


def completion(content, finish="stop") -> dict:
    return {
        "model": "m1-2026",
        "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": finish}],
    }


@pytest.mark.parametrize(
    "body, message",
    [
        (
            {"error": {"message": "The server is overloaded, try again", "type": "server_error"}},
            "overloaded, try again",
        ),
        ({"error": "rate limited upstream"}, "rate limited upstream"),
    ],
)
def test_a_200_carrying_an_error_object_is_a_retryable_error_with_the_servers_message(body, message):
    with pytest.raises(ProviderError, match=message) as exc:
        answer_of(body)
    assert exc.value.retryable


def test_a_length_cut_answer_keeps_its_text_and_says_so():
    r = answer_of(completion("PASS\nThe answer is pol", finish="length"))
    assert r.text == "PASS\nThe answer is pol" and r.truncated
    assert not answer_of(completion("PASS\nok")).truncated


class Cut(Provider):
    """Answers `text` as cut at max_tokens."""

    name = "cut"

    def __init__(self, texts: dict[str, str]):
        self.texts = texts

    async def complete(self, request: Request) -> Response:
        output = request.messages[-1]["content"]
        text = next(t for key, t in self.texts.items() if key in output)
        return Response(text=text, model="m1", truncated=True)


def test_a_cut_answer_is_unparsed_and_says_it_was_cut_even_when_it_parses(store):
    judge = judge_from_dict(
        {"name": "pf", "setup": "passfail", "description": "Polite?", "model": "m1", "max_tokens": 16}
    )
    cases = [Case(id="a", question="q", output="alpha"), Case(id="b", question="q", output="beta")]
    provider = Cut({"alpha": "Let me think about whether this answer is", "beta": "FAIL\nRude because it"})
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
    asyncio.run(
        Engine(store, EngineOptions(progress=False)).run_tasks(run_id, build_tasks(cases, [judge]), {"pf": provider})
    )
    got = {j.item_id: j for j in store.judgments(run_id)}
    assert (got["a"].outcome, got["a"].verdict) == ("unparsed", None)
    assert got["a"].reason.startswith("cut: the answer was cut at max_tokens (16); ")
    # Its verdict may be the half before "... Answer: PASS": never counted (issue 27).
    assert (got["b"].outcome, got["b"].verdict) == ("unparsed", None)
    assert got["b"].reason.startswith("cut: the answer was cut at max_tokens (16)")
    # A cached cut answer is still known to be cut.
    again = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
    engine = Engine(store, EngineOptions(progress=False))
    asyncio.run(engine.run_tasks(again, build_tasks(cases, [judge]), {"pf": provider}))
    assert engine.stats["cache_hits"] == 2
    assert "cut at max_tokens" in {j.item_id: j for j in store.judgments(again)}["a"].reason


def test_content_given_as_parts_joins_the_text_parts():
    parts = [
        {"type": "text", "text": "PASS\n"},
        {"type": "image_url", "image_url": {"url": "x"}},
        {"type": "text", "text": "Polite."},
    ]
    assert answer_of(completion(parts)).text == "PASS\nPolite."
    refused = answer_of(completion([{"type": "refusal", "refusal": "I can't judge this"}]))
    assert refused.refused and refused.refusal_reason == "I can't judge this" and refused.text == ""


@pytest.mark.parametrize("parts", [["PASS"], [{"type": "text", "text": 5}], 42])
def test_content_of_another_shape_is_a_non_retryable_error(parts):
    with pytest.raises(ProviderError, match="content") as exc:
        answer_of(completion(parts))
    assert not exc.value.retryable


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1/chat/completions",
        "http://localhost:8000/v1",
        "http://[::1]:8000/v1",
        "http://127.5.0.1/v1",
        "http://api.localhost/v1",
    ],
)
def test_loopback_never_goes_through_a_proxy(monkeypatch, url):
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    assert _env_proxy(url) is None
    assert _env_proxy("http://models.example/v1") == "http://127.0.0.1:9"


@pytest.mark.usefixtures("each_http_client")
def test_a_local_server_answers_with_a_proxy_in_the_environment(monkeypatch):
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there

    async def ask(url: str) -> Response:
        provider = OpenAICompatProvider(base_url=url)
        try:
            return await provider.complete(REQUEST)
        finally:
            await provider.aclose()

    with serve_in_thread(MockConfig()) as server:
        assert isinstance(asyncio.run(ask(server.url)), Response)


@pytest.mark.usefixtures("each_http_client")
def test_the_engine_s_time_limit_is_the_one_that_applies():
    """Without a timeout of its own, the provider waits as long as the engine allows (aiohttp gave up at
    120 s); with one, it gives up then."""

    async def ask(url: str, **options) -> Response | ProviderError:
        provider = OpenAICompatProvider(base_url=url, **options)
        try:
            async with asyncio.timeout(5):
                return await provider.complete(REQUEST)
        except ProviderError as exc:
            return exc
        finally:
            await provider.aclose()

    with serve_in_thread(MockConfig(latency=0.4)) as server:
        default = OpenAICompatProvider(base_url=server.url)
        assert default.timeout is None
        assert isinstance(asyncio.run(ask(server.url)), Response)
        limited = asyncio.run(ask(server.url, timeout=0.1))
    assert isinstance(limited, ProviderError) and limited.retryable and "0.1 s" in str(limited)
