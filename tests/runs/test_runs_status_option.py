"""`juge runs --status`: a status no run can have is bad input (exit 2), not 'no runs match'."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import run_cli, write_jsonl


def test_status_takes_running_or_done_and_one_run_reads_run(monkeypatch, capsys, tmp_path: Path) -> None:
    write_jsonl(tmp_path / "cases.jsonl", [{"id": "a", "question": "q", "output": "o"}])
    (tmp_path / "eval.toml").write_text(
        'cases = "cases.jsonl"\n\n[[judges]]\nname = "pf"\nsetup = "passfail"\ndescription = "Right?"\n\n'
        '[provider]\nname = "scripted"\noptions = { default = "PASS\\nFine." }\n',
        encoding="utf-8",
    )
    db = str(tmp_path / "j.db")
    assert run_cli(monkeypatch, capsys, "run", str(tmp_path / "eval.toml"), "--db", db)[0] == 0
    code, _, err = run_cli(monkeypatch, capsys, "runs", "--db", db, "--status", "bogus")
    assert code == 2 and "--status" in err and "running" in err and "done" in err
    code, out, _ = run_cli(monkeypatch, capsys, "runs", "--db", db, "--status", "done")
    assert code == 0 and out.startswith("1 run in ")
