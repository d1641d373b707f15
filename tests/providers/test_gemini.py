"""Google Gemini through its OpenAI-compatible endpoint (`provider = "openai"`, base_url
``https://generativelanguage.googleapis.com/v1beta/openai``, key in GEMINI_API_KEY): the judge file the
docs show sends the key as a bearer token to ``{base_url}/chat/completions``, and the answers are judged."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import httpx
import pytest

from cli_helpers import run_cli
from juge.judges.parsers import parse_passfail
from juge.testing.mockserver import MockConfig, expected_answer, serve_in_thread

MODEL = "gemini-2.5-flash"


def write_eval(folder: Path, base_url: str, n: int) -> Path:
    cases = [{"id": f"c{i:02d}", "question": f"Question {i}?", "output": f"Answer number {i}."} for i in range(n)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    # The judge file of docs/integrations.md, with the mock server standing in for Google's host.
    (folder / "judge.toml").write_text(
        f'''name = "correct"
setup = "passfail"
description = "The answer does what was asked."
model = "{MODEL}"
provider = "openai"
[provider_options]
base_url = "{base_url}"
api_key_env = "GEMINI_API_KEY"
''',
        encoding="utf-8",
    )
    path = folder / "eval.toml"
    path.write_text(
        'name = "gemini"\ncases = "cases.jsonl"\n[[judges]]\nfile = "judge.toml"\n[engine]\nretries = 0\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.usefixtures("each_http_client")
def test_gemini_openai_compatible_endpoint_is_judged(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", "gem-key-1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    mock = MockConfig()
    with serve_in_thread(mock) as server:
        path = write_eval(tmp_path, server.url.removesuffix("/v1") + "/v1beta/openai", 5)
        out = tmp_path / "summary.json"
        db = tmp_path / "j.db"
        code, _, err = run_cli(
            monkeypatch, capsys, "run", str(path), "--db", str(db), "--no-progress", "--json", str(out)
        )
        stats = server.stats()
    assert code == 0, err
    assert stats["gemini"] == {"requests": 5, "keys": {"gem-key-1": 5}}  # Gemini's path, the key as a bearer
    assert json.loads(out.read_text())["judges"]["correct"]["outcomes"]["ok"] == 5
    with sqlite3.connect(db) as conn:
        verdicts = dict(conn.execute("SELECT item_id, verdict FROM judgments"))
        calls = dict(conn.execute("SELECT substr(payer, 1, instr(payer, char(31)) - 1), request FROM calls"))
    assert len(verdicts) == 5
    for item, verdict in verdicts.items():
        messages = json.loads(calls[item])["messages"]
        assert json.loads(verdict) == parse_passfail(expected_answer(mock, MODEL, messages)).verdict


def test_the_mock_refuses_gemini_without_a_key(tmp_path):
    with serve_in_thread(MockConfig()) as server:
        url = server.url.removesuffix("/v1") + "/v1beta/openai/chat/completions"
        answer = httpx.post(url, json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}]})
    assert answer.status_code == 401
