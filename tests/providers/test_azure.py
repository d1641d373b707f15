"""provider = "azure": a run against the mock server in Azure's shape sends the api-key header (or an Entra
token), the deployment path and api-version, and its answers are judged; batch mode goes through Azure's
batch API; the mock refuses what Azure refuses."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import httpx
import pytest

from cli_helpers import run_cli
from juge.judges.parsers import parse_passfail
from juge.providers import make_provider
from juge.providers.base import Request
from juge.testing.mockserver import MockConfig, expected_answer, serve_in_thread

MODEL = "gpt-4o-mini"


@pytest.fixture(autouse=True)
def _no_azure_env(monkeypatch):
    for name in ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)


def write_eval(folder: Path, endpoint: str, n: int, *, options: str = "", engine: str = "") -> Path:
    cases = [{"id": f"c{i:02d}", "question": f"Question {i}?", "output": f"Answer number {i}."} for i in range(n)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (folder / "judge.toml").write_text(
        f'''name = "correct"
setup = "passfail"
description = "The answer does what was asked."
model = "{MODEL}"
provider = "azure"
[provider_options]
endpoint = "{endpoint}"
deployment = "judge-eu"
api-version = "2024-10-21"
{options}
''',
        encoding="utf-8",
    )
    path = folder / "eval.toml"
    path.write_text(
        f'name = "azure"\ncases = "cases.jsonl"\n[[judges]]\nfile = "judge.toml"\n[engine]\nretries = 0\n{engine}\n',
        encoding="utf-8",
    )
    return path


def stored(db: Path) -> list[tuple[str, str, str, str]]:
    """(item, outcome, verdict, the request's messages) of each judgment."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT item_id, outcome, verdict FROM judgments ORDER BY item_id").fetchall()
        calls = dict(conn.execute("SELECT substr(payer, 1, instr(payer, char(31)) - 1), request FROM calls"))
    return [(item, outcome, verdict, json.loads(calls[item])["messages"]) for item, outcome, verdict in rows]


def check_judged(db: Path, mock: MockConfig, n: int) -> None:
    rows = stored(db)
    assert len(rows) == n and {r[1] for r in rows} == {"ok"}
    for _, _, verdict, messages in rows:
        assert json.loads(verdict) == parse_passfail(expected_answer(mock, MODEL, messages)).verdict


@pytest.mark.usefixtures("each_http_client")
@pytest.mark.parametrize(
    ("credential", "auth"), [("AZURE_OPENAI_API_KEY", "api-key"), ("AZURE_OPENAI_AD_TOKEN", "bearer")]
)
def test_a_run_in_azure_mode_sends_azure_shape_and_is_judged(tmp_path, monkeypatch, capsys, credential, auth):
    monkeypatch.setenv(credential, "secret-123")
    mock = MockConfig()
    with serve_in_thread(mock) as server:
        path = write_eval(tmp_path, server.url.removesuffix("/v1"), 6)
        out = tmp_path / "summary.json"
        code, _, err = run_cli(
            monkeypatch, capsys, "run", str(path), "--db", str(tmp_path / "j.db"), "--no-progress", "--json", str(out)
        )
        stats = server.stats()
    assert code == 0, err
    assert stats["azure"] == {"deployments": {"judge-eu": 6}, "api_versions": {"2024-10-21": 6}, "auth": {auth: 6}}
    assert stats["answered"] == 6
    assert json.loads(out.read_text())["judges"]["correct"]["outcomes"]["ok"] == 6
    check_judged(tmp_path / "j.db", mock, 6)


def test_batch_mode_goes_through_azures_batch_api(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "secret-123")
    mock = MockConfig()
    with serve_in_thread(mock) as server:
        path = write_eval(
            tmp_path,
            server.url.removesuffix("/v1"),
            5,
            options='batch_deployment = "judge-batch"',
            engine='mode = "batch"\nbatch_poll = 0.05',
        )
        code, _, err = run_cli(
            monkeypatch, capsys, "run", str(path), "--db", str(tmp_path / "j.db"), "--no-progress", "--wait"
        )
        stats = server.stats()
    assert code == 0, err
    assert stats["batches_created"] == 1 and stats["batch_requests"] == 5
    assert stats["requests"] == 0  # nothing went to the online route
    # upload, create, one or more status checks and the output file: each with api-version and the key
    assert stats["azure"]["auth"] == {"api-key": stats["azure"]["api_versions"]["2024-10-21"]} != {}
    assert stats["azure"]["deployments"] == {}
    rows = stored(tmp_path / "j.db")
    assert len(rows) == 5 and {r[1] for r in rows} == {"ok"}
    for _, _, verdict, messages in rows:  # the batch lines named the batch deployment as their model
        assert json.loads(verdict) == parse_passfail(expected_answer(mock, "judge-batch", messages)).verdict


def test_no_credential_is_a_configuration_error(tmp_path, monkeypatch, capsys):
    path = write_eval(tmp_path, "https://example.openai.azure.com", 2)
    code, _, err = run_cli(monkeypatch, capsys, "run", str(path), "--db", str(tmp_path / "j.db"), "--no-progress")
    assert code == 2
    assert "AZURE_OPENAI_API_KEY" in err and "judge.toml" in err
    assert not (tmp_path / "j.db").exists() or not stored(tmp_path / "j.db")


def test_endpoint_from_resource_or_environment(monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    provider = make_provider("azure", resource="contoso-eu", deployment="gpt-4o")
    request = Request(messages=({"role": "user", "content": "hi"},), model=MODEL)
    assert provider.url_for(request) == (
        "https://contoso-eu.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21"
    )
    assert provider.headers["api-key"] == "k" and "authorization" not in provider.headers
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://contoso-us.openai.azure.com/")
    monkeypatch.setenv("OPENAI_API_VERSION", "2025-01-01-preview")
    # no deployment: the judge's model names it
    assert make_provider("azure").url_for(request) == (
        "https://contoso-us.openai.azure.com/openai/deployments/gpt-4o-mini/chat/completions"
        "?api-version=2025-01-01-preview"
    )
    with pytest.raises(ValueError, match="not both"):
        make_provider("azure", resource="a", endpoint="https://b.openai.azure.com")
    with pytest.raises(ValueError, match="twice"):
        make_provider("azure", resource="a", api_version="x", **{"api-version": "y"})


def test_the_mock_refuses_what_azure_refuses():
    with serve_in_thread(MockConfig()) as server:
        root = server.url.removesuffix("/v1")
        body = {"messages": [{"role": "user", "content": "hi"}]}
        path = root + "/openai/deployments/d1/chat/completions"
        no_version = httpx.post(path, json=body, headers={"api-key": "k"}, trust_env=False)
        no_key = httpx.post(path + "?api-version=2024-10-21", json=body, trust_env=False)
        ok = httpx.post(path + "?api-version=2024-10-21", json=body, headers={"api-key": "k"}, trust_env=False)
        stats = server.stats()
    assert (no_version.status_code, no_key.status_code, ok.status_code) == (404, 401, 200)
    assert ok.json()["model"] == "d1"  # no model in the body: the deployment answers
    assert stats["azure"]["deployments"] == {"d1": 1}
