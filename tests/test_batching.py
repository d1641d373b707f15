"""Batch mode ([engine] mode = "batch") against the mock server's OpenAI and Anthropic batch APIs:
submit then collect, a kill after submitting, partial failure, expiry, batch prices."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from juge.config import load_eval
from juge.judges.parsers import parse_passfail
from juge.runner import run_eval
from juge.store import Store
from juge.testing.mockbatch import batch_outcome
from juge.testing.mockserver import MockConfig, expected_answer, serve_in_thread

MODEL = "mock-judge-2026-01"
PRICE_IN, PRICE_OUT = 2.0, 8.0


def write_eval(folder: Path, provider: str, base_url: str, n: int, *, poll: float = 0.05, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cases = [{"id": f"c{i:03d}", "question": f"Question {i}?", "output": f"Answer number {i}."} for i in range(n)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    path = folder / "eval.toml"
    path.write_text(
        f'''
name = "batch"
cases = "cases.jsonl"
[provider]
name = "{provider}"
options = {{ base_url = "{base_url}" }}
[[judges]]
name = "correct"
setup = "passfail"
description = "The answer does what was asked."
model = "{MODEL}"
[engine]
mode = "batch"
batch_poll = {poll}
retries = 0
{extra}
[prices]
"{MODEL}" = {{ input = {PRICE_IN}, output = {PRICE_OUT} }}
''',
        encoding="utf-8",
    )
    return path


def base_url(provider: str, server_url: str) -> str:
    """The OpenAI provider takes the /v1 root; the Anthropic SDK adds /v1 itself."""
    return server_url if provider == "openai" else server_url.removesuffix("/v1")


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def judgments(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT item_id, outcome, verdict, reason, cost FROM judgments ORDER BY item_id").fetchall()


def call_keys(db: Path) -> dict[str, str]:
    """item id -> the cache key (the batch custom id) of its judge call."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT payer, cache_key FROM calls").fetchall()
    return {payer.split("\x1f")[0]: key for payer, key in rows}


def expected_verdict(config: MockConfig, db: Path, item: str, provider: str) -> str:
    """The verdict the mock's answer to this item's logged request gives (Anthropic sends system turns apart)."""
    with sqlite3.connect(db) as conn:
        (request,) = conn.execute("SELECT request FROM calls WHERE payer LIKE ?", (item + "\x1f%",)).fetchone()
    messages = json.loads(request)["messages"]
    if provider == "anthropic":
        messages = [m for m in messages if m["role"] != "system"]
    return parse_passfail(expected_answer(config, MODEL, messages)).verdict


@pytest.mark.parametrize("provider", ["openai", pytest.param("anthropic", marks=pytest.mark.needs("anthropic"))])
def test_submit_returns_pending_then_a_later_run_collects(tmp_path, provider):
    mock = MockConfig(batch_delay=0.6)
    with serve_in_thread(mock) as server:
        config = load_eval(write_eval(tmp_path / provider, provider, base_url(provider, server.url), 12))
        db = tmp_path / provider / "juge.db"
        with Store(db) as store:
            first = run_eval(config, store, progress=False, console=Console(quiet=True))
        assert first.pending is not None and len(first.pending) == 1
        assert first.stored_now == 0
        assert server.stats()["batches_created"] == 1
        assert server.stats()["batch_requests"] == 12
        assert server.stats()["requests"] == 0  # nothing went to the online route
        with Store(db) as store:
            assert store.get_run(first.run_id)["status"] == "running"
            assert store.run_batches(first.run_id)[0]["requests"] == 12
        time.sleep(0.7)
        with Store(db) as store:
            second = run_eval(config, store, progress=False, console=Console(quiet=True))
            run = store.get_run(second.run_id)
        assert second.pending is None and second.resumed and second.run_id == first.run_id
        assert second.stored_now == 12 and run["status"] == "done"
        assert server.stats()["batches_created"] == 1  # collected, not sent again
    rows = judgments(db)
    assert len(rows) == 12 and {r[1] for r in rows} == {"ok"}
    for item, _, verdict, _, cost in rows:
        assert json.loads(verdict) == expected_verdict(mock, db, item, provider)
        assert cost is not None
    # half price: the batch row of the price table
    with sqlite3.connect(db) as conn:
        tin, tout, cost = conn.execute("SELECT tokens_in, tokens_out, cost FROM judgments LIMIT 1").fetchone()
    assert cost == pytest.approx((tin * PRICE_IN + tout * PRICE_OUT) / 2 / 1e6)


def test_a_cached_rerun_sends_no_batch(tmp_path):
    with serve_in_thread(MockConfig()) as server:
        config = load_eval(write_eval(tmp_path, "openai", server.url, 5))
        with Store(tmp_path / "juge.db") as store:
            first = run_eval(config, store, progress=False, console=Console(quiet=True), wait=True)
            again = run_eval(config, store, progress=False, console=Console(quiet=True), resume=False)
        assert first.pending is None and again.pending is None and again.run_id != first.run_id
        assert again.engine_stats["cache_hits"] == 5
        assert server.stats()["batches_created"] == 1


@pytest.mark.parametrize("provider", ["openai", pytest.param("anthropic", marks=pytest.mark.needs("anthropic"))])
def test_partial_failure_and_expiry_become_error_judgments(tmp_path, provider):
    mock = MockConfig(batch_errors=0.25, batch_expire=0.2, seed=3)
    with serve_in_thread(mock) as server:
        config = load_eval(write_eval(tmp_path / provider, provider, base_url(provider, server.url), 40))
        db = tmp_path / provider / "juge.db"
        with Store(db) as store:
            result = run_eval(config, store, progress=False, console=Console(quiet=True), wait=True)
            run_batches = store.run_batches(result.run_id)
        assert result.pending is None
        assert server.stats()["batches_created"] == 1
    assert run_batches[0]["status"] == ("expired" if provider == "openai" else "ended")
    keys = call_keys(db)
    fates = {item: batch_outcome(mock, key) for item, key in keys.items()}
    assert set(fates.values()) == {"ok", "error", "expired"}  # the seed gives all three
    for item, outcome, verdict, reason, _ in judgments(db):
        if fates[item] == "ok":
            assert outcome == "ok" and verdict is not None
        else:
            assert outcome == "error" and verdict is None
            assert ("expired" in reason) == (fates[item] == "expired")
    summary = result.summary["judges"]["correct"]["outcomes"]
    assert summary["error"] == sum(f != "ok" for f in fates.values())


def test_batch_mode_refuses_a_provider_without_a_batch_api(tmp_path):
    from juge.errors import InputError

    path = write_eval(tmp_path, "openai", "http://127.0.0.1:9/v1", 2)
    path.write_text(
        path.read_text()
        .replace('name = "openai"', 'name = "scripted"')
        .replace('options = { base_url = "http://127.0.0.1:9/v1" }', "")
    )
    with Store(tmp_path / "juge.db") as store, pytest.raises(InputError, match="engine.mode"):
        run_eval(load_eval(path), store, progress=False, console=Console(quiet=True))
    with Store(tmp_path / "juge.db") as store:
        assert store.list_runs() == []


def juge(*args: str, cwd: Path) -> subprocess.Popen:
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    return subprocess.Popen(
        [sys.executable, "-m", "juge.cli", "run", *args, "--no-progress"],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_killed_after_submitting_a_later_run_collects_without_sending_again(tmp_path):
    # the kill must come before the batch ends: long enough that a loaded machine, slow to notice the
    # batch row and send the signal, still kills a process that is waiting
    mock = MockConfig(batch_delay=5)
    with serve_in_thread(mock) as server:
        path = write_eval(tmp_path, "openai", server.url, 30)
        db = tmp_path / "juge.db"
        proc = juge(str(path), "--db", str(db), "--wait", cwd=tmp_path)
        deadline = time.monotonic() + 60
        while server.stats()["batches_created"] == 0 or not batch_rows(db):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        assert judgments(db) == []
        done = juge(str(path), "--db", str(db), "--wait", "--json", str(tmp_path / "out.json"), cwd=tmp_path)
        out, err = done.communicate(timeout=60)
        assert done.returncode == 0, err
        assert server.stats()["batches_created"] == 1 and server.stats()["requests"] == 0
    rows = judgments(db)
    assert len(rows) == 30 and {r[1] for r in rows} == {"ok"}
    assert json.loads((tmp_path / "out.json").read_text())["judges"]["correct"]["n"] == 30


def test_the_command_exits_75_while_batches_are_out(tmp_path):
    with serve_in_thread(MockConfig(batch_delay=30)) as server:
        path = write_eval(tmp_path, "openai", server.url, 3)
        proc = juge(str(path), "--db", str(tmp_path / "juge.db"), "--json", str(tmp_path / "out.json"), cwd=tmp_path)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 75, err
    pending = json.loads((tmp_path / "out.json").read_text())
    assert pending["status"] == "batches_pending" and len(pending["batches"]) == 1
    assert pending["batches"][0]["counts"]["total"] == 3


def batch_rows(db: Path) -> list[tuple]:
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("SELECT id FROM batches").fetchall()
    except sqlite3.OperationalError:
        return []


def test_each_round_of_calls_is_a_batch_system_outputs_then_solve_first_then_verdicts(tmp_path):
    """The system's outputs, a solve-first judge's solutions and its verdicts depend on each other:
    three batches, each sent once the previous one's answers are stored."""
    with serve_in_thread(MockConfig(batch_delay=0.05)) as server:
        path = write_eval(tmp_path, "openai", server.url, 6)
        text = path.read_text().replace('model = "mock-judge', 'solve_first = true\nmodel = "mock-judge', 1)
        text += '[system]\nmodel = "mock-system-1"\ntemplate = "system.j2"\n'
        path.write_text(text)
        (tmp_path / "system.j2").write_text("Answer: {{ input }}")
        with Store(tmp_path / "juge.db") as store:
            result = run_eval(load_eval(path), store, progress=False, console=Console(quiet=True), wait=True)
            batches = store.run_batches(result.run_id)
            assert len(store.outputs(result.run_id)) == 6
        assert result.pending is None and result.stored_now == 6
        assert [b["requests"] for b in batches] == [6, 6, 6]
        assert server.stats()["batches_created"] == 3 and server.stats()["requests"] == 0
    assert {r[1] for r in judgments(tmp_path / "juge.db")} == {"ok"}
