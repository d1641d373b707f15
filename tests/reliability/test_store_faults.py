"""Storage faults: a damaged or foreign .db, a store that cannot be written, a full disk.

Each is one line naming the file and what to do (exit 2 for a bad store, 3 for disk or
permissions), never a traceback; nothing half-written is kept; the run resumes once the
fault is gone. A full disk is simulated with SQLite's max_page_count (per connection).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import juge.store.sqlite as store_module
from cli_helpers import run_cli, write_jsonl

N_CASES = 30
BIG_ANSWER = "PASS\n" + "The answer is fine. " * 2500  # ~50 kB: a few answers fill a small page budget


def write_eval(tmp_path: Path) -> Path:
    write_jsonl(tmp_path / "cases.jsonl", [{"id": f"c{k}", "question": "q", "output": f"a{k}"} for k in range(N_CASES)])
    path = tmp_path / "eval.toml"
    path.write_text(
        'cases = "cases.jsonl"\n[provider]\nname = "scripted"\n'
        f"options = {{ default = {json.dumps(BIG_ANSWER)} }}\n"
        '[[judges]]\nname = "pf"\nsetup = "passfail"\ndescription = "Right?"\nmodel = "m1"\n'
        "[engine]\nconcurrency = 2\n",
        encoding="utf-8",
    )
    return path


def juge(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert "Traceback" not in err
    return code, out, err


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    "content", [b"garbage " * 100, b"SQLite format 3\x00" + b"\x00" * 50], ids=["garbage", "bare-header"]
)
def test_a_garbage_db_is_exit_2_naming_the_file(tmp_path, monkeypatch, capsys, content: bytes) -> None:
    db = tmp_path / "bad.db"
    db.write_bytes(content)
    for args in (("runs",), ("show", "x"), ("run", str(write_eval(tmp_path)), "--no-progress")):
        code, out, err = juge(monkeypatch, capsys, *args, "--db", str(db))
        assert code == 2, (args, err)
        assert str(db) in one_error_line(err) and "move it aside" in err
    assert db.read_bytes() == content  # nothing written into it


def test_a_truncated_db_is_exit_2_naming_the_file(tmp_path, monkeypatch, capsys) -> None:
    db = tmp_path / "j.db"
    eval_file = write_eval(tmp_path)
    assert juge(monkeypatch, capsys, "run", str(eval_file), "--no-progress", "--db", str(db))[0] == 0
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = db.stat().st_size
    with db.open("r+b") as f:
        f.truncate(size // 3)
    for args in (("runs",), ("run", str(eval_file), "--no-progress")):
        code, out, err = juge(monkeypatch, capsys, *args, "--db", str(db))
        assert code == 2, (args, err)
        assert str(db) in one_error_line(err)


def test_a_folder_that_cannot_be_made_is_exit_3(tmp_path, monkeypatch, capsys) -> None:
    db = Path("/proc/juge-cannot-be-here/juge.db")
    code, out, err = juge(monkeypatch, capsys, "run", str(write_eval(tmp_path)), "--no-progress", "--db", str(db))
    assert code == 3 and str(db) in one_error_line(err) and "permissions" in err


def test_a_read_only_store_is_exit_3_naming_the_file(tmp_path, monkeypatch, capsys) -> None:
    db = tmp_path / "j.db"
    store_module.Store(db).close()  # an up-to-date store: opening it needs no write
    connect = sqlite3.connect

    def read_only(path, *args, **kwargs):  # root ignores file modes: open this store read-only instead
        if Path(path) != db:
            return connect(path, *args, **kwargs)
        return connect(f"file:{path}?mode=ro", *args, uri=True, **kwargs)

    monkeypatch.setattr(store_module.sqlite3, "connect", read_only)
    code, out, err = juge(monkeypatch, capsys, "run", str(write_eval(tmp_path)), "--no-progress", "--db", str(db))
    assert code == 3 and str(db) in one_error_line(err) and "cannot write" in err


def test_a_full_disk_mid_run_is_exit_3_keeps_nothing_half_written_and_resumes(tmp_path, monkeypatch, capsys) -> None:
    db = tmp_path / "j.db"
    eval_file = write_eval(tmp_path)
    opened = store_module.Store.__init__

    def small_disk(self, *args, **kwargs):
        opened(self, *args, **kwargs)
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        self.conn.execute(f"PRAGMA max_page_count = {pages + 150}")  # room for a few of the 30 answers

    with monkeypatch.context() as m:
        m.setattr(store_module.Store, "__init__", small_disk)
        code, out, err = juge(m, capsys, "run", str(eval_file), "--no-progress", "--db", str(db))
    assert code == 3 and str(db) in one_error_line(err) and "disk is full" in err
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        judged = conn.execute("SELECT count(*) FROM judgments").fetchone()[0]
        calls = conn.execute("SELECT count(*) FROM calls").fetchone()[0]
        status = conn.execute("SELECT status FROM runs").fetchall()
    assert 0 < judged < N_CASES and calls == judged  # every kept judgment has its call, and nothing more
    assert status == [("running",)]
    # The fault is gone: the same command resumes and stores each judgment exactly once.
    code, out, err = juge(monkeypatch, capsys, "run", str(eval_file), "--no-progress", "--db", str(db))
    assert code == 0, err
    assert "resuming run" in err
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT item_id, verdict FROM judgments").fetchall()
        assert conn.execute("SELECT status FROM runs").fetchall() == [("done",)]
    assert len(rows) == N_CASES == len({item for item, _ in rows})
