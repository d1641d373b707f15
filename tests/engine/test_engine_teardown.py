"""A run that fails part-way: the other calls in flight are cancelled before the providers close,
and nothing the tear-down caused is stored (an `error` judgment or output means the model or
provider failed, and a resume would never retry it)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import httpx
import pytest

from juge.config import load_eval
from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers import Request, Response, make_provider, register_provider
from juge.providers.base import Provider, ProviderClosed
from juge.providers.openai_compat import OpenAICompatProvider
from juge.runner import run_eval
from juge.store import Store


class SessionLike(Provider):
    """Answers after a short wait; once closed, fails every call as aiohttp does ("Session is closed").
    Closing takes a moment of I/O, during which other tasks run."""

    name = "session-like"
    calls_after_close = 0

    def __init__(self, **_):
        self.closed = False

    async def complete(self, request: Request) -> Response:
        if self.closed:
            SessionLike.calls_after_close += 1
            raise RuntimeError("Session is closed")
        await asyncio.sleep(0.005)
        if self.closed:
            SessionLike.calls_after_close += 1
            raise RuntimeError("Session is closed")
        return Response(text="PASS\nFine.", model="m1")

    async def aclose(self) -> None:
        self.closed = True
        await asyncio.sleep(0.05)


register_provider("session-like-test", SessionLike)


def fail_on_nth(method, n: int):
    """`method`, raising 'database is locked' (another process holds the database) on its n-th call."""
    count = 0

    def wrapper(*args, **kwargs):
        nonlocal count
        count += 1
        if count == n:
            raise sqlite3.OperationalError("database is locked")
        return method(*args, **kwargs)

    return wrapper


def test_a_failing_worker_cancels_the_others_before_the_provider_closes(store):
    judge = judge_from_dict({"name": "pf", "setup": "passfail", "description": "Polite?", "model": "m1"})
    cases = [Case(id=f"c{i}", question="q", output=f"answer {i}") for i in range(200)]
    provider = SessionLike()
    SessionLike.calls_after_close = 0
    engine = Engine(store, EngineOptions(concurrency=32, progress=False))
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
    store.save_judgment = fail_on_nth(store.save_judgment, 40)

    async def main() -> int:
        try:
            return await engine.run_tasks(run_id, build_tasks(cases, [judge]), {"pf": provider})
        finally:
            await provider.aclose()

    with pytest.raises(sqlite3.OperationalError, match="database is locked"):  # the cause itself, not a group
        asyncio.run(main())
    assert SessionLike.calls_after_close == 0
    stored = store.judgments(run_id)
    assert 0 < len(stored) < 200
    assert all(j.outcome == "ok" for j in stored)


def test_workers_cancelled_while_waiting_for_a_commit_leave_it_to_complete(store, caplog):
    """Cached answers: the workers all save in one event-loop turn. The first save of the second turn
    fails before any commit is pending, so the others are cancelled while they wait for the commit
    they asked for: that commit still runs, and nothing fails inside the event loop."""
    judge = judge_from_dict({"name": "pf", "setup": "passfail", "description": "Polite?", "model": "m1"})
    cases = [Case(id=f"c{i}", question="q", output=f"answer {i}") for i in range(64)]
    provider = make_provider("scripted", default="PASS\nFine.")
    engine = Engine(store, EngineOptions(concurrency=32, progress=False))
    tasks = build_tasks(cases, [judge])
    asyncio.run(
        engine.run_tasks(store.create_run(dataset_hash="d", juge_version="t", cases=cases), tasks, {"pf": provider})
    )
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
    store.save_judgment = fail_on_nth(store.save_judgment, 33)
    with pytest.raises(sqlite3.OperationalError):
        asyncio.run(engine.run_tasks(run_id, tasks, {"pf": provider}))
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []
    assert len(store.judgments(run_id)) == 63  # all but the one whose save failed, committed


def write_system_eval(tmp_path: Path, n: int) -> Path:
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i}", "question": f"q{i}"}) + "\n" for i in range(n))
    )
    (tmp_path / "system.j2").write_text("{{ input }}")
    path = tmp_path / "eval.toml"
    path.write_text("""
cases = "cases.jsonl"
[engine]
concurrency = 16
[system]
model = "m1"
template = "system.j2"
provider = { name = "session-like-test" }
[[judges]]
name = "pf"
setup = "passfail"
description = "Helpful?"
model = "judge-1"
provider = "scripted"
provider_options = { default = "PASS\\nHelpful.", model = "judge-1" }
""")
    return path


def test_a_failing_system_call_cancels_the_others_before_the_provider_closes(tmp_path):
    path = write_system_eval(tmp_path, 120)
    SessionLike.calls_after_close = 0
    with Store(tmp_path / "j.db") as store:
        store.save_output = fail_on_nth(store.save_output, 30)
        with pytest.raises(sqlite3.OperationalError, match="database is locked"):
            run_eval(load_eval(path), store, progress=False)
        [run_id] = [r["id"] for r in store.list_runs()]
        outputs = store.outputs(run_id)
    assert SessionLike.calls_after_close == 0
    assert outputs and all(o["outcome"] == "ok" for o in outputs.values())


def test_a_closed_openai_provider_stops_the_run_and_stores_no_error(store):
    """A call made after the provider closed in this event loop is juge shutting down, not a failed model."""
    judge = judge_from_dict({"name": "pf", "setup": "passfail", "description": "Polite?", "model": "m1"})
    cases = [Case(id=f"c{i}", question="q", output=f"answer {i}") for i in range(3)]
    reply = {"model": "m1", "choices": [{"message": {"content": "PASS\nok"}}]}
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(200, json=reply)))
    provider = OpenAICompatProvider(base_url="http://test/v1", api_key="k", http_client=client)
    engine = Engine(store, EngineOptions(progress=False))
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)

    async def main() -> int:
        await provider.aclose()
        return await engine.run_tasks(run_id, build_tasks(cases, [judge]), {"pf": provider})

    with pytest.raises(ProviderClosed):
        asyncio.run(main())
    assert store.judgments(run_id) == [] and store.count_calls(run_id) == 0
