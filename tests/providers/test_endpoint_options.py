"""--base-url, --model and --api-key-env on `run` and `probe`; OPENAI_BASE_URL and ANTHROPIC_BASE_URL
honoured; a server of one's own needs no key."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from cli_helpers import run_cli
from juge.providers.openai_compat import OpenAICompatProvider
from juge.testing.mockserver import MockConfig, serve_in_thread

REPO = Path(__file__).resolve().parents[2]
BAKERY = REPO / "examples" / "bakery"


@pytest.fixture
def no_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "MY_KEY"):
        monkeypatch.delenv(name, raising=False)


def _models_sent(db: Path) -> set[str]:
    rows = sqlite3.connect(db).execute("SELECT request FROM calls").fetchall()
    return {json.loads(r)["model"] for (r,) in rows}


def test_run_with_base_url_and_model_needs_no_key(tmp_path, monkeypatch, capsys, no_keys):
    db = tmp_path / "juge.db"
    out = tmp_path / "s.json"
    with serve_in_thread(MockConfig()) as server:
        code, _, err = run_cli(
            monkeypatch, capsys, "run", "--cases", str(BAKERY / "cases.jsonl"),
            "--judge", str(BAKERY / "judges" / "faithful.toml"),
            "--base-url", server.url, "--model", "mock-judge-7", "--no-progress", "--db", str(db), "--json", str(out),
        )  # fmt: skip
        answered = server.stats()["answered"]
    assert code == 0, err
    summary = json.loads(out.read_text())
    assert answered == summary["calls"] == summary["n_cases"] > 0
    assert summary["judges"]["faithful"]["outcomes"]["ok"] == summary["n_cases"]
    assert _models_sent(db) == {"mock-judge-7"}


def test_openai_base_url_from_the_environment(tmp_path, monkeypatch, capsys, no_keys):
    db = tmp_path / "juge.db"
    with serve_in_thread(MockConfig()) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        code, _, err = run_cli(
            monkeypatch, capsys, "run", "--cases", str(BAKERY / "cases.jsonl"),
            "--judge", str(BAKERY / "judges" / "faithful.toml"), "--provider", "openai", "--no-progress",
            "--db", str(db),
        )  # fmt: skip
        assert code == 0, err
        assert server.stats()["answered"] > 0
    provider = OpenAICompatProvider()
    assert provider.url == server.url.rstrip("/") + "/chat/completions"


def test_openai_without_key_or_base_url_says_so(no_keys):
    from juge.providers import ProviderError

    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        OpenAICompatProvider()


def test_api_key_env_names_the_variable(monkeypatch, no_keys):
    monkeypatch.setenv("MY_KEY", "sk-test")
    provider = OpenAICompatProvider(api_key_env="MY_KEY")
    assert provider.headers["authorization"] == "Bearer sk-test"


def test_base_url_refused_for_offline_providers(tmp_path, monkeypatch, capsys, no_keys):
    code, _, err = run_cli(
        monkeypatch, capsys, "run", str(BAKERY / "eval.toml"), "--provider", "scripted",
        "--base-url", "http://127.0.0.1:9/v1", "--db", str(tmp_path / "j.db"),
    )  # fmt: skip
    assert code == 2 and "--base-url" in err


def test_anthropic_base_url_from_the_environment(monkeypatch, no_keys):
    pytest.importorskip("anthropic")
    from juge.providers.anthropic import AnthropicProvider

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
    provider = AnthropicProvider()
    assert str(provider.client.base_url).startswith("http://127.0.0.1:9")
    assert provider.name == "anthropic@http://127.0.0.1:9/"


def test_probe_with_base_url(tmp_path, monkeypatch, capsys, no_keys):
    pair = tmp_path / "pair.toml"
    pair.write_text('name = "pair"\nsetup = "pairwise"\nmodel = "x"\ndescription = "Which answer is better?"\n')
    answers = ("Better.\n[[A]]", "Better.\n[[B]]")
    with serve_in_thread(MockConfig(answers=answers)) as server:
        code, _, err = run_cli(
            monkeypatch, capsys, "probe", "injection", "--judge", str(pair), "--base-url", server.url,
            "--limit", "2", "--kind", "override", "--no-progress", "--resamples", "100", "--db", str(tmp_path / "j.db"),
            "--json", str(tmp_path / "p.json"),
        )  # fmt: skip
        answered = server.stats()["answered"]
    assert code == 0, err
    assert answered == 2 * 2 * 2  # 2 items, baseline + 1 kind, both orders
