"""A server never reached stops the run in seconds (issue 30): three failed connections in a row before any
reply, instead of every call's retries (82 s of silent retries before)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from cli_helpers import run_cli, write_jsonl
from juge.engine import Engine, EngineOptions
from juge.engine.calls import UNREACHABLE_STOP
from juge.providers import ProviderError, Request
from juge.providers.base import Unreachable
from juge.providers.openai_compat import OpenAICompatProvider
from juge.store import Store

BODY = {"model": "m", "choices": [{"message": {"content": "PASS\nok"}, "finish_reason": "stop"}], "usage": {}}


def _provider(answer) -> OpenAICompatProvider:
    client = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    return OpenAICompatProvider(base_url="http://judge.test/v1", api_key="k", http_client=client)


def _request(i: int) -> Request:
    return Request(messages=({"role": "user", "content": f"q{i}"},), model="m")


def test_never_reached_stops_after_a_few_attempts(tmp_path: Path) -> None:
    seen = []

    def refuse(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.host)
        raise httpx.ConnectError("connection refused", request=request)

    async def go() -> BaseException | None:
        provider = _provider(refuse)
        with Store(tmp_path / "j.db") as store:
            engine = Engine(store, EngineOptions(retries=4, backoff=0.0, progress=False))
            try:
                await engine.call(provider, _request(0), run_id=None)
            except BaseException as exc:  # noqa: BLE001 - the test looks at what ended the call
                return exc
        return None

    stopped = asyncio.run(go())
    assert isinstance(stopped, Unreachable) and not isinstance(stopped, ProviderError)
    assert len(seen) == UNREACHABLE_STOP  # not retries + 1 = 5 attempts, and never the other calls' too
    assert "judge.test" in str(stopped)  # names the address


def test_a_server_that_answered_once_is_retried_as_before(tmp_path: Path) -> None:
    state = {"n": 0}

    def flaky(request: httpx.Request) -> httpx.Response:
        state["n"] += 1
        if state["n"] == 1:
            return httpx.Response(200, json=BODY)
        raise httpx.ConnectError("connection refused", request=request)

    async def go() -> list[object]:
        provider = _provider(flaky)
        out: list[object] = []
        with Store(tmp_path / "j.db") as store:
            engine = Engine(store, EngineOptions(retries=4, backoff=0.0, progress=False))
            for i in range(2):
                try:
                    out.append((await engine.call(provider, _request(i), run_id=None)).response.text)
                except BaseException as exc:  # noqa: BLE001
                    out.append(exc)
        return out

    first, second = asyncio.run(go())
    assert first == "PASS\nok"
    # reached once: a later outage is an ordinary failed call after all its retries, not a stopped run
    assert isinstance(second, ProviderError) and second.attempts == 5
    assert state["n"] == 1 + 5


@pytest.mark.usefixtures("each_http_client")
def test_a_run_on_a_closed_port_exits_3_naming_it(monkeypatch, capsys, tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    write_jsonl(tmp_path / "c.jsonl", [{"id": f"c{i}", "question": "q", "output": "o"} for i in range(20)])
    (tmp_path / "j.toml").write_text(
        'name = "pf"\nsetup = "passfail"\ndescription = "Right?"\nprovider = "openai"\nmodel = "m"\n', encoding="utf-8"
    )
    db = tmp_path / "j.db"
    code, _, err = run_cli(
        monkeypatch, capsys, "run", "--cases", str(tmp_path / "c.jsonl"), "--judge", str(tmp_path / "j.toml"),
        "--base-url", f"http://127.0.0.1:{port}/v1", "--db", str(db), "--no-progress", "--concurrency", "2",
    )  # fmt: skip
    assert code == 3 and f"127.0.0.1:{port}" in " ".join(err.split())
    import sqlite3

    with sqlite3.connect(db) as con:
        attempts = con.execute("SELECT count(*) FROM calls").fetchone()[0]
    assert attempts <= UNREACHABLE_STOP + 1  # two in flight at once: at most one more than the stop
