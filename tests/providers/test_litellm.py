"""provider = "litellm": a run through LiteLLM against the mock server (as an OpenAI-compatible API, no network)
sends each request and judges the answers; LiteLLM's errors become retryable or not as juge's own providers'."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from cli_helpers import run_cli
from juge.judges.parsers import parse_passfail
from juge.providers import make_provider
from juge.providers.base import ProviderError
from juge.testing.mockserver import MockConfig, expected_answer, serve_in_thread

pytestmark = [pytest.mark.needs("litellm"), pytest.mark.slow]  # importing litellm alone takes 4-10 s
MODEL = "openai/mock-judge"  # LiteLLM's name: the OpenAI-compatible route, to the mock server's api_base


def write_eval(folder: Path, api_base: str, n: int) -> Path:
    cases = [{"id": f"c{i:02d}", "question": f"Question {i}?", "output": f"Answer number {i}."} for i in range(n)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (folder / "judge.toml").write_text(
        f'''name = "correct"
setup = "passfail"
description = "The answer does what was asked."
model = "{MODEL}"
provider = "litellm"
[provider_options]
api_base = "{api_base}"
api_key_env = "MOCK_KEY"
''',
        encoding="utf-8",
    )
    path = folder / "eval.toml"
    path.write_text(
        'name = "litellm"\ncases = "cases.jsonl"\n[[judges]]\nfile = "judge.toml"\n[engine]\nretries = 2\n',
        encoding="utf-8",
    )
    return path


def test_a_run_through_litellm_is_judged(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MOCK_KEY", "k-1")
    mock = MockConfig(faults={"server_error": 0.3}, seed=3)
    db, out = tmp_path / "j.db", tmp_path / "s.json"
    with serve_in_thread(mock) as server:
        path = write_eval(tmp_path, server.url, 8)
        code, _, err = run_cli(
            monkeypatch, capsys, "run", str(path), "--db", str(db), "--no-progress", "--json", str(out)
        )
        stats = server.stats()
    assert code == 0, err
    assert stats["faults"]["server_error"] > 0  # a 500 went through LiteLLM and juge retried it
    assert json.loads(out.read_text())["judges"]["correct"]["outcomes"]["ok"] == 8
    with sqlite3.connect(db) as conn:
        verdicts = dict(conn.execute("SELECT item_id, verdict FROM judgments"))
        calls = dict(conn.execute("SELECT substr(payer, 1, instr(payer, char(31)) - 1), request FROM calls"))
    for item, verdict in verdicts.items():
        sent = json.loads(calls[item])
        # LiteLLM strips its route prefix: the server was asked for the model's own name
        expected = expected_answer(mock, "mock-judge", sent["messages"])
        assert json.loads(verdict) == parse_passfail(expected).verdict


def test_errors_are_classified_and_a_missing_key_is_named(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(ProviderError, match="NO_SUCH_KEY"):
        make_provider("litellm", api_key_env="NO_SUCH_KEY")
    import asyncio

    from juge.providers.base import Request

    with serve_in_thread(MockConfig(faults={"rate_limit": 1.0})) as server:
        provider = make_provider("litellm", api_base=server.url, api_key="k")
        request = Request(messages=({"role": "user", "content": "hi"},), model=MODEL)
        with pytest.raises(ProviderError) as caught:
            asyncio.run(provider.complete(request))
    assert caught.value.status == 429 and caught.value.retryable
