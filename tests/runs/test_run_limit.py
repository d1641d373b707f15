"""`juge run --limit N` (issue 30): a quick look at the first N cases of the selection, in file order."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli, write_jsonl


def _eval(tmp_path: Path, n: int, extra: str = "") -> Path:
    write_jsonl(tmp_path / "cases.jsonl", [{"id": f"c{i:02d}", "question": "q", "output": f"o{i}"} for i in range(n)])
    path = tmp_path / "eval.toml"
    path.write_text(
        f'cases = "cases.jsonl"\n{extra}\n[[judges]]\nname = "pf"\nsetup = "passfail"\ndescription = "Right?"\n\n'
        '[provider]\nname = "scripted"\noptions = { default = "PASS\\nFine." }\n',
        encoding="utf-8",
    )
    return path


def test_limit_runs_the_first_cases_and_is_a_run_of_its_own(monkeypatch, capsys, tmp_path: Path) -> None:
    eval_file, db = _eval(tmp_path, 12), str(tmp_path / "j.db")
    out = tmp_path / "s.json"
    code, _, _ = run_cli(monkeypatch, capsys, "run", str(eval_file), "--db", db, "--limit", "5", "--json", str(out))
    assert code == 0
    assert json.loads(out.read_text())["n_cases"] == 5
    shown = tmp_path / "show.json"
    run_id = json.loads(out.read_text())["run_id"]
    assert run_cli(monkeypatch, capsys, "show", run_id, "--db", db, "--json", str(shown))[0] == 0
    assert [c["id"] for c in json.loads(shown.read_text())["cases"]] == [f"c{i:02d}" for i in range(5)]
    # The whole selection afterwards is a new run (the limited one is not resumed as if it were all of it).
    code, _, _ = run_cli(monkeypatch, capsys, "run", str(eval_file), "--db", db, "--json", str(out))
    assert code == 0 and json.loads(out.read_text())["n_cases"] == 12
    assert json.loads(out.read_text())["run_id"] != run_id


def test_limit_applies_after_the_sample_and_only(monkeypatch, capsys, tmp_path: Path) -> None:
    import juge

    eval_file = _eval(tmp_path, 30, "sample = 10\nseed = 3\n")
    whole = juge.dry_run(eval_file)
    limited = juge.dry_run(eval_file, limit=4)
    assert whole.calls == {"pf": 10} and limited.calls == {"pf": 4}
    # --only keeps ten ids, the sample of ten draws them all, the limit keeps the first three in file order.
    db = tmp_path / "j.db"
    r = juge.run(eval_file, db=db, limit=3, only=[f"c{i:02d}" for i in range(20, 30)])
    assert r.summary is not None and r.summary.n_cases == 3
    assert [c.id for c in juge.show(r, db=db).cases] == ["c20", "c21", "c22"]


def test_limit_below_one_is_bad_input(monkeypatch, capsys, tmp_path: Path) -> None:
    eval_file = _eval(tmp_path, 3)
    code, _, err = run_cli(monkeypatch, capsys, "run", str(eval_file), "--db", str(tmp_path / "j.db"), "--limit", "0")
    assert code == 2 and "--limit" in err
