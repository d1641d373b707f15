"""`juge run` when nothing could be judged, when a judge's answers mostly do not parse, when no
provider is configured, and when a server refuses a request field."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import httpx
import pytest

from cli_helpers import run_cli, write_jsonl
from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers.openai_compat import OpenAICompatProvider


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_eval(tmp_path: Path, provider: str | None, judge_extra: str = "", engine: str = "") -> Path:
    write_jsonl(tmp_path / "cases.jsonl", [{"id": f"c{k}", "question": "q", "output": f"answer {k}"} for k in range(6)])
    (tmp_path / "eval.toml").write_text(
        'cases = "cases.jsonl"\n'
        + (provider or "")
        + '\n[[judges]]\nname = "pf"\nsetup = "passfail"\ndescription = "Right?"\nmodel = "m1"\n'
        + judge_extra
        + "\n[engine]\nretries = 0\nbackoff = 0\n"
        + engine,
        encoding="utf-8",
    )
    return tmp_path / "eval.toml"


def test_every_call_failing_exits_3_naming_the_first_error(tmp_path, monkeypatch, capsys) -> None:
    port = free_port()  # nothing listens there
    eval_file = write_eval(
        tmp_path, f'[provider]\nname = "openai"\noptions = {{ base_url = "http://127.0.0.1:{port}/v1" }}\n'
    )
    code, out, err = run_cli(
        monkeypatch, capsys, "run", str(eval_file), "--db", str(tmp_path / "j.db"), "--no-progress"
    )
    assert code == 3, err
    # never reached: the run stops after a few failed connections, naming the address (issue 30)
    assert "connection failed" in err and f"127.0.0.1:{port}" in " ".join(err.split())


def test_more_than_a_fifth_unparsed_warns_with_one_raw_answer(tmp_path, monkeypatch, capsys) -> None:
    eval_file = write_eval(
        tmp_path,
        '[provider]\nname = "scripted"\noptions = { default = "The answer looks RIGHT-ISH to me." }\n',
    )
    code, out, err = run_cli(
        monkeypatch, capsys, "run", str(eval_file), "--db", str(tmp_path / "j.db"), "--no-progress"
    )
    assert code == 0, err
    assert "warning" in err and "6 of 6 answers unparsed" in err and "RIGHT-ISH" in err


def test_a_fifth_or_less_unparsed_does_not_warn(tmp_path, monkeypatch, capsys) -> None:
    eval_file = write_eval(
        tmp_path,
        '[provider]\nname = "scripted"\noptions = { default = "PASS\\nFine.", responses = '
        '[{ match = "answer 0", text = "garbled RIGHT-ISH" }] }\n',
    )
    code, out, err = run_cli(
        monkeypatch, capsys, "run", str(eval_file), "--db", str(tmp_path / "j.db"), "--no-progress"
    )
    assert code == 0, err
    assert "RIGHT-ISH" not in err  # 1 of 6 is 17 %


def test_no_provider_configured_is_exit_2_not_the_scripted_provider(tmp_path, monkeypatch, capsys) -> None:
    eval_file = write_eval(tmp_path, None)
    code, out, err = run_cli(
        monkeypatch, capsys, "run", str(eval_file), "--db", str(tmp_path / "j.db"), "--no-progress"
    )
    assert code == 2
    assert "no provider configured" in err
    assert not (tmp_path / "j.db").exists() or "run " not in out


@pytest.mark.parametrize("status", [400, 422, 500])
def test_a_refused_request_field_is_not_retried_and_names_the_judge_option(status, store) -> None:
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(status, json={"error": {"message": "Unsupported parameter: 'response_format'"}})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    provider = OpenAICompatProvider(base_url="http://test/v1", api_key="k", http_client=client)
    judge = judge_from_dict(
        {"name": "pf", "setup": "passfail", "description": "Right?", "model": "m1", "structured": True}
    )
    cases = [Case(id="a", question="q", output="x")]
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
    engine = Engine(store, EngineOptions(progress=False, retries=4, backoff=0))
    asyncio.run(engine.run_tasks(run_id, build_tasks(cases, [judge]), {"pf": provider}))
    (judgment,) = store.judgments(run_id)
    assert judgment.outcome == "error"
    assert len(seen) == 1 and "response_format" in seen[0]
    assert "structured = false" in judgment.reason


def test_an_overloaded_server_is_still_retried(store) -> None:
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(1)
        return httpx.Response(500, json={"error": {"message": "The model is overloaded"}})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    provider = OpenAICompatProvider(base_url="http://test/v1", api_key="k", http_client=client)
    judge = judge_from_dict({"name": "pf", "setup": "passfail", "description": "Right?", "model": "m1"})
    cases = [Case(id="a", question="q", output="x")]
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
    engine = Engine(store, EngineOptions(progress=False, retries=2, backoff=0))
    asyncio.run(engine.run_tasks(run_id, build_tasks(cases, [judge]), {"pf": provider}))
    assert len(seen) == 3


def test_bad_cases_create_no_store(monkeypatch, capsys, tmp_path: Path) -> None:
    """Exit 2 writes nothing: the store is opened only once every case has been read and checked."""
    path = write_eval(tmp_path, '[provider]\nname = "scripted"')
    (tmp_path / "judge.toml").write_text('name = "pf"\nsetup = "passfail"\ndescription = "Right?"\n', encoding="utf-8")
    (tmp_path / "missing_col.csv").write_text("id,question,output_1\na,q,x\n", encoding="utf-8")
    code, _, err = run_cli(
        monkeypatch, capsys, "run", "--cases", str(tmp_path / "missing_col.csv"), "--judge",
        str(tmp_path / "judge.toml"), "--provider", "scripted", "--db", str(tmp_path / "t.db"),
    )  # fmt: skip
    assert code == 2 and "missing_col.csv" in err
    with (tmp_path / "cases.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"id": "late", "question": "q", "output_2": "x"}\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(monkeypatch, capsys, "run", str(path))  # the default store, ./.juge/juge.db
    assert code == 2 and "cases.jsonl:7" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases.jsonl", "eval.toml", "judge.toml", "missing_col.csv"]
