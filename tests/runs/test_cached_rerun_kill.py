"""A SIGKILL during a re-run answered wholly from the cache leaves no second finished run (issue 27): the new
run is removed instead of finished, so a kill at any point leaves at most an unfinished twin, which the next
re-run resumes and removes the same way."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

EVAL = """
cases = "cases.jsonl"
[[judges]]
name = "pf"
setup = "passfail"
description = "Is it right?"
model = "judge-1"
provider = "scripted"
provider_options = { default = "PASS\\nRight.", model = "judge-1" }
"""

# `juge run` in a process that kills itself with SIGKILL when the store method `at` is first called.
RUN_KILLED_AT = """
import os, signal, sys
from juge.store.sqlite import Store

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

setattr(Store, sys.argv[1], die)
from juge.cli import main
sys.argv = ["juge", "run", sys.argv[2], "--db", sys.argv[3]]
main()
"""


def juge_run(eval_path: Path, db: Path, killed_at: str | None = None) -> subprocess.CompletedProcess[str]:
    if killed_at is None:
        argv = [sys.executable, "-m", "juge.cli", "run", str(eval_path), "--db", str(db)]
    else:
        argv = [sys.executable, "-c", RUN_KILLED_AT, killed_at, str(eval_path), str(db)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def statuses(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return sorted(r[0] for r in conn.execute("SELECT status FROM runs"))


@pytest.mark.slow
@pytest.mark.parametrize("at", ["delete_run", "list_runs", "judgments"])
def test_a_kill_during_a_fully_cached_rerun_leaves_one_finished_run(tmp_path, at) -> None:
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i}", "question": f"q{i}", "output": f"a{i}"}) + "\n" for i in range(4))
    )
    (tmp_path / "eval.toml").write_text(EVAL)
    db = tmp_path / "juge.db"
    first = juge_run(tmp_path / "eval.toml", db)
    assert first.returncode == 0, first.stderr
    assert statuses(db) == ["done"]
    # `judgments` is read while the twin is compared (and by the summary), `list_runs` when earlier runs are
    # looked up, `delete_run` removes the twin: a kill at each leaves no second finished run.
    killed = juge_run(tmp_path / "eval.toml", db, killed_at=at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert statuses(db).count("done") == 1
    again = juge_run(tmp_path / "eval.toml", db)  # resumes the unfinished twin, if any, and removes it
    assert again.returncode == 0, again.stderr
    assert statuses(db) == ["done"]
