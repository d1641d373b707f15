"""The first hour, round 3 (issue 30), replayed as the new user walked it: their own 40-case PASS/FAIL task in a
CSV with their own column names, a judge on the mock model server, then the mistakes they made. Each step
checks the behaviour the walk asked for (the detailed cases are in the tests each fix came with)."""

from __future__ import annotations

import csv
import json
import socket
import sqlite3
from pathlib import Path

import pytest

import juge
from cli_helpers import run_cli
from juge.engine.calls import UNREACHABLE_STOP
from juge.testing.mockserver import MockConfig, serve_in_thread

JUDGE = """name = "faithful"
setup = "passfail"
description = "Every claim in the reply is supported by the ticket's facts in <context>."
model = "mock-judge"
provider = "openai"
"""


@pytest.fixture
def task(tmp_path: Path) -> dict[str, Path]:
    rows = [
        {
            "ticket": f"T-{i:03d}",
            "customer_question": f"Where is order {i}?",
            "bot_reply": "  " if i == 7 else f"Order {i} ships on Monday.",  # a blank reply (an empty cell is missing)
            "kb_facts": f"Order {i} ships on Monday." if i % 10 else "",
        }
        for i in range(40)
    ]
    cases = tmp_path / "support.csv"
    with cases.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    judge = tmp_path / "faithful.toml"
    judge.write_text(JUDGE, encoding="utf-8")
    return {"cases": cases, "judge": judge, "db": tmp_path / "juge.db", "dir": tmp_path}


def _run(monkeypatch, capsys, task, *extra: str, mapping: str) -> tuple[int, str, str]:
    return run_cli(
        monkeypatch, capsys, "run", "--cases", str(task["cases"]), "--map", mapping, "--judge", str(task["judge"]),
        "--db", str(task["db"]), "--no-progress", *extra,
    )  # fmt: skip


def test_the_walk_with_their_own_csv_and_judge(monkeypatch, capsys, task) -> None:
    partial = "id=ticket,question=customer_question,output=bot_reply"
    full = partial + ",context=kb_facts"
    with serve_in_thread(MockConfig()) as server:
        url = ("--base-url", server.url)
        # Item 2: a forgotten mapping stops before any call, naming the field; nothing is stored.
        code, _, err = _run(monkeypatch, capsys, task, *url, mapping=partial)
        assert code == 2 and "field 'context'" in err and "--map context=" in " ".join(err.split())
        assert server.stats()["requests"] == 0
        # Item 11: a quick look at the first cases first.
        out = task["dir"] / "look.json"
        code, _, err = _run(monkeypatch, capsys, task, *url, "--limit", "5", "--json", str(out), mapping=full)
        assert code == 0, err
        assert json.loads(out.read_text())["n_cases"] == 5
        # The whole task: gaps and blank replies are counted in the warnings, not silent.
        run = juge.run(
            cases=task["cases"], judges=[task["judge"]], db=task["db"], base_url=server.url,
            mapping=dict(p.split("=") for p in full.split(",")),
        )  # fmt: skip
        assert run.summary is not None and run.summary.n_cases == 40
        assert any("4 of 40" in w and "context" in w for w in run.warnings)
        assert any(w.startswith("1 of 40") and "empty answer" in w for w in run.warnings)
        # Item 7: the result reads well in a notebook and its fields agree.
        assert len(repr(run)) < 400 and run._repr_html_().startswith("<p><b>juge Run</b>")
        again = juge.run(
            cases=task["cases"], judges=[task["judge"]], db=task["db"], base_url=server.url,
            mapping=dict(p.split("=") for p in full.split(",")),
        )  # fmt: skip
        assert again.reused and again.stored_now == 0
        # Item 11: export carries the context the judge read; show says when nothing matches.
        exported = task["dir"] / "out.jsonl"
        assert run_cli(monkeypatch, capsys, "export", run.run_id, "-o", str(exported), "--db", str(task["db"]))[0] == 0
        rows = [json.loads(line) for line in exported.read_text().splitlines()]
        assert {r["context"] for r in rows if r["item_id"] == "T-001"} == {"Order 1 ships on Monday."}
        code, shown, _ = run_cli(
            monkeypatch, capsys, "show", run.run_id, "--db", str(task["db"]), "--outcome", "refused"
        )
        assert code == 0 and "no case matches" in shown
    # Item 11: a misspelt key in a nested table gets a suggestion.
    bad = task["dir"] / "eval.toml"
    bad.write_text(f'cases = "{task["cases"].name}"\n[engine]\nconcurency = 4\n', encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, "run", str(bad), "--db", str(task["db"]))
    assert code == 2 and "concurrency" in err


def test_a_wrong_base_url_fails_in_seconds_naming_it(monkeypatch, capsys, task) -> None:
    # Item 3: 82 s of silent retries before; now the run stops after a few failed connections.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, _, err = _run(
        monkeypatch, capsys, task, "--base-url", f"http://127.0.0.1:{port}/v1",
        mapping="id=ticket,question=customer_question,output=bot_reply,context=kb_facts",
    )  # fmt: skip
    assert code == 3 and f"127.0.0.1:{port}" in " ".join(err.split())
    with sqlite3.connect(task["db"]) as con:
        assert con.execute("SELECT count(*) FROM calls").fetchone()[0] <= UNREACHABLE_STOP + 8  # one per worker at most


@pytest.mark.slow
@pytest.mark.needs("local_model")
def test_the_local_judge_without_constrained_is_said_at_the_tenth_answer(tmp_path: Path) -> None:
    # Item 1: the base model without `constrained = true` answered unparsed for ten silent minutes. With a short
    # max_tokens each call is quick; the run says so at the tenth answer, with one raw answer and the fix.
    cases = tmp_path / "c.jsonl"
    cases.write_text(
        "".join(
            json.dumps({"id": f"c{i:02d}", "question": f"Is {i} even?", "output": "yes"}) + "\n" for i in range(12)
        ),
        encoding="utf-8",
    )
    judge = tmp_path / "local.toml"
    judge.write_text(
        'name = "local"\nsetup = "passfail"\ndescription = "The answer is right."\nprovider = "llamacpp"\n'
        "max_tokens = 8\n",
        encoding="utf-8",
    )
    notes: list[str] = []

    class Listener:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def advance(self, *, error: bool = False, unparsed: bool = False) -> None:
            pass

        def note(self, message: str) -> None:
            notes.append(message)

    run = juge.run(
        cases=cases, judges=[judge], db=tmp_path / "j.db", concurrency=1, progress=lambda d, t, c: Listener()
    )
    assert run.summary is not None and run.summary.judges["local"].outcomes["unparsed"] >= 10
    assert len(notes) == 1 and "of its first 10 answers gave no verdict" in notes[0] and "max_tokens" in notes[0]
