"""Answers of the wrong shape fail one call (an `error` judgment), never the run, and are never cached."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from juge.config import load_eval
from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers import ProviderError, Request, make_provider, register_provider
from juge.providers.base import Response
from juge.providers.openai_compat import OpenAICompatProvider
from juge.runner import run_eval
from juge.store import Store

REQUEST = Request(messages=({"role": "user", "content": "q"},), model="m1")


def reply(**changes):
    body = {
        "model": "m1-2026",
        "choices": [{"message": {"content": "PASS\nok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3},
    }
    for path, value in changes.items():
        *parents, last = path.split("__")
        node = body
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[last] = value
    return body


def answer_of(body) -> Response:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(200, json=body)))
    provider = OpenAICompatProvider(base_url="http://test/v1", api_key="k", http_client=client)
    return asyncio.run(provider.complete(REQUEST))


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"model": 5}, "model"),
        ({"model": ["m1"]}, "model"),
        ({"usage__prompt_tokens": "11"}, "tokens_in"),
        ({"usage__completion_tokens": 2.5}, "tokens_out"),
        ({"usage__completion_tokens": True}, "tokens_out"),
        ({"usage__prompt_tokens": -1}, "tokens_in"),
        ({"choices": {"0": {}}}, "choices"),
        ({"choices__0__message": "PASS"}, "message"),
        ({"choices__0__message__refusal": 7}, "refusal"),
    ],
)
def test_a_malformed_completion_is_a_non_retryable_provider_error_naming_the_field(changes, field):
    with pytest.raises(ProviderError, match=field) as exc:
        answer_of(reply(**changes))
    assert not exc.value.retryable  # a healthy server answers the same shape again


def test_a_well_formed_completion_still_reads():
    r = answer_of(reply(usage=None, model=None))
    assert (r.text, r.model, r.tokens_in, r.tokens_out) == ("PASS\nok", "m1", None, None)


class BadModelServer(OpenAICompatProvider):
    """An OpenAI-compatible server that answers `"model": 5` for the case whose output says 'odd'."""

    requests = 0

    def __init__(self, **_):
        def handle(request: httpx.Request) -> httpx.Response:
            BadModelServer.requests += 1
            odd = "odd" in json.loads(request.content)["messages"][-1]["content"]
            return httpx.Response(200, json=reply(model=5) if odd else reply())

        client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
        super().__init__(base_url="http://test/v1", api_key="k", http_client=client)


register_provider("bad-model-test", BadModelServer)


def write_eval(tmp_path: Path) -> Path:
    outputs = ["fine", "fine too", "odd one", "also fine"]
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i}", "question": "q", "output": o}) + "\n" for i, o in enumerate(outputs))
    )
    path = tmp_path / "eval.toml"
    path.write_text("""
cases = "cases.jsonl"
[provider]
name = "bad-model-test"
[engine]
retries = 2
backoff = 0.001
[[judges]]
name = "pf"
setup = "passfail"
description = "Helpful?"
model = "m1"
""")
    return path


def test_a_malformed_answer_is_an_error_judgment_not_cached_and_asked_again_by_a_new_run(tmp_path):
    path = write_eval(tmp_path)
    BadModelServer.requests = 0
    with Store(tmp_path / "j.db") as store:
        first = run_eval(load_eval(path), store, progress=False)
        got = {j.item_id: (j.outcome, j.verdict) for j in store.judgments(first.run_id)}
        [bad] = [j for j in store.judgments(first.run_id) if j.item_id == "c2"]
        assert BadModelServer.requests == 4  # not retried: the same server gives the same shape
        second = run_eval(load_eval(path), store, progress=False, resume=False)
        cached = store.conn.execute("SELECT COUNT(*) FROM cache").fetchone()[0]
    assert got == {"c0": ("ok", "PASS"), "c1": ("ok", "PASS"), "c2": ("error", None), "c3": ("ok", "PASS")}
    assert "model" in bad.reason and bad.attempts == 1
    assert cached == 3
    assert second.engine_stats["cache_hits"] == 3 and second.engine_stats["failed_attempts"] == 1
    assert BadModelServer.requests == 5


def test_an_answer_the_judgment_cannot_be_built_from_is_an_error_judgment(store):
    """Fail closed: whatever goes wrong between the answer and the stored judgment fails that task only."""
    judge = judge_from_dict({"name": "pf", "setup": "passfail", "description": "Polite?", "model": "m1"})
    parse = judge.parse

    def fragile_parse(text):
        if "boom" in text:
            raise ValueError("the parser tripped")
        return parse(text)

    object.__setattr__(judge, "parse", fragile_parse)
    provider = make_provider("scripted", responses=[{"match": "trip", "text": "PASS boom"}], default="PASS\nFine.")
    cases = [Case(id="a", question="q", output="trip"), Case(id="b", question="q", output="ok")]
    engine = Engine(store, EngineOptions(progress=False))
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
    stored = asyncio.run(engine.run_tasks(run_id, build_tasks(cases, [judge]), {"pf": provider}))
    got = {j.item_id: j for j in store.judgments(run_id)}
    assert stored == 2 and got["b"].outcome == "ok"
    assert got["a"].outcome == "error" and got["a"].verdict is None
    assert "the parser tripped" in got["a"].reason and got["a"].text == "PASS boom"


def test_a_malformed_cached_answer_is_asked_again(store):
    """A cache entry of the wrong shape (written before answers were checked) is a miss, not a crash."""
    judge = judge_from_dict({"name": "pf", "setup": "passfail", "description": "Polite?", "model": "m1"})
    case = Case(id="a", question="q", output="o")
    provider = make_provider("scripted", default="PASS\nFine.")
    engine = Engine(store, EngineOptions(progress=False))
    first = store.create_run(dataset_hash="d", juge_version="t", cases=[case])
    asyncio.run(engine.run_tasks(first, build_tasks([case], [judge]), {"pf": provider}))
    store.conn.execute("UPDATE cache SET response = json_set(response, '$.model', 5)")
    second = store.create_run(dataset_hash="d", juge_version="t", cases=[case])
    asyncio.run(
        Engine(store, EngineOptions(progress=False)).run_tasks(second, build_tasks([case], [judge]), {"pf": provider})
    )
    [j] = store.judgments(second)
    assert (j.outcome, j.verdict, j.model, j.attempts) == ("ok", "PASS", "scripted-1", 1)
