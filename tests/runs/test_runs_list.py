"""`juge runs --eval/--status/--last/--json`, `juge runs rm`, and cached re-runs reusing their run."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
BAKERY = REPO / "examples" / "bakery" / "eval.toml"


def _runs(monkeypatch, capsys, db: Path, *extra: str) -> list[dict]:
    code, out, err = run_cli(monkeypatch, capsys, "runs", "--db", str(db), "--json", "-", *extra)
    assert code == 0, err
    return json.loads(out)


def _count(db: Path, table: str, run_id: str) -> int:
    return sqlite3.connect(db).execute(f"SELECT COUNT(*) FROM {table} WHERE run_id = ?", (run_id,)).fetchone()[0]


def test_cached_rerun_reuses_the_run_it_repeats(tmp_path, monkeypatch, capsys):
    db = tmp_path / "j.db"
    first = tmp_path / "1.json"
    again = tmp_path / "2.json"
    assert (
        run_cli(monkeypatch, capsys, "run", str(BAKERY), "--no-progress", "--db", str(db), "--json", str(first))[0] == 0
    )
    code, _, err = run_cli(
        monkeypatch, capsys, "run", str(BAKERY), "--no-progress", "--db", str(db), "--json", str(again)
    )
    assert code == 0
    one, two = json.loads(first.read_text()), json.loads(again.read_text())
    assert two["run_id"] == one["run_id"] and "no new run stored" in err
    assert [r["id"] for r in _runs(monkeypatch, capsys, db)] == [one["run_id"]]
    # one name for a run in every JSON (`id` stays beside it, deprecated); a run of an eval says so
    (row,) = _runs(monkeypatch, capsys, db)
    assert (row["run_id"], row["id"], row["kind"]) == (one["run_id"], one["run_id"], "eval")
    # --fresh keeps a new run; a changed judge (new answers) is a new run too.
    run_cli(monkeypatch, capsys, "run", str(BAKERY), "--no-progress", "--db", str(db), "--fresh")
    assert len(_runs(monkeypatch, capsys, db)) == 2


def test_filters_and_rm(tmp_path, monkeypatch, capsys):
    db = tmp_path / "j.db"
    for _ in range(3):
        run_cli(monkeypatch, capsys, "run", str(BAKERY), "--no-progress", "--db", str(db), "--fresh")
    cases = tmp_path / "c.jsonl"
    cases.write_text('{"id": "x", "question": "q", "context": "c", "output": "o"}\n')
    judge = REPO / "examples" / "bakery" / "judges" / "faithful.toml"
    run_cli(monkeypatch, capsys, "run", "--cases", str(cases), "--judge", str(judge), "--no-progress", "--db", str(db))
    every = _runs(monkeypatch, capsys, db)
    assert len(every) == 4
    bakery = _runs(monkeypatch, capsys, db, "--eval", "bakery-support")
    assert len(bakery) == 3 and {r["name"] for r in bakery} == {"bakery-support"}
    assert len(_runs(monkeypatch, capsys, db, "--eval", str(BAKERY))) == 3
    assert [r["id"] for r in _runs(monkeypatch, capsys, db, "--last", "2")] == [r["id"] for r in every[:2]]
    assert len(_runs(monkeypatch, capsys, db, "--status", "done")) == 4
    assert _runs(monkeypatch, capsys, db, "--status", "running") == []

    gone, kept = bakery[0]["id"], bakery[1]["id"]
    assert _count(db, "judgments", gone) > 0
    code, _, _ = run_cli(monkeypatch, capsys, "runs", "rm", gone, "nope-not-a-run", "--db", str(db))
    assert code == 2 and len(_runs(monkeypatch, capsys, db)) == 4  # nothing deleted on a bad id
    code, _, err = run_cli(monkeypatch, capsys, "runs", "rm", gone[:8], "--db", str(db))
    assert code == 0 and gone in err
    assert [r["id"] for r in _runs(monkeypatch, capsys, db)] == [r["id"] for r in every if r["id"] != gone]
    for table in ("judgments", "check_results", "calls", "run_cases"):
        assert _count(db, table, gone) == 0
    assert _count(db, "judgments", kept) > 0
    code, out, _ = run_cli(monkeypatch, capsys, "runs", "--db", str(db))
    assert code == 0 and gone not in out and kept in out


def test_the_api_lists_and_deletes_what_the_cli_does(tmp_path, monkeypatch, capsys):
    import jsonschema
    import pytest

    import juge

    db = tmp_path / "j.db"
    for _ in range(2):
        run_cli(monkeypatch, capsys, "run", str(BAKERY), "--no-progress", "--db", str(db), "--fresh")
    rows = juge.list_runs(db=db)
    assert all(isinstance(r, juge.RunRow) for r in rows) and len(rows) == 2
    cli = _runs(monkeypatch, capsys, db)
    assert [r.to_dict() for r in rows] == cli
    schema = json.loads((REPO / "docs" / "schema" / "runs.json").read_text(encoding="utf-8"))
    jsonschema.validate(cli, schema)
    newest = rows[0]
    assert newest.status == "done" and newest.n_cases == 8 and newest.cases_passed is not None
    assert {j.name for j in newest.judges} == {"faithful", "quality"}
    assert [r.id for r in juge.list_runs(db=db, last=1)] == [newest.id]
    assert juge.list_runs(db=db, eval_name="another-eval") == []

    with pytest.raises(juge.InputError):
        juge.delete_runs([newest.id, "nope-not-a-run"], db=db)
    assert len(juge.list_runs(db=db)) == 2  # nothing deleted on a bad id
    (gone,) = juge.delete_runs([newest.id[:8]], db=db)
    assert gone == newest
    assert [r.id for r in juge.list_runs(db=db)] == [rows[1].id]
    code, out, err = run_cli(monkeypatch, capsys, "runs", "rm", rows[1].id, "--db", str(db), "--json", "-")
    assert code == 0, err
    jsonschema.validate(json.loads(out), schema)
    assert json.loads(out) == [rows[1].to_dict()] and juge.list_runs(db=db) == []
    with pytest.raises(juge.InputError):
        juge.list_runs(db=tmp_path / "absent.db")


def test_a_running_run_lists_its_judgments_done_of_total(tmp_path):
    import pytest

    import juge
    from juge.data.records import Case, Judgment
    from juge.store import Store

    db = tmp_path / "d.db"
    with Store(db) as store:
        cases = [Case(id=f"p{k}", output_1="a", output_2="b") for k in range(2)] + [Case(id="s", output="x")]
        judges = [
            {"name": n, "setup": s, "template": "t", "template_hash": "h", "model": "m"}
            for n, s in (("pair", "pairwise"), ("pf", "passfail"))
        ]
        run_id = store.create_run(
            dataset_hash="d", juge_version="t", cases=cases, config={"repeat": 2, "judges": judges}
        )
        for order in ("12", "21"):
            store.save_judgment(
                run_id,
                Judgment(item_id="p0", judge="pair", model="m", template="t", template_hash="h", order=order,
                         text="A", verdict="A", outcome="ok"),
            )  # fmt: skip
    (row,) = juge.list_runs(db=db, status="running")
    # two pairs in two orders and one single answer, each asked twice (repeat 2): (2 * 2 + 1) * 2
    assert (row.id, row.status, row.done, row.total) == (run_id, "running", 2, 10)
    assert juge.list_runs(db=db, status="done") == []
    with pytest.raises(juge.InputError):
        juge.list_runs(db=db, status="finished")
