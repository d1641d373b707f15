import asyncio
import json

import httpx
import pytest

from juge.errors import InputError
from juge.providers import ProviderError, Request, make_provider
from juge.providers.anthropic import AnthropicProvider
from juge.providers.openai_compat import OpenAICompatProvider
from juge.providers.pricing import call_cost, price_table
from juge.providers.registry import UnknownProvider
from juge.providers.replay import ReplayProvider
from juge.runner import model_family, same_family_warnings


def req(text="hello", **meta):
    return Request(
        messages=({"role": "system", "content": "sys"}, {"role": "user", "content": text}), model="m-1", meta=meta
    )


def run(coro):
    return asyncio.run(coro)


def test_scripted_rules_default_and_refusal():
    p = make_provider(
        "scripted", responses=[{"match": "cake", "text": "PASS\nok"}, {"match": "bomb", "text": "no", "refused": True}]
    )
    assert run(p.complete(req("a cake"))).text == "PASS\nok"
    assert run(p.complete(req("a bomb"))).refused
    with pytest.raises(ProviderError, match="no rule"):
        run(p.complete(req("other")))


def test_scripted_injected_failures_are_retryable():
    p = make_provider("scripted", default="x", fail={"status": 429, "times": 1})
    with pytest.raises(ProviderError) as exc:
        run(p.complete(req()))
    assert exc.value.retryable and exc.value.status == 429
    assert run(p.complete(req())).text == "x"


def test_unknown_provider():
    with pytest.raises(UnknownProvider, match="known: .*scripted"):
        make_provider("nope")


def test_replay_serves_recorded_calls_and_misses_are_errors(sample_dir):
    p = ReplayProvider(path=sample_dir / "judgments.jsonl")
    first = json.loads((sample_dir / "judgments.jsonl").read_text().splitlines()[0])
    r = run(
        p.complete(req(item_id=first["item_id"], judge=first["judge"], template=first["prompt"], order=first["order"]))
    )
    assert r.text == first["text"] and r.model == first["model"]
    with pytest.raises(ProviderError, match="no recorded answer"):
        run(p.complete(req(item_id=first["item_id"], judge="other", template=first["prompt"], order="12")))


def test_replay_bad_file(tmp_path):
    p = tmp_path / "j.jsonl"
    p.write_text('{"item_id": "a", "judge": "j", "prompt": "t"}\n{"item_id": "b"}\n')
    with pytest.raises(Exception, match=r"j.jsonl:2: field 'judge'"):
        ReplayProvider(path=p)


@pytest.mark.parametrize(
    "content, expected",
    [
        (b'{"item_id": "a", "judge": "j", "prompt": "t"}\n42\n', r"j.jsonl:2: expected a JSON object"),
        (b'{"item_id": "a", "judge": "j", "prompt": "caf\xe9"}\n', r"j.jsonl.*(UTF-8|utf-8)"),
    ],
)
def test_replay_file_errors_name_file_and_line(tmp_path, content, expected):
    p = tmp_path / "j.jsonl"
    p.write_bytes(content)
    with pytest.raises(InputError, match=expected):
        ReplayProvider(path=p)


def test_replay_folder_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="is not a file"):
        ReplayProvider(path=tmp_path)


def openai_with(handler):
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return OpenAICompatProvider(base_url="http://test/v1", api_key="k", http_client=client)


def completion(content, finish="stop", refusal=None):
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test-2026-01-01",
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
            }
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
    }


def test_openai_compat_success_and_request_shape():
    seen = {}

    def handler(request):
        seen.update(json.loads(request.content))
        return httpx.Response(200, json=completion("PASS\nfine"))

    p = openai_with(handler)
    r = run(
        p.complete(
            Request(messages=({"role": "user", "content": "q"},), model="gpt-test", json_schema={"type": "object"})
        )
    )
    assert (r.text, r.model, r.tokens_in, r.tokens_out, r.refused) == (
        "PASS\nfine",
        "gpt-test-2026-01-01",
        11,
        3,
        False,
    )
    assert seen["temperature"] == 0.0 and seen["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("body", [completion(None, refusal="I can't help"), completion("", finish="content_filter")])
def test_openai_compat_refusals(body):
    r = run(openai_with(lambda request: httpx.Response(200, json=body)).complete(req()))
    assert r.refused and r.refusal_reason


@pytest.mark.parametrize("status, retryable", [(429, True), (500, True), (503, True), (400, False), (401, False)])
def test_openai_compat_errors(status, retryable):
    p = openai_with(lambda request: httpx.Response(status, json={"error": {"message": "nope"}}))
    with pytest.raises(ProviderError) as exc:
        run(p.complete(req()))
    assert exc.value.retryable is retryable and exc.value.status == status


@pytest.mark.needs("anthropic")
def test_anthropic_success_refusal_and_overload():
    bodies = iter(
        [
            (
                200,
                {
                    "id": "m",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test-2026",
                    "stop_reason": "end_turn",
                    "content": [{"type": "text", "text": "[[A]]"}],
                    "usage": {"input_tokens": 5, "output_tokens": 2},
                },
            ),
            (
                200,
                {
                    "id": "m",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test-2026",
                    "stop_reason": "refusal",
                    "content": [],
                    "usage": {"input_tokens": 5, "output_tokens": 0},
                },
            ),
            (529, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
            (
                200,
                {
                    "id": "m",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test-2026",
                    "stop_reason": "max_tokens",
                    "content": [{"type": "text", "text": "Let me think"}],
                    "usage": {"input_tokens": 5, "output_tokens": 3},
                },
            ),
        ]
    )
    sent = []

    def handler(request):
        sent.append(json.loads(request.content))
        status, body = next(bodies)
        return httpx.Response(status, json=body)

    # Recent anthropic SDKs run on httpx2; older ones on httpx. Use whichever this SDK takes.
    try:
        import httpx2 as transport_lib
    except ImportError:
        transport_lib = httpx

    def handler2(request):
        response = handler(request)
        return transport_lib.Response(response.status_code, json=response.json())

    client = transport_lib.AsyncClient(transport=transport_lib.MockTransport(handler2))
    try:
        p = AnthropicProvider(api_key="k", http_client=client)
    except TypeError:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        p = AnthropicProvider(api_key="k", http_client=client)
    r = run(p.complete(req()))
    assert r.text == "[[A]]" and r.model == "claude-test-2026" and not r.refused
    assert sent[0]["system"] == "sys" and all(m["role"] != "system" for m in sent[0]["messages"])
    assert sent[0]["temperature"] == 0.0
    assert run(p.complete(req())).refused
    with pytest.raises(ProviderError) as exc:
        run(p.complete(req()))
    assert exc.value.retryable
    cut = run(p.complete(req()))
    assert cut.truncated and cut.text == "Let me think" and not r.truncated


def test_pricing_longest_prefix_and_unknown():
    table = price_table({"gpt-4o-mini-special": {"input": 1.0, "output": 2.0}})
    assert call_cost("gpt-4o-mini-special-1", 1_000_000, 1_000_000, table) == pytest.approx(3.0)
    assert call_cost("gpt-4o-2024-08-06", 1000, 1000, table) == pytest.approx((1000 * 2.5 + 1000 * 10) / 1e6)
    assert call_cost("mystery", 10, 10, table) is None
    assert call_cost("gpt-4o", None, 10, table) is None


def test_self_preference_warnings():
    class J:
        def __init__(self, name, model):
            self.name, self.model = name, model

    assert model_family("gpt-4o-mini-2024-07-18") == "gpt"
    assert model_family("anthropic/claude-3-5-sonnet") == "claude"
    w = same_family_warnings("gpt-4o", [J("a", "gpt-4o"), J("b", "gpt-4o-mini"), J("c", "claude-3-5-haiku")])
    assert len(w) == 2 and "same model" in w[0] and "same family" in w[1]
    assert same_family_warnings(None, [J("a", "gpt-4o")]) == []


def test_openai_compat_no_choices_is_a_provider_error():
    body = completion("x")
    body["choices"] = []
    with pytest.raises(ProviderError, match="no choices"):
        run(openai_with(lambda request: httpx.Response(200, json=body)).complete(req()))


PLUGIN = '''
from juge.providers.base import Response


class Recorded:
    """A third-party provider written before Provider was a base class: no subclass, optional members."""

    name = "recorded"

    def __init__(self, cacheable=None, closes=False):
        self.calls, self.closed = 0, False
        if cacheable is not None:
            self.cacheable = cacheable
        if closes:
            self.aclose = self._close

    async def complete(self, request):
        self.calls += 1
        return Response(text="PASS", model="plugin-1")

    async def _close(self):
        self.closed = True


class NotAProvider:
    name = "broken"
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The `juge.providers` entry points of an installed plugin package."""
    from importlib.metadata import EntryPoint

    import juge.providers.registry as registry

    (tmp_path / "juge_plugin_test.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    points = [
        EntryPoint("recorded", "juge_plugin_test:Recorded", "juge.providers"),
        EntryPoint("broken", "juge_plugin_test:NotAProvider", "juge.providers"),
    ]
    monkeypatch.setattr(registry, "entry_points", lambda group: [p for p in points if p.group == group])


@pytest.mark.parametrize(("cacheable", "calls"), [(None, 1), (False, 2)])
def test_a_plugin_provider_that_does_not_subclass_provider_keeps_working(plugin, store, cacheable, calls):
    from juge.engine import Engine, EngineOptions
    from juge.providers import Provider

    provider = make_provider("recorded", cacheable=cacheable, closes=True)
    assert isinstance(provider, Provider) and provider.cache_identity == "recorded"
    engine = Engine(store, EngineOptions(progress=False))

    async def twice():
        for _ in range(2):
            answer = await engine.call(provider, req(), run_id=None)
            assert answer[0].text == "PASS"
        await provider.aclose()

    run(twice())
    assert provider.plugin.calls == calls and provider.plugin.closed  # cacheable=False: never from the cache
    run(make_provider("recorded").aclose())  # a plugin without aclose has nothing to close


def test_a_plugin_that_is_not_a_provider_is_an_input_error(plugin, tmp_path):
    from juge.config import ProviderSpec
    from juge.runner import Providers

    with pytest.raises(InputError, match="NotAProvider is not a provider"):
        Providers(ProviderSpec(name="broken"), tmp_path).get(None)
