"""Group commit in the store and the engine, and the HTTP path the throughput benchmark relies on.

The store's promise (juge.store docstring): inside a group, writes become durable together at
`commit()`, in the order they were made, so a judgment is never visible (durable) without the
call log and cache entry it came from; and the engine commits every event-loop turn while each
judge call keeps its slot until its rows are committed, so a kill loses at most the calls in
flight. These tests read the database through a second connection, as a resumed process would.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from juge.data.records import Case, Judgment
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers.base import Provider, Request, Response
from juge.providers.openai_compat import OpenAICompatProvider, _env_proxy
from juge.store import Store
from juge.testing.mockserver import MockConfig, serve_in_thread


def outside(db: Path, sql: str) -> list[tuple]:
    """What another process would read now."""
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def judgment(item_id: str) -> Judgment:
    return Judgment(
        item_id=item_id,
        judge="j",
        model="m",
        template="t",
        template_hash="h",
        text="PASS",
        outcome="ok",
        verdict="PASS",
        run_id="r",
    )


def test_grouped_writes_are_durable_only_at_commit_and_together(tmp_path):
    db = tmp_path / "j.db"
    with Store(db) as store:
        with store.grouped():
            store.log_call(
                run_id="r",
                cache_key="k1",
                provider="p",
                model="m",
                attempt=0,
                request={"q": 1},
                response={"text": "PASS"},
                error=None,
                status=None,
                latency=0.1,
                cache=True,
            )
            assert store.save_judgment("r", judgment("a"))
            assert store.cache_get("k1") == {"text": "PASS"}  # this connection sees its own writes
            assert outside(db, "SELECT COUNT(*) FROM calls") == [(0,)]  # another one does not, yet
            assert outside(db, "SELECT COUNT(*) FROM judgments") == [(0,)]
            store.commit()
            assert outside(
                db,
                "SELECT COUNT(*) FROM calls UNION ALL SELECT COUNT(*) FROM cache"
                " UNION ALL SELECT COUNT(*) FROM judgments",
            ) == [(1,), (1,), (1,)]
            assert not store.save_judgment("r", judgment("a"))  # still exactly once
            store.save_checks("r", "a", {"c": (True, None)})  # a transaction inside a group commits the group first
            assert store.save_judgment("r", judgment("b"))
        assert outside(db, "SELECT item_id FROM judgments ORDER BY item_id") == [("a",), ("b",)]  # leaving commits
        store.log_call(
            run_id="r",
            cache_key="k2",
            provider="p",
            model="m",
            attempt=0,
            request={},
            response=None,
            error="x",
            status=500,
            latency=0.1,
        )
        assert outside(db, "SELECT COUNT(*) FROM calls") == [(2,)]  # outside a group: committed at once


class WatchingProvider(Provider):
    """Answers PASS after a short sleep and, at the start of every call, checks from a second
    connection that the committed store keeps the engine's promises."""

    name = "watching"

    def __init__(self, db: Path, concurrency: int):
        self.db, self.concurrency = db, concurrency
        self.returned = 0
        self.max_uncommitted = 0

    async def complete(self, request: Request) -> Response:
        self.check()
        await asyncio.sleep(0.002 * (1 + len(request.messages[-1]["content"]) % 5))
        self.returned += 1
        return Response(text="PASS\nfine", model="m", tokens_in=3, tokens_out=2)

    def check(self) -> None:
        judged = {r[0] for r in outside(self.db, "SELECT item_id FROM judgments")}
        answered = {
            json.loads(r[0])["meta"]["item_id"]: r[1]
            for r in outside(self.db, "SELECT request, cache_key FROM calls WHERE response IS NOT NULL")
        }
        cached = {r[0] for r in outside(self.db, "SELECT key FROM cache")}
        # a judgment is durable only with its call log and its cache entry
        assert judged <= set(answered) and {answered[i] for i in judged} <= cached
        # answers bought but not yet committed: only calls still holding a slot (this one holds one)
        self.max_uncommitted = max(self.max_uncommitted, self.returned - len(judged))
        assert self.returned - len(judged) <= self.concurrency - 1


@pytest.mark.parametrize("concurrency", [1, 8])
def test_engine_commits_as_it_goes_and_never_a_judgment_before_its_call(tmp_path, concurrency):
    db = tmp_path / "j.db"
    judge = judge_from_dict({"name": "pf", "setup": "passfail", "description": "Is it polite?", "model": "m"})
    cases = [Case(id=f"c{i}", question=f"q{i}", output="thanks" + "!" * i) for i in range(60)]
    provider = WatchingProvider(db, concurrency)
    with Store(db) as store:
        engine = Engine(store, EngineOptions(concurrency=concurrency, progress=False))
        run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
        assert asyncio.run(engine.run_tasks(run_id, build_tasks(cases, [judge]), {"pf": provider})) == 60
    provider.check()
    assert outside(db, "SELECT COUNT(*) FROM judgments") == [(60,)]
    assert provider.returned == 60


def test_provider_keeps_hundreds_of_calls_in_flight_on_one_session():
    """No connection-pool cap below the engine's concurrency (aiohttp's default is 100)."""
    n = 300
    # the server answers none until all 300 have arrived: a pool capped below that never gets there
    with serve_in_thread(MockConfig(latency=0.05, hold_until=n)) as server:

        async def main() -> list[Response]:
            provider = OpenAICompatProvider(base_url=server.url, timeout=60)
            try:
                return list(
                    await asyncio.gather(
                        *(
                            provider.complete(
                                Request(messages=({"role": "user", "content": f"question {i}"},), model="m")
                            )
                            for i in range(n)
                        )
                    )
                )
            finally:
                await provider.aclose()

        responses = asyncio.run(main())
        stats = server.stats()
    assert len(responses) == n and all(r.text for r in responses)
    assert stats["max_inflight"] == n


def test_proxy_comes_from_the_environment_once(monkeypatch):
    for name in (
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    assert _env_proxy("https://api.example.com/v1/chat/completions") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,models.internal")
    assert _env_proxy("https://api.example.com/v1/chat/completions") == "http://proxy.internal:3128"
    assert _env_proxy("https://models.internal/v1/chat/completions") is None
    assert _env_proxy("http://api.example.com/v1/chat/completions") is None  # no HTTP proxy named
    assert OpenAICompatProvider(base_url="https://api.example.com/v1").proxy == "http://proxy.internal:3128"
