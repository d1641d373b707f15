"""`juge export`: one column per field with native types, case fields joined in, `--wide` per case."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from cli_helpers import run_cli
from juge.data.records import Case, Judgment
from juge.store import Store


def _judgment(item: str, judge: str, verdict, *, order: str | None = None, outcome: str = "ok", **extra) -> Judgment:
    return Judgment(
        item_id=item, judge=judge, model="m", template="t", template_hash="h", order=order,
        text=str(verdict), verdict=verdict if outcome == "ok" else None, outcome=outcome, **extra,
    )  # fmt: skip


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "j.db"
    with Store(db) as store:
        cases = [
            Case(id="a", category="billing", question="Q a?", group="g1", output="x", context="Refunds take 5 days.",
                 reference="5 days", meta={"channel": "email", "tags": {"vip": True}, "seen": [1, 2]}),
            Case(id="b", category="shipping", question="Q b?", output="y"),
            Case(id="p", category="pairs", question="Q p?", output_1="one", output_2="two"),
        ]  # fmt: skip
        run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases, config={})
        store.save_checks(run_id, "a", {"short": (True, None)})
        store.save_checks(run_id, "b", {"short": (False, "too long")})
        for j in (
            _judgment("a", "pf", "PASS", distribution={"PASS": 0.75, "FAIL": 0.25}),
            _judgment("b", "pf", None, outcome="unparsed"),
            _judgment("a", "sc", 4),
            _judgment("b", "sc", 2),
            _judgment("a", "crit", {"correct": 3, "tone": 1}),
            _judgment("p", "pair", "A", order="12"),
            _judgment("p", "pair", "B", order="21"),  # answer 1 shown second and chosen again: A
        ):
            store.save_judgment(run_id, j)
    return db, run_id


def test_csv_has_native_columns(run, tmp_path, monkeypatch, capsys):
    db, run_id = run
    out = tmp_path / "o.csv"
    assert run_cli(monkeypatch, capsys, "export", run_id, "-o", str(out), "--db", str(db))[0] == 0
    rows = list(csv.DictReader(out.open(newline="")))
    by = {(r["item_id"], r["judge"], r["order"]): r for r in rows}
    assert by[("a", "pf", "")]["verdict"] == "PASS"  # a plain word, not JSON text
    assert by[("a", "pf", "")]["p.PASS"] == "0.75" and by[("a", "pf", "")]["p.FAIL"] == "0.25"
    assert by[("a", "sc", "")]["score"] == "4" and by[("a", "pf", "")]["score"] == ""
    assert by[("a", "crit", "")]["criterion.correct"] == "3" and by[("a", "crit", "")]["criterion.tone"] == "1"
    assert by[("b", "pf", "")]["check.short"] == "False" and by[("b", "pf", "")]["check.short.reason"] == "too long"
    a = by[("a", "pf", "")]
    assert (a["category"], a["question"], a["group"]) == ("billing", "Q a?", "g1")
    # What a faithfulness judge read is in the export too (issue 30: context was left out).
    assert (a["context"], a["reference"]) == ("Refunds take 5 days.", "5 days")
    assert (a["meta.channel"], a["meta.tags.vip"], json.loads(a["meta.seen"])) == ("email", "True", [1, 2])


def test_parquet_types(run, tmp_path, monkeypatch, capsys):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    db, run_id = run
    out = tmp_path / "o.parquet"
    assert run_cli(monkeypatch, capsys, "export", run_id, "-o", str(out), "--db", str(db))[0] == 0
    table = pq.read_table(out)
    schema = table.schema
    assert schema.field("score").type == pa.int64()
    assert schema.field("criterion.correct").type == pa.int64()
    assert schema.field("p.PASS").type == pa.float64()
    assert schema.field("check.short").type == pa.bool_()
    assert schema.field("meta.tags.vip").type == pa.bool_()
    # PASS/FAIL and scores share `verdict` in this run: Parquet needs one type, so it holds text.
    assert schema.field("verdict").type == pa.string()
    df = table.to_pylist()
    assert sum(1 for r in df if r["verdict"] == "PASS") == 1
    assert {r["verdict"] for r in df if r["judge"] == "sc"} == {"4", "2"}


def test_wide_is_one_row_per_case(run, tmp_path, monkeypatch, capsys):
    db, run_id = run
    out = tmp_path / "w.jsonl"
    assert run_cli(monkeypatch, capsys, "export", run_id, "-o", str(out), "--db", str(db), "--wide")[0] == 0
    rows = {r["item_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert sorted(rows) == ["a", "b", "p"]
    a, b, p = rows["a"], rows["b"], rows["p"]
    assert (a["pf.verdict"], a["sc.verdict"], a["crit.correct"], a["crit.tone"]) == ("PASS", 4, 3, 1)
    assert b["pf.verdict"] is None and b["pf.outcome"] == "unparsed" and b["check.short"] is False
    assert (p["pair.12"], p["pair.21"], p["pair.verdict"]) == ("A", "B", "A")
    assert a["meta.channel"] == "email" and a["category"] == "billing"
    csv_out = tmp_path / "w.csv"
    assert run_cli(monkeypatch, capsys, "export", run_id, "-o", str(csv_out), "--db", str(db), "--wide")[0] == 0
    assert len(list(csv.DictReader(csv_out.open(newline="")))) == 3


def test_export_from_python_equals_the_cli_json(run, tmp_path, monkeypatch, capsys):
    import jsonschema
    import pyarrow.parquet as pq

    import juge

    db, run_id = run
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "schema" / "export.json").read_text())
    for name, extra in (("o.csv", ()), ("o.jsonl", ()), ("o.parquet", ()), ("w.csv", ("--wide",))):
        via_cli, via_api = tmp_path / "cli" / name, tmp_path / "api" / name
        via_cli.parent.mkdir(exist_ok=True)
        via_api.parent.mkdir(exist_ok=True)
        code, out, err = run_cli(
            monkeypatch, capsys, "export", run_id[:6], "-o", str(via_cli), "--db", str(db), "--json", "-", *extra
        )
        assert code == 0, err
        written = json.loads(out)
        jsonschema.validate(written, schema)
        result = juge.export(run_id[:6], via_api, db=db, wide=bool(extra))
        assert isinstance(result, juge.ExportResult)
        assert {**result.to_dict(), "path": None} == {**written, "path": None}
        assert via_api.read_bytes() == via_cli.read_bytes()
        if name.endswith(".csv"):
            with via_api.open(newline="") as f:
                header, *rows = list(csv.reader(f))
            assert header == result.columns and len(rows) == result.rows
        elif name.endswith(".parquet"):
            table = pq.read_table(via_api)
            assert table.column_names == result.columns and table.num_rows == result.rows
        else:
            lines = [json.loads(line) for line in via_api.read_text().splitlines()]
            assert len(lines) == result.rows and list(dict.fromkeys(k for r in lines for k in r)) == result.columns
    assert juge.export(run_id, tmp_path / "w.csv", db=db, wide=True).rows == 3  # one row per case
    assert juge.export(run_id, tmp_path / "t.csv", db=db).rows == 7  # one per judgment
    # An explicit format wins over the suffix; a bad one or an unknown suffix writes nothing.
    assert juge.export(run_id, tmp_path / "rows.txt", db=db, format="jsonl").format == "jsonl"
    for path, fmt in ((tmp_path / "x.xlsx", None), (tmp_path / "y.csv", "xlsx")):
        with pytest.raises(juge.InputError):
            juge.export(run_id, path, db=db, format=fmt)
        assert not path.exists()
    with pytest.raises(juge.InputError):
        juge.export("no-such-run", tmp_path / "z.csv", db=db)
