import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from juge.cli import app
from juge.config import load_eval
from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.errors import Fault
from juge.judges import judge_from_dict
from juge.providers import Request, make_provider
from juge.runner import run_eval
from juge.store import Store

REPO = Path(__file__).resolve().parents[2]
BAKERY = REPO / "examples" / "bakery" / "eval.toml"
runner = CliRunner()


def passfail_judge(**extra):
    return judge_from_dict({"name": "pf", "setup": "passfail", "description": "Is it polite?", "model": "m1", **extra})


def pair_judge():
    return judge_from_dict(
        {"name": "pair", "setup": "pairwise", "description": "Which answer is better?", "model": "m1"}
    )


def test_bakery_run_summary_and_cache(tmp_path):
    db = tmp_path / "j.db"
    with Store(db) as store:
        first = run_eval(load_eval(BAKERY), store, progress=False)
        s = first.summary
        assert s["n_cases"] == 8
        assert s["checks"]["no_competitors"] == {"passed": 7, "n": 8, "rate": 7 / 8}
        faithful = s["judges"]["faithful"]
        assert faithful["outcomes"] == {"ok": 7, "refused": 0, "unparsed": 1, "error": 0}
        assert faithful["verdicts"] == {"FAIL": 2, "PASS": 5}
        # price-2 fails a check and the judge, gf-1 the judge, gf-2 is unparsed (fails closed), cake-1 a check
        assert s["cases_passed"] == 4
        assert first.engine_stats["calls"] == 16
        # A fresh run of the same eval: every answer from the cache, zero calls.
        second = run_eval(load_eval(BAKERY), store, progress=False, resume=False)
        assert second.engine_stats.get("calls", 0) == 0
        assert second.engine_stats["cache_hits"] == 16
        assert second.run_id != first.run_id


def test_retries_on_429_and_500_are_bounded_and_logged(store):
    judge = passfail_judge()
    for status, times, retries, expect in [(429, 2, 4, "ok"), (500, 1, 4, "ok"), (503, 5, 2, "error")]:
        case = Case(id="c1", question="q", output=f"thanks! {status}")  # a new prompt: no cache hit
        provider = make_provider("scripted", default="PASS\nPolite.", fail={"status": status, "times": times})
        engine = Engine(store, EngineOptions(retries=retries, backoff=0.001, progress=False, seed=1))
        run_id = store.create_run(dataset_hash="d", juge_version="t", cases=[case])
        stored = asyncio.run(engine.run_tasks(run_id, build_tasks([case], [judge]), {"pf": provider}))
        assert stored == 1
        [j] = store.judgments(run_id)
        assert j.outcome == expect
        assert j.attempts == (times + 1 if expect == "ok" else retries + 1)
        assert store.count_calls(run_id) == (times + 1 if expect == "ok" else retries + 1)
        if expect == "error":
            assert j.verdict is None and f"HTTP {status}" in j.reason
        else:
            assert j.verdict == "PASS"


def test_non_retryable_error_is_not_retried(store):
    provider = make_provider("scripted", default="x", fail={"status": 400, "times": 9})
    engine = Engine(store, EngineOptions(retries=5, backoff=0.001, progress=False))
    case = Case(id="c1", question="q", output="o")
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=[case])
    asyncio.run(engine.run_tasks(run_id, build_tasks([case], [passfail_judge()]), {"pf": provider}))
    assert store.count_calls(run_id) == 1
    assert store.judgments(run_id)[0].outcome == "error"


def test_timeout_is_retried_then_error(store):
    provider = make_provider("scripted", default="PASS\nok", delay=0.5)
    engine = Engine(store, EngineOptions(retries=1, timeout=0.05, backoff=0.001, progress=False))
    case = Case(id="c1", question="q", output="o")
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=[case])
    asyncio.run(engine.run_tasks(run_id, build_tasks([case], [passfail_judge()]), {"pf": provider}))
    [j] = store.judgments(run_id)
    assert j.outcome == "error" and "no answer within" in j.reason
    assert store.count_calls(run_id) == 2


def test_refusal_and_unparsed_never_pass(store):
    provider = make_provider(
        "scripted",
        responses=[{"match": "bomb", "text": "I can't", "refused": True}, {"match": "meh", "text": "PASS."}],
        default="PASS\nFine.",
    )
    cases = [Case(id=i, question="q", output=o) for i, o in [("a", "bomb"), ("b", "meh"), ("c", "ok")]]
    engine = Engine(store, EngineOptions(progress=False))
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
    asyncio.run(engine.run_tasks(run_id, build_tasks(cases, [passfail_judge()]), {"pf": provider}))
    got = {j.item_id: (j.outcome, j.verdict) for j in store.judgments(run_id)}
    assert got == {"a": ("refused", None), "b": ("unparsed", None), "c": ("ok", "PASS")}


def test_pairwise_both_orders_and_repeat(store):
    def answer(request: Request) -> str:
        text = request.messages[-1]["content"]
        # Always prefer whichever answer is shown first: an order-biased judge.
        return "Reasoning.\n[[A]]" if text else "[[C]]"

    provider = make_provider("scripted", fn=answer)
    case = Case(id="p1", question="q", output_1="short", output_2="long answer")
    tasks = build_tasks([case], [pair_judge()], repeat=2)
    assert sorted((t.order, t.repeat) for t in tasks) == [("12", 0), ("12", 1), ("21", 0), ("21", 1)]
    engine = Engine(store, EngineOptions(progress=False))
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=[case])
    asyncio.run(engine.run_tasks(run_id, tasks, {"pair": provider}))
    # Repeats are independent samples: not answered from each other's cache entry.
    assert store.count_calls(run_id) == 4
    from juge.runs.summary import summarize

    s = summarize(store, run_id, [pair_judge()])
    assert s["judges"]["pair"]["pair_verdicts"]["inconsistent"] == 2


def test_solve_first_makes_a_solution_call(store):
    judge = passfail_judge(solve_first=True)
    seen = []

    def answer(request):
        seen.append(request.meta["template"])
        return "42" if request.meta["template"].endswith("/solve") else "PASS\nMatches my solution."

    provider = make_provider("scripted", fn=answer)
    case = Case(id="s1", question="6*7?", output="42")
    engine = Engine(store, EngineOptions(progress=False))
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=[case])
    asyncio.run(engine.run_tasks(run_id, build_tasks([case], [judge]), {"pf": provider}))
    assert seen == [judge.template_id + "/solve", judge.template_id]
    assert store.judgments(run_id)[0].verdict == "PASS"


def write_eval(tmp_path: Path, n_cases: int, delay: float, gate: float | None = None) -> Path:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        "".join(json.dumps({"id": f"c{i}", "question": f"q{i}", "output": f"o{i}"}) + "\n" for i in range(n_cases))
    )
    text = f"""
cases = "cases.jsonl"
[[judges]]
name = "pf"
setup = "passfail"
description = "Is it fine?"
model = "m1"
provider = "scripted"
provider_options = {{ default = "PASS\\nFine.", delay = {delay} }}
[[judges]]
name = "pf2"
setup = "passfail"
description = "Is it short?"
model = "m1"
provider = "scripted"
provider_options = {{ responses = [{{ match = "o1\\\\b", text = "FAIL\\nToo long." }}], default = "PASS\\nShort.", delay = {delay} }}
[engine]
concurrency = 2
"""
    if gate is not None:
        text += f"[gate]\nmin_pass_rate = {gate}\n"
    path = tmp_path / "eval.toml"
    path.write_text(text)
    return path


def test_resume_after_kill_9_stores_each_judgment_once(tmp_path):
    eval_file = write_eval(tmp_path, n_cases=30, delay=0.05)
    db = tmp_path / "j.db"
    cmd = [sys.executable, "-m", "juge.cli", "run", str(eval_file), "--db", str(db), "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    n = 0
    while time.time() < deadline:
        time.sleep(0.1)
        if db.exists():
            with Store(db) as s:
                n = s.conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
            if n >= 10:
                break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 10 <= n < 60, f"the run should be killed part-way, had {n} judgments"
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "resuming run" in done.stderr
    with Store(db) as s:
        runs = s.list_runs()
        assert len(runs) == 1 and runs[0]["status"] == "done"
        rows = s.conn.execute("SELECT item_id, judge, COUNT(*) FROM judgments GROUP BY item_id, judge").fetchall()
        assert len(rows) == 60 and all(r[2] == 1 for r in rows)  # requests = 30 cases x 2 judges


def test_cli_gate_exit_code_and_only(tmp_path):
    eval_file = write_eval(tmp_path, n_cases=4, delay=0, gate=0.9)
    db = tmp_path / "j.db"
    res = runner.invoke(app, ["run", str(eval_file), "--db", str(db), "--no-progress"])
    assert res.exit_code == 1, res.output  # c1 fails pf2: 3/4 = 75% < 90%
    # The API carries the gate (the command only prints it and exits 1).
    import juge

    gate = juge.run(eval_file, db=db).gate
    assert gate is not None and (gate.min_pass_rate, gate.pass_rate, gate.passed) == (0.9, 0.75, False)
    assert juge.run(eval_file, db=db, only=["c0", "c2"]).gate.passed  # type: ignore[union-attr]
    only = tmp_path / "only.txt"
    only.write_text("c0\nc2\n")
    res = runner.invoke(app, ["run", str(eval_file), "--db", str(db), "--no-progress", "--only", str(only)])
    assert res.exit_code == 0, res.output
    assert "2 cases" in res.output
    only.write_text("c0\nnope\n")
    res = runner.invoke(app, ["run", str(eval_file), "--db", str(db), "--only", str(only)])
    assert res.exit_code != 0


def test_cli_runs_show_export(tmp_path):
    db = tmp_path / "j.db"
    res = runner.invoke(app, ["run", str(BAKERY), "--db", str(db), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "unparsed" in res.output
    with Store(db) as s:
        run_id = s.list_runs()[0]["id"]
    res = runner.invoke(app, ["runs", "--db", str(db)], env={"COLUMNS": "250"})
    assert run_id in res.output and "passfail-v1" in res.output
    res = runner.invoke(app, ["show", run_id[:6], "--db", str(db), "--case", "gf-2"])
    assert "**PASS**" in res.output and "unparsed" in res.output
    for suffix in ("jsonl", "csv"):
        out = tmp_path / f"out.{suffix}"
        res = runner.invoke(app, ["export", run_id, "-o", str(out), "--db", str(db)])
        assert res.exit_code == 0, res.output
        assert out.exists()
    rows = [json.loads(lab) for lab in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(rows) == 16
    assert {r["outcome"] for r in rows} == {"ok", "unparsed"}
    assert all(r["template_hash"] and r["model"] == "scripted-judge-1" and r["dataset_hash"] for r in rows)
    assert all(r["attempts"] == 1 for r in rows)
    assert {r["item_id"]: r["output"] for r in rows}["hours-2"].startswith("Sorry, we're closed on Mondays")
    res = runner.invoke(app, ["export", "nope", "-o", str(tmp_path / "x.jsonl"), "--db", str(db)])
    assert res.exit_code != 0 and not (tmp_path / "x.jsonl").exists()


@pytest.mark.needs("pyarrow")
def test_export_as_parquet_keeps_the_column_types(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    db = tmp_path / "j.db"
    assert runner.invoke(app, ["run", str(BAKERY), "--db", str(db), "--no-progress"]).exit_code == 0
    with Store(db) as s:
        run_id = s.list_runs()[0]["id"]
    res = runner.invoke(app, ["export", run_id, "-o", str(tmp_path / "out.parquet"), "--db", str(db)])
    assert res.exit_code == 0, res.output
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.num_rows == 16
    assert table.schema.field("repeat").type == pa.int64() and table.schema.field("attempts").type == pa.int64()
    verdicts = set(table.column("verdict").to_pylist())
    assert verdicts <= {"PASS", "FAIL", None} and "PASS" in verdicts  # plain words; criteria have their own columns
    assert table.schema.field("criterion.correct").type == pa.int64()


def test_bad_eval_file_exit_2(tmp_path):
    bad = tmp_path / "eval.toml"
    bad.write_text('cases = "c.jsonl"\n[[checks]]\nkind = "nope"\n')
    proc = subprocess.run(
        [sys.executable, "-m", "juge.cli", "run", str(bad), "--db", str(tmp_path / "j.db")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "eval.toml:2: field 'checks[0]': unknown check kind 'nope'" in proc.stderr
    bad.write_text('cases = "c.jsonl"\nconcurency = 3\n')
    proc = subprocess.run([sys.executable, "-m", "juge.cli", "run", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 2 and "field 'concurency'" in proc.stderr


def test_case_missing_what_a_judge_needs_stops_before_any_call(tmp_path):
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "question": "q", "output": "o"}\n{"id": "b", "question": "q"}\n')
    (tmp_path / "eval.toml").write_text(
        'cases = "cases.jsonl"\n[[judges]]\nname = "pf"\nsetup = "passfail"\ndescription = "ok?"\n'
        'provider = "scripted"\nprovider_options = { default = "PASS\\nok" }\n'
    )
    db = tmp_path / "j.db"
    proc = subprocess.run(
        [sys.executable, "-m", "juge.cli", "run", str(tmp_path / "eval.toml"), "--db", str(db)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "cases.jsonl:2: field 'output': case 'b'" in proc.stderr
    with Store(db) as s:
        assert s.count_calls() == 0


def test_summary_counts_missing_separately_and_criteria_only_with_min_score(tmp_path):
    with Store(tmp_path / "j.db") as store:
        s = run_eval(load_eval(BAKERY), store, progress=False).summary
        assert (s["cases_passed"], s["cases_failed"], s["cases_missing"]) == (4, 3, 1)
        assert s["not_counted"] == ["quality"]
        config = load_eval(BAKERY)
        config.spec.gate.min_score = 2
        s2 = run_eval(config, store, progress=False, resume=False).summary
        # quality gives cake-1 helpful=1 and gf-1 correct=1; both already fail otherwise.
        assert s2["not_counted"] == [] and s2["cases_failed"] == 3 and s2["cases_passed"] == 4
        config.spec.gate.min_score = 3.5
        s3 = run_eval(config, store, progress=False, resume=False).summary
        assert s3["cases_passed"] == 0


def test_markup_in_data_is_printed_verbatim(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "x[/]y", "question": "q", "output": "[bold]o[/]"}) + "\n")
    (tmp_path / "eval.toml").write_text(
        'cases = "cases.jsonl"\n[[judges]]\nname = "pf[/]"\nsetup = "passfail"\ndescription = "ok?"\n'
        'provider = "scripted"\nprovider_options = { default = "PASS\\n[red]fine[/] [/]" }\n'
    )
    db = tmp_path / "j.db"
    res = runner.invoke(
        app, ["run", str(tmp_path / "eval.toml"), "--db", str(db), "--no-progress"], env={"COLUMNS": "200"}
    )
    assert res.exit_code == 0, res.output
    assert "Judge pf[/]" in res.output
    with Store(db) as s:
        run_id = s.list_runs()[0]["id"]
    res = runner.invoke(app, ["show", run_id, "--db", str(db)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "x[/]y" in res.output and "[red]fine[/] [/]" in res.output


def test_cli_flag_conflicts_and_provider_override(tmp_path):
    res = runner.invoke(app, ["run", str(BAKERY), "--cases", str(BAKERY.parent / "cases.jsonl")])
    assert res.exit_code != 0 and "not both" in str(res.exception)
    recorded = tmp_path / "rec.jsonl"
    # A recording of another item only: every call is a miss, so every judgment is an error.
    recorded.write_text('{"item_id": "elsewhere", "judge": "faithful", "template": "t", "text": "PASS"}\n')
    db = tmp_path / "j.db"
    res = runner.invoke(
        app,
        [
            "run",
            "--cases",
            str(BAKERY.parent / "cases.jsonl"),
            "--judge",
            str(BAKERY.parent / "judges" / "faithful.toml"),
            "--replay",
            str(recorded),
            "--db",
            str(db),
            "--no-progress",
        ],
    )
    # every call failed: a Fault (exit 3 from the console script) naming the first error
    assert isinstance(res.exception, Fault) and "no recorded answer" in str(res.exception), res.output
    with Store(db) as s:
        js = s.judgments(s.list_runs()[0]["id"])
    assert {j.outcome for j in js} == {"error"} and "no recorded answer" in js[0].reason


def test_write_atomic_leaves_the_old_file_on_error(tmp_path):
    from juge.files import write_atomic, write_with

    target = tmp_path / "out.txt"
    write_atomic(target, "old\n")

    def broken(tmp):
        tmp.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_with(target, broken)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no temporary file left behind
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"


def test_cli_cases_with_a_column_map(tmp_path):
    (tmp_path / "t.csv").write_text("ticket,prompt,reply,facts\nT1,Open Sunday?,Yes 8-13,Sun 8-13\n")
    db = tmp_path / "j.db"
    res = runner.invoke(
        app,
        [
            "run",
            "--cases",
            str(tmp_path / "t.csv"),
            "--map",
            "id=ticket,question=prompt,output=reply,context=facts",
            "--judge",
            str(BAKERY.parent / "judges" / "faithful.toml"),
            "--db",
            str(db),
            "--no-progress",
        ],
    )
    assert res.exit_code == 0, res.output
    with Store(db) as s:
        [case] = s.run_cases(s.list_runs()[0]["id"])
    assert (case.id, case.output, case.context) == ("T1", "Yes 8-13", "Sun 8-13")


def test_a_database_from_an_earlier_schema_gains_the_new_columns(tmp_path):
    import sqlite3

    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        "CREATE TABLE judgments (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, item_id TEXT NOT NULL,"
        " judge TEXT NOT NULL, model TEXT NOT NULL, template TEXT NOT NULL, template_hash TEXT NOT NULL,"
        " ord TEXT NOT NULL DEFAULT '', repeat INTEGER NOT NULL DEFAULT 0, text TEXT NOT NULL, verdict TEXT,"
        " outcome TEXT NOT NULL, reason TEXT, distribution TEXT, tokens_in INTEGER, tokens_out INTEGER, cost REAL,"
        " latency REAL, timestamp TEXT NOT NULL, UNIQUE (run_id, item_id, judge, ord, repeat));"
        "CREATE TABLE outputs (run_id TEXT NOT NULL, item_id TEXT NOT NULL, slot TEXT NOT NULL DEFAULT 'output',"
        " text TEXT, model TEXT, outcome TEXT NOT NULL, PRIMARY KEY (run_id, item_id, slot));"
    )
    conn.close()
    with Store(db) as store:
        run_id = store.create_run(dataset_hash="d", juge_version="t", cases=[Case(id="a", question="q", output="o")])
        from juge.data.records import Judgment

        store.save_judgment(
            run_id, Judgment(item_id="a", judge="j", model="m", template="t", outcome="ok", verdict="PASS", attempts=2)
        )
        store.save_output(run_id, "a", "output", "o", "m", "ok", cost=0.5)
        assert store.judgments(run_id)[0].attempts == 2


def test_show_gives_the_pairwise_verdict_in_the_fixed_order(tmp_path):
    cases = tmp_path / "pairs.jsonl"
    cases.write_text(json.dumps({"id": "p1", "question": "q", "output_1": "one", "output_2": "two"}) + "\n")
    (tmp_path / "eval.toml").write_text(
        'cases = "pairs.jsonl"\n[[judges]]\nname = "pair"\nsetup = "pairwise"\ndescription = "Better?"\n'
        'provider = "scripted"\nprovider_options = { default = "Reasons.\\n[[A]]" }\n'
    )
    db = tmp_path / "j.db"
    assert runner.invoke(app, ["run", str(tmp_path / "eval.toml"), "--db", str(db), "--no-progress"]).exit_code == 0
    with Store(db) as s:
        run_id = s.list_runs()[0]["id"]
    res = runner.invoke(app, ["show", run_id, "--db", str(db)], env={"COLUMNS": "200"})
    assert "order 21 (answer 2 shown as A) (scripted-1): A" in res.output
    assert "verdict, both orders in the fixed order: inconsistent" in res.output


def test_solve_first_judgment_carries_both_calls_tokens_and_cost(store):
    judge = passfail_judge(solve_first=True)

    def answer(request):
        return "forty two" if request.meta["template"].endswith("/solve") else "PASS\nMatches."

    engine = Engine(store, EngineOptions(progress=False, prices={"scripted-1": (1e6, 1e6)}))  # $1 per token
    case = Case(id="s2", question="6*7?", output="42")
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=[case])
    asyncio.run(engine.run_tasks(run_id, build_tasks([case], [judge]), {"pf": make_provider("scripted", fn=answer)}))
    [j] = store.judgments(run_id)
    calls = [
        json.loads(r["response"]) for r in store.conn.execute("SELECT response FROM calls WHERE run_id = ?", (run_id,))
    ]
    assert len(calls) == 2
    assert j.tokens_in == sum(c["tokens_in"] for c in calls) and j.tokens_out == sum(c["tokens_out"] for c in calls)
    assert j.cost == pytest.approx(j.tokens_in + j.tokens_out)


def test_csv_export_defuses_spreadsheet_formulas_unless_raw(tmp_path):
    import csv

    (tmp_path / "cases.jsonl").write_text(json.dumps({"id": "c0", "question": "q", "output": '=HYPERLINK("x")'}) + "\n")
    (tmp_path / "eval.toml").write_text("""
cases = "cases.jsonl"
[[judges]]
name = "pf"
setup = "passfail"
description = "Is it fine?"
model = "m1"
provider = "scripted"
provider_options = { default = "@SUM(A1)\\nPASS" }
""")
    db = tmp_path / "j.db"
    assert runner.invoke(app, ["run", str(tmp_path / "eval.toml"), "--db", str(db), "--no-progress"]).exit_code == 0
    with Store(db) as s:
        run_id = s.list_runs()[0]["id"]
    safe, raw = tmp_path / "safe.csv", tmp_path / "raw.csv"
    assert runner.invoke(app, ["export", run_id, "-o", str(safe), "--db", str(db)]).exit_code == 0
    assert runner.invoke(app, ["export", run_id, "-o", str(raw), "--db", str(db), "--raw-csv"]).exit_code == 0
    [safe_row] = list(csv.DictReader(safe.open(newline="")))
    [raw_row] = list(csv.DictReader(raw.open(newline="")))
    assert safe_row["output"] == '\'=HYPERLINK("x")' and safe_row["text"] == "'@SUM(A1)\nPASS"
    assert raw_row["output"] == '=HYPERLINK("x")' and raw_row["text"] == "@SUM(A1)\nPASS"
    assert safe_row["outcome"] == raw_row["outcome"]
