"""`juge.show` from Python: the cases of a stored run, filtered, typed; what `juge show --json` writes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import jsonschema
import pytest

import juge
from cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
BAKERY = REPO / "examples" / "bakery" / "eval.toml"
SCHEMA = json.loads((REPO / "docs" / "schema" / "show.json").read_text(encoding="utf-8"))


def _run(monkeypatch, capsys, db: Path, *args: str) -> str:
    summary = db.parent / "summary.json"
    code, _, err = run_cli(monkeypatch, capsys, "run", *args, "--no-progress", "--db", str(db), "--json", str(summary))
    assert code == 0, err
    return json.loads(summary.read_text())["run_id"]


def _show_json(monkeypatch, capsys, run_id: str, db: Path, *extra: str) -> dict:
    code, out, err = run_cli(monkeypatch, capsys, "show", run_id, "--db", str(db), "--json", "-", *extra)
    assert code == 0, err
    data = json.loads(out)
    jsonschema.validate(data, SCHEMA)
    return data


def test_show_from_python_equals_the_cli_json_and_filters(tmp_path, monkeypatch, capsys):
    db = tmp_path / "juge.db"
    run_id = _run(monkeypatch, capsys, db, str(BAKERY))
    rows = sqlite3.connect(db).execute("SELECT item_id, judge, outcome, verdict, text FROM judgments").fetchall()

    shown = juge.show(run_id[:8], db=db)
    assert isinstance(shown, juge.ShowResult)
    assert shown.to_dict() == _show_json(monkeypatch, capsys, run_id[:8], db)
    assert shown.run.id == run_id and shown.n_cases == shown.n_matching == len(shown.cases) == 8
    stored = sorted((i, j, o, t) for i, j, o, _, t in rows)
    assert sorted((c.id, j.judge, j.outcome, j.text) for c in shown.cases for j in c.judgments) == stored
    assert all(c.checks for c in shown.cases)  # the bakery eval has deterministic checks

    unparsed = juge.show(run_id, db=db, outcome="unparsed")
    assert unparsed.to_dict() == _show_json(monkeypatch, capsys, run_id, db, "--outcome", "unparsed")
    found = {(c.id, j.judge) for c in unparsed.cases for j in c.judgments}
    assert found == {(i, j) for i, j, o, _, _ in rows if o == "unparsed"} and found
    assert all(j.outcome == "unparsed" and j.verdict is None for c in unparsed.cases for j in c.judgments)

    one_judge = juge.show(run_id, db=db, judge="quality", limit=2)
    assert len(one_judge.cases) == 2 and one_judge.n_matching == 8 and one_judge.limit == 2
    assert all(c.checks == {} and {j.judge for j in c.judgments} == {"quality"} for c in one_judge.cases)
    assert one_judge.to_dict() == _show_json(monkeypatch, capsys, run_id, db, "--judge", "quality", "--limit", "2")

    failing = {i for i, j, o, v, _ in rows if j == "faithful" and o == "ok" and json.loads(v) == "FAIL"}
    assert {c.id for c in juge.show(run_id, db=db, outcome="fail", judge="faithful").cases} == failing

    for bad in ({"outcome": "weird"}, {"judge": "nobody"}, {"limit": 0}):
        with pytest.raises(juge.InputError):
            juge.show(run_id, db=db, **bad)
    with pytest.raises(juge.InputError):
        juge.show("no-such-run", db=db)


def test_show_combines_a_pairwise_judges_two_orders(tmp_path, monkeypatch, capsys):
    project = tmp_path / "p"
    assert run_cli(monkeypatch, capsys, "init", str(project), "--kind", "pairwise")[0] == 0
    db = tmp_path / "juge.db"
    run_id = _run(monkeypatch, capsys, db, str(project / "eval.toml"))
    letters: dict[str, dict[str, str | None]] = {}
    for item, order, outcome, verdict in sqlite3.connect(db).execute(
        "SELECT item_id, ord, outcome, verdict FROM judgments"
    ):
        letter = json.loads(verdict) if outcome == "ok" else None
        if letter is not None:  # C is a tie; in order 21 answer 2 was shown as A
            letter = {"12": {"A": "A", "B": "B", "C": "tie"}, "21": {"A": "B", "B": "A", "C": "tie"}}[order][letter]
        letters.setdefault(item, {})[order] = letter

    def expected(by_order: dict[str, str | None]) -> str:
        first, second = by_order.get("12"), by_order.get("21")
        if first is None or second is None:
            return "missing"
        return first if first == second else "inconsistent"

    shown = juge.show(run_id, db=db)
    assert shown.to_dict() == _show_json(monkeypatch, capsys, run_id, db)
    verdicts = {c.id: [p.verdict for p in c.pair_verdicts] for c in shown.cases}
    assert verdicts == {item: [expected(by_order)] for item, by_order in letters.items()}
    assert all(p.meaning for c in shown.cases for p in c.pair_verdicts)


def test_letters_are_mapped_back_for_the_reader_and_no_match_says_so(tmp_path, monkeypatch, capsys):
    # Issue 30: "order 21 (answer 2 shown as A) · wrote B" left the reader to map letters back.
    from juge.judges.pairwise import letter_meaning

    assert [letter_meaning(x, "12") for x in ("A", "B", "C", None)] == [
        "answer 1 better", "answer 2 better", "a tie", None,
    ]  # fmt: skip
    assert [letter_meaning(x, "21") for x in ("A", "B", "C", "Z")] == [
        "answer 2 better", "answer 1 better", "a tie", None,
    ]  # fmt: skip
    project = tmp_path / "p"
    assert run_cli(monkeypatch, capsys, "init", str(project), "--kind", "pairwise")[0] == 0
    db = tmp_path / "juge.db"
    run_id = _run(monkeypatch, capsys, db, str(project / "eval.toml"))
    code, out, _ = run_cli(monkeypatch, capsys, "show", run_id, "--db", str(db))
    shown = juge.show(run_id, db=db)
    ok = [(j.order, j.verdict) for c in shown.cases for j in c.judgments if j.outcome == "ok" and j.order]
    assert code == 0 and ok
    for order, verdict in set(ok):
        assert f"order {order} " in out and f": {verdict} ({letter_meaning(str(verdict), order)})" in out
    # No case matches: stdout says so instead of a bare header.
    code, out, _ = run_cli(monkeypatch, capsys, "show", run_id, "--db", str(db), "--outcome", "refused")
    assert code == 0 and len(out.strip().splitlines()) == 2 and str(shown.n_cases) in out.splitlines()[1]
