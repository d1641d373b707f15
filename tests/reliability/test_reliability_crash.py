"""Crash safety of `juge run`: SIGKILL at seeded-random points, resume, and compare with a clean run.

`juge run` runs as a real subprocess against the mock OpenAI-compatible server (real HTTP, a
lognormal latency so kills land with calls in flight). It is killed with SIGKILL at planned
points: during start-up (before the run row exists), just after the run row appears, while
the system under test writes outputs (in the variant that has one), mid-judging (each after a
seeded-random number of further requests at the server, then 0-20 ms), and once the last
judgment is stored (while the summary is computed). The same command is
started again after every kill, then allowed to finish. A clean run of the same eval goes into
another database. The killed-and-resumed store must hold every (item, judge, order, repeat)
exactly once, equal the clean run, and pass SQLite's integrity check after every kill.

Model-call bound: a request is paid for again only when its answer never reached the cache,
i.e. it was in flight when the process died. After each kill the calls lost so far are
``requests the server saw - cache rows`` (no faults are injected, so every answered request is
cached unless the process died first). Each kill may add at most the engine's concurrency
(the number of calls it allows in flight; a call keeps its slot until its answer and judgment
are committed), and the final total must be exactly ``tasks + calls lost``: at least one call per
task, nothing paid twice otherwise.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from juge.config import load_eval
from juge.runner import run_eval
from juge.store import Store
from juge.testing.mockserver import MockConfig, serve_in_thread

CONCURRENCY = 16
REPEAT = 2
ANSWERS = (
    "PASS\nThe answer does what was asked; of the two, [[A]] is better.",
    "FAIL\nThe answer misses the point; of the two, [[B]] is better.",
    "PASS\nBoth answers are fine and equally good: [[C]].",
    "Pass, mostly. [[A]] or [[B]], hard to say.",  # unparsed for both judges
)
MOCK = MockConfig(latency=0.02, latency_dist="lognormal", spread=0.5, answers=ANSWERS, seed=8)
# everything a judgment says but its latency and timestamp (a resumed judgment whose answer a killed
# process bought costs what it cost: see the last test)
JUDGMENT_COLUMNS = (
    "item_id, judge, ord, repeat, verdict, outcome, reason, text, model, template, template_hash,"
    " tokens_in, tokens_out, cost, attempts"
)


def write_eval(folder: Path, base_url: str, n_single: int, n_pairs: int, system: bool = False) -> Path:
    """An eval with `n_single` single cases (a passfail judge) and `n_pairs` pairs (a pairwise judge,
    both orders), a deterministic check on every output, and the mock server as the model; with
    `system`, the mock server also writes the single cases' outputs (the system under test)."""
    assert not (system and n_pairs), "the system under test answers single cases"
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(n_single * 1000 + n_pairs)
    words = ["croissant", "sourdough", "Greggs", "rye", "brownie", "almond", "bagel", "muffin"]

    def answer(i: int) -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(2, 9))) + f" (#{i})"

    cases = [
        {"id": f"s{i:04d}", "question": f"Question {i}: what do you bake on day {i}?"}
        | ({} if system else {"output": answer(i)})
        for i in range(n_single)
    ]
    cases += [
        {
            "id": f"p{i:04d}",
            "question": f"Pair question {i}: which loaf for day {i}?",
            "output_1": answer(i),
            "output_2": answer(-i),
        }
        for i in range(n_pairs)
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (folder / "system.j2").write_text("A customer of the bakery asks: {{ input }}", encoding="utf-8")
    system_section = '[system]\nmodel = "mock-system-1"\ntemplate = "system.j2"\n' if system else ""
    path = folder / "eval.toml"
    path.write_text(
        f'''
name = "crash-resume"
cases = "cases.jsonl"
[provider]
name = "openai"
options = {{ base_url = "{base_url}" }}
[[checks]]
name = "no_competitors"
kind = "forbidden_words"
words = ["Greggs"]
[[judges]]
name = "correct"
setup = "passfail"
description = "The answer does what the customer asked."
model = "{MOCK.model}"
[[judges]]
name = "better"
setup = "pairwise"
description = "Which answer serves the customer better."
model = "{MOCK.model}"
[engine]
concurrency = {CONCURRENCY}
retries = 0
timeout = 30
[prices]
"{MOCK.model}" = {{ input = 0.5, output = 1.5 }}
"mock-system-1" = {{ input = 0.25, output = 1.0 }}
{system_section}''',
        encoding="utf-8",
    )
    return path


def expected_task_keys(n_single: int, n_pairs: int) -> set[tuple[str, str, str, int]]:
    single = {(f"s{i:04d}", "correct", "", r) for i in range(n_single) for r in range(REPEAT)}
    pairs = {(f"p{i:04d}", "better", order, r) for i in range(n_pairs) for order in ("12", "21") for r in range(REPEAT)}
    return single | pairs


def juge_run(eval_path: Path, db: Path) -> subprocess.Popen:
    """`juge run` in its own process; its stderr is appended to stderr.log beside the database."""
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    with open(db.parent / "stderr.log", "a", encoding="utf-8") as log:
        log.write("---- juge run\n")
        log.flush()
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "juge.cli",
                "run",
                str(eval_path),
                "--db",
                str(db),
                "--repeat",
                str(REPEAT),
                "--no-progress",
            ],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=env,
        )


def query(db: Path, sql: str, *args: object) -> list[tuple]:
    """Read the store from outside the juge process (a fresh connection each time)."""
    if not db.exists():
        return []
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError as exc:  # the schema is not there yet
        if "no such table" in str(exc):
            return []
        raise
    finally:
        conn.close()


def count_judgments(db: Path) -> int:
    return (query(db, "SELECT COUNT(*) FROM judgments") or [(0,)])[0][0]


def count_outputs(db: Path) -> int:
    return (query(db, "SELECT COUNT(*) FROM outputs") or [(0,)])[0][0]


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def wait_until(condition, proc: subprocess.Popen, poll: float = 0.002, limit: float = 120) -> bool:
    """Poll `condition` until it holds (True) or the process exits first (False)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if condition():
            return True
        time.sleep(poll)
    raise AssertionError("timed out waiting for a kill point")


@dataclass
class Kill:
    phase: str
    judgments: int  # stored when the process died
    outputs: int  # of the system under test, stored when the process died
    lost_calls: int  # requests the server saw whose answers never reached the cache, this kill
    status: str | None  # the run's status after the kill


def plan_kills(n_kills: int, system: bool) -> list[str]:
    """During start-up, just after the run row appears, while the system under test answers (if
    there is one), random points while judging, and the summary at the end."""
    early = ["startup", "run-row", "generating"] if system else ["startup", "run-row"]
    assert n_kills >= len(early) + 2
    return [*early, *["mid"] * (n_kills - len(early) - 1), "summary"]


def kill_at(phase: str, rng: random.Random, proc: subprocess.Popen, db: Path, server, tasks: int, outputs: int) -> bool:
    """Wait for the kill point of `phase`, then SIGKILL; False if the process finished first.

    `tasks` judgments and `outputs` system outputs make the whole run."""
    if phase == "startup":  # the interpreter is still importing juge: no run row yet
        time.sleep(rng.uniform(0.0, 0.3))
        reached = proc.poll() is None
    elif phase == "run-row":
        reached = wait_until(lambda: bool(query(db, "SELECT 1 FROM runs")), proc)
    elif phase == "generating":  # a random number of the outputs still to write
        remaining = outputs - count_outputs(db)
        reached = wait_for_requests(server, proc, rng.randint(CONCURRENCY + 1, max(CONCURRENCY + 1, remaining // 2)))
        time.sleep(rng.uniform(0.0, 0.02))
    elif phase == "mid":  # once every output is written, a random number of the judgments still to make
        reached = wait_until(lambda: count_outputs(db) >= outputs, proc)
        remaining = tasks - count_judgments(db)
        reached = reached and wait_for_requests(
            server, proc, rng.randint(CONCURRENCY + 1, max(CONCURRENCY + 1, remaining // 6))
        )
        time.sleep(rng.uniform(0.0, 0.02))
    else:  # every judgment stored: the process is summarising
        reached = wait_until(lambda: count_judgments(db) >= tasks, proc)
    if not reached or proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    return True


def wait_for_requests(server, proc: subprocess.Popen, more: int) -> bool:
    """Wait until the server has seen `more` further requests. More than CONCURRENCY: a further
    request waits for a free slot, so by then something has been stored."""
    target = server.stats()["requests"] + more
    return wait_until(lambda: server.stats()["requests"] >= target, proc)


def lost_so_far(server, db: Path) -> int:
    """Requests the server saw minus answers cached: the calls the kills threw away (and will repeat)."""
    return settled_requests(server) - (query(db, "SELECT COUNT(*) FROM cache") or [(0,)])[0][0]


def settled_requests(server) -> int:
    """The server's request count once requests written just before a kill have reached it."""
    seen = server.stats()["requests"]
    for _ in range(40):
        time.sleep(0.05)
        now = server.stats()["requests"]
        if now == seen:
            return now
        seen = now
    raise AssertionError("the server kept receiving requests after the kill")


HEADLINE = re.compile(r"^run (\w+): (\d+) cases, (\d+) calls logged$", re.MULTILINE)


def split_summary(out: str) -> tuple[int, str]:
    """The calls logged (a crashed run logs the calls its killed processes made too) and the summary
    printed with the run id and that count blanked out."""
    match = HEADLINE.search(out)
    assert match, out
    return int(match[3]), HEADLINE.sub(r"run <id>: \2 cases, <n> calls logged", out)


@dataclass
class CrashedRun:
    kills: list[Kill]
    lost: int  # calls thrown away by all the kills together
    requests: int  # requests the server saw in all
    final: subprocess.CompletedProcess | None  # the last process, let finish (None: the last kill came too late)
    stderr: str  # of every process, killed or not


def kill_and_resume(
    eval_path: Path, db: Path, server, n_tasks: int, n_outputs: int, n_kills: int, rng: random.Random
) -> CrashedRun:
    """Start `juge run`, SIGKILL it at each planned point, start it again; then let it finish."""
    kills: list[Kill] = []
    lost = 0
    final: subprocess.Popen | None = None
    for phase in plan_kills(n_kills, system=n_outputs > 0):
        proc = juge_run(eval_path, db)
        if not kill_at(phase, rng, proc, db, server, n_tasks, n_outputs):
            final = proc  # it finished before the kill point: that is the final run
            break
        if db.exists():
            assert integrity(db) == "ok", f"store unreadable after the kill at {phase}"
        now_lost = lost_so_far(server, db)
        status = query(db, "SELECT status FROM runs")
        kills.append(
            Kill(phase, count_judgments(db), count_outputs(db), now_lost - lost, status[0][0] if status else None)
        )
        lost = now_lost
    else:
        # A kill that came after the run was marked done (rare: the summary was already printing)
        # leaves nothing to resume; a further `juge run` would start a new run.
        if kills[-1].status != "done":
            final = juge_run(eval_path, db)
    completed = None
    if final is not None:
        out, _ = final.communicate(timeout=300)
        completed = subprocess.CompletedProcess(final.args, final.returncode, out)
    stderr = (db.parent / "stderr.log").read_text(encoding="utf-8")
    return CrashedRun(kills, lost, server.stats()["requests"], completed, stderr)


def assert_kills_landed(crashed: CrashedRun, n_kills: int, n_tasks: int, n_outputs: int) -> None:
    kills = crashed.kills
    print("kills:", *kills, sep="\n  ")
    assert len(kills) >= n_kills - 1, f"only {len(kills)} kills landed: {kills}"
    assert all(k.lost_calls <= CONCURRENCY for k in kills), f"{kills}\nstderr of every process:\n{crashed.stderr}"
    assert all(k.status is None for k in kills if k.phase == "startup"), "a start-up kill came after the run row"
    assert all(k.status == "running" for k in kills[:-1] if k.phase != "startup"), kills
    assert any(k.phase == "mid" and 0 < k.judgments < n_tasks for k in kills), kills
    if n_outputs:
        assert any(k.phase == "generating" and 0 < k.outputs < n_outputs for k in kills), kills


def assert_same_judgments(db: Path, clean_db: Path, tasks: set[tuple[str, str, str, int]]) -> None:
    """One finished run holding every task exactly once, with the clean run's judgments, checks and cases."""
    runs = query(db, "SELECT id, status FROM runs")
    assert len(runs) == 1 and runs[0][1] == "done", runs
    keys = query(db, "SELECT item_id, judge, ord, repeat, COUNT(*) FROM judgments GROUP BY 1, 2, 3, 4")
    assert [row for row in keys if row[4] != 1] == []
    assert {row[:4] for row in keys} == tasks
    assert count_judgments(db) == len(tasks)
    sql = f"SELECT {JUDGMENT_COLUMNS} FROM judgments ORDER BY item_id, judge, ord, repeat"
    resumed_rows, clean_rows = query(db, sql), query(clean_db, sql)
    assert resumed_rows == clean_rows
    assert {r[5] for r in clean_rows} == {"ok", "unparsed"}  # the answers exercise both outcomes
    pairwise = any(order for _, _, order, _ in tasks)
    assert {r[4] for r in clean_rows} >= {'"PASS"', '"FAIL"'} | ({'"A"', '"B"', '"C"'} if pairwise else set())
    checks = "SELECT item_id, name, passed, reason FROM check_results ORDER BY 1, 2"
    assert query(db, checks) == query(clean_db, checks) != []
    cases = "SELECT position, item_id, record FROM run_cases ORDER BY position"
    assert query(db, cases) == query(clean_db, cases)
    outputs = (
        "SELECT item_id, slot, text, model, outcome, reason, tokens_in, tokens_out, cost FROM outputs ORDER BY 1, 2"
    )
    assert query(db, outputs) == query(clean_db, outputs)


def assert_same_summary(db: Path, clean_db: Path, crashed: CrashedRun, clean_out: str, n_tasks: int) -> None:
    """The stored and printed summaries are the clean run's but for the run id, the process's engine
    counters and the calls logged: every successful call a killed process made is logged, even when
    the kill came before its answer was cached, so a crashed run may log more (never more than the
    server saw)."""
    summary, clean_summary = (json.loads(query(d, "SELECT summary FROM runs")[0][0]) for d in (db, clean_db))
    for s in (summary, clean_summary):
        del s["run_id"], s["engine"]
    assert clean_summary.pop("calls") == n_tasks <= summary.pop("calls") <= crashed.requests
    # judgments are summed in the order they were stored, which the kills change: equal up to rounding
    assert summary.pop("cost") == pytest.approx(clean_summary.pop("cost"), rel=1e-12)
    assert summary == clean_summary
    if crashed.final is not None:
        logged, printed = split_summary(crashed.final.stdout)
        clean_logged, clean_printed = split_summary(clean_out)
        assert printed == clean_printed
        assert HEADLINE.search(crashed.final.stdout)[1] == query(db, "SELECT id FROM runs")[0][0]
        assert clean_logged == n_tasks <= logged <= crashed.requests


def crash_and_resume(
    tmp_path: Path, n_kills: int, n_single: int, n_pairs: int, seed: int, system: bool = False
) -> None:
    tasks = expected_task_keys(n_single, n_pairs)
    n_outputs = n_single if system else 0
    db, clean_db = tmp_path / "killed" / "juge.db", tmp_path / "clean" / "juge.db"
    db.parent.mkdir()
    clean_db.parent.mkdir()
    with serve_in_thread(MOCK) as server, serve_in_thread(MOCK) as clean_server:
        # the clean run works alongside the crashing one, on its own server and store
        clean_eval = write_eval(tmp_path / "eval-clean", clean_server.url, n_single, n_pairs, system)
        clean = juge_run(clean_eval, clean_db)
        eval_path = write_eval(tmp_path / "eval-killed", server.url, n_single, n_pairs, system)
        crashed = kill_and_resume(eval_path, db, server, len(tasks), n_outputs, n_kills, random.Random(seed))
        clean_out, _ = clean.communicate(timeout=300)
        clean_requests = clean_server.stats()["requests"]
    assert clean.returncode == 0, (clean_db.parent / "stderr.log").read_text(encoding="utf-8")
    assert clean_requests == len(tasks) + n_outputs
    assert_kills_landed(crashed, n_kills, len(tasks), n_outputs)
    assert crashed.final is None or crashed.final.returncode == 0, crashed.stderr

    assert_same_judgments(db, clean_db, tasks)
    assert count_outputs(db) == n_outputs
    # model calls: one per task and output, plus exactly the calls the kills threw away (each at
    # most CONCURRENCY)
    assert crashed.requests == len(tasks) + n_outputs + crashed.lost, (crashed.requests, len(tasks), crashed.kills)
    assert_same_summary(db, clean_db, crashed, clean_out, len(tasks) + n_outputs)
    assert integrity(db) == "ok"


def test_sigkill_at_ten_random_points_then_resume_equals_a_clean_run(tmp_path):
    crash_and_resume(tmp_path, n_kills=10, n_single=160, n_pairs=120, seed=10)


def test_sigkill_while_the_system_under_test_answers_then_resume_equals_a_clean_run(tmp_path):
    crash_and_resume(tmp_path, n_kills=5, n_single=80, n_pairs=0, seed=5, system=True)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(11, 16))
def test_more_seeds_of_ten_kills_then_resume_equals_a_clean_run(tmp_path, seed):
    crash_and_resume(tmp_path, n_kills=10, n_single=160, n_pairs=120, seed=seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6, 11))
def test_more_seeds_of_kills_while_the_system_answers(tmp_path, seed):
    crash_and_resume(tmp_path, n_kills=6, n_single=80, n_pairs=0, seed=seed, system=True)


class Killed(BaseException):
    """Stands in for SIGKILL at one exact point: nothing after it runs."""


def test_an_answer_cached_just_before_a_kill_still_costs_what_the_run_paid(tmp_path, monkeypatch):
    """A kill between caching an answer and storing its judgment: the resumed run takes the answer
    from the cache, and the run's cost (and the judgment's) is still what the clean run reports."""
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i}", "question": f"q{i}", "output": f"a{i}"}) + "\n" for i in range(3))
    )
    (tmp_path / "eval.toml").write_text("""
cases = "cases.jsonl"
[[judges]]
name = "pf"
setup = "passfail"
description = "Is it right?"
model = "judge-1"
provider = "scripted"
provider_options = { default = "PASS\\nRight.", model = "judge-1" }
[engine]
concurrency = 1
[prices]
"judge-1" = { input = 1000, output = 2000 }
""")
    config = load_eval(tmp_path / "eval.toml")
    with Store(tmp_path / "clean.db") as store:
        clean = run_eval(config, store, progress=False)
        clean_costs = {j.item_id: j.cost for j in store.judgments(clean.run_id)}

    def killed(*_):
        raise Killed

    with Store(tmp_path / "crashed.db") as store:
        with monkeypatch.context() as patch:
            patch.setattr(Store, "save_judgment", killed)
            with pytest.raises(Killed):
                run_eval(config, store, progress=False)
        assert store.count_calls() >= 1 and store.done_keys(store.list_runs()[0]["id"]) == set()
        resumed = run_eval(config, store, progress=False)
        assert resumed.resumed and resumed.engine_stats["cache_hits"] >= 1
        assert {j.item_id: j.cost for j in store.judgments(resumed.run_id)} == clean_costs
    assert resumed.summary["cost"] == clean.summary["cost"] and clean.summary["cost"]["total"] > 0
