"""`juge label attach-run`: --db names the juge store (--store still works); a run over other cases exits 2."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from juge.cli import app
from juge.data.records import Judgment
from juge.errors import InputError
from juge.store import Store
from label_helpers import pair_case, write_cases, write_rubric


def make_run(path: Path, ids: list[str]) -> str:
    with Store(path) as runs:
        # the project's own pair for its ids (same answers as labelled); any pair for other ids
        cases = [
            pair_case(int(i[5:])) if i.startswith("item-") else pair_case(0).model_copy(update={"id": i}) for i in ids
        ]
        run_id = runs.create_run(dataset_hash="h", juge_version="t", cases=cases)
        for i in ids:
            for order, letter in (("12", "A"), ("21", "B")):
                runs.save_judgment(
                    run_id,
                    Judgment(
                        item_id=i,
                        judge="j",
                        model="m",
                        template="t",
                        order=order,
                        text=letter,
                        verdict=letter,
                        outcome="ok",
                    ),
                )
    return run_id


def test_attach_run_refuses_a_run_over_other_cases_and_reads_db(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'labels.db'}"
    cases = write_cases(tmp_path / "cases.jsonl", [pair_case(i) for i in range(4)])
    runner = CliRunner()

    def juge(*args: str):  # noqa: ANN202
        return runner.invoke(app, ["label", *args, "--db-url", db_url], env={"COLUMNS": "300"})

    assert (
        juge(
            "init",
            "--cases",
            str(cases),
            "--task",
            "pairwise",
            "--rubric",
            str(write_rubric(tmp_path / "r.toml")),
            "--name",
            "q4",
        ).exit_code
        == 0
    )
    project_ids = [pair_case(i).id for i in range(4)]
    runs = tmp_path / "runs.db"
    other = make_run(runs, ["x1", "x2"])
    result = juge("attach-run", "q4", other, "--db", str(runs))
    assert result.exit_code == 1 and isinstance(result.exception, InputError)  # juge.cli.main prints it, exit 2
    message = str(result.exception)
    assert f"run {other}" in message and "no case id matches an item of project q4" in message
    assert "'x1', 'x2'" in message
    same = make_run(runs, project_ids[:2])
    result = juge("attach-run", "q4", same, "--db", str(runs))
    assert result.exit_code == 0 and "Attached 2 judge verdicts" in result.output, result.output
    result = juge("attach-run", "q4", same, "--store", str(runs))  # the option's earlier name
    assert result.exit_code == 0 and "Attached 2 judge verdicts" in result.output, result.output


def _passfail_project(tmp_path: Path, n: int = 3):  # noqa: ANN202
    """A passfail project over n single-answer cases, all labelled PASS by alice; returns (db_url, cases)."""
    from juge.label.db import LabelStore
    from label_helpers import score_case

    db_url = f"sqlite:///{tmp_path / 'labels.db'}"
    cases = [score_case(i) for i in range(n)]
    result = CliRunner().invoke(
        app,
        [
            "label",
            "init",
            "--cases",
            str(write_cases(tmp_path / "c.jsonl", cases)),
            "--task",
            "passfail",
            "--rubric",
            str(write_rubric(tmp_path / "r.toml")),
            "--name",
            "pf",
            "--overlap",
            "0",
            "--db-url",
            db_url,
        ],
    )
    assert result.exit_code == 0, result.output
    store = LabelStore(db_url)
    rater = store.rater_by_token(store.add_rater(store.project("pf"), "alice"))
    while (a := store.next_assignment(rater)) is not None:
        store.save_label(rater, a.id, "PASS")
    store.close()
    return db_url, cases


def _passfail_run(path: Path, cases: list, generated: dict[str, str] | None = None) -> str:
    with Store(path) as runs:
        run_id = runs.create_run(dataset_hash="h", juge_version="t", cases=cases)
        for case in cases:
            runs.save_judgment(
                run_id,
                Judgment(
                    item_id=case.id, judge="j", model="m", template="t", text="FAIL", verdict="FAIL", outcome="ok"
                ),
            )
        for item_id, text in (generated or {}).items():
            runs.save_output(run_id, item_id, "output", text, "system-model", "ok")
    return run_id


def test_export_carries_the_hash_of_the_answer_each_rater_saw(tmp_path: Path) -> None:
    from label_helpers import read_jsonl

    db_url, cases = _passfail_project(tmp_path)
    out = tmp_path / "labels.jsonl"
    result = CliRunner().invoke(app, ["label", "export", "pf", "-o", str(out), "--db-url", db_url])
    assert result.exit_code == 0, result.output
    by_id = {c.id: c.output_hash() for c in cases}
    rows = read_jsonl(out)
    assert len(rows) == 3 and all(r["output_hash"] == by_id[r["item_id"]] for r in rows)
    assert len(set(by_id.values())) == 3  # the answers differ, so a wrong pairing would show


def test_a_store_made_before_output_hashes_is_upgraded_from_the_stored_cases(tmp_path: Path) -> None:
    import sqlite3

    from juge.label.db import LabelStore

    db_url, cases = _passfail_project(tmp_path)
    with sqlite3.connect(tmp_path / "labels.db") as conn:
        conn.execute("ALTER TABLE label_items DROP COLUMN output_hash")
        conn.execute("DROP TABLE label_schema_version")  # as the juge before schema versions left it
    store = LabelStore(db_url)
    hashes = {lab.item_id: lab.output_hash for lab in store.export_labels(store.project("pf"))}
    store.close()
    assert hashes == {c.id: c.output_hash() for c in cases}


def test_attach_run_refuses_verdicts_on_other_answers_unless_allowed(tmp_path: Path) -> None:
    from juge.label.db import LabelStore

    db_url, cases = _passfail_project(tmp_path)
    runs = tmp_path / "runs.db"
    runner = CliRunner()

    def attach(run_id: str, *extra: str):  # noqa: ANN202
        return runner.invoke(
            app,
            ["label", "attach-run", "pf", run_id, "--db", str(runs), "--db-url", db_url, *extra],
            env={"COLUMNS": "300"},
        )

    edited = [cases[0], cases[1].model_copy(update={"output": "a rewritten answer"}), cases[2]]
    result = attach(_passfail_run(runs, edited))
    assert isinstance(result.exception, InputError)
    assert "on 1 of the 3 items" in str(result.exception) and repr(cases[1].id) in str(result.exception)
    generated = _passfail_run(runs, cases, generated={cases[2].id: "what the system wrote this time"})
    result = attach(generated)  # the run's system produced another answer for item 2
    assert isinstance(result.exception, InputError) and repr(cases[2].id) in str(result.exception)
    result = attach(generated, "--allow-changed-outputs")
    assert result.exit_code == 0, result.output
    assert "Attached 2 judge verdicts" in result.output and "Left out 1 items" in result.output
    store = LabelStore(db_url)
    listed = {row["item_id"] for row in store.disagreements(store.project("pf"))}
    store.close()
    assert listed == {cases[0].id, cases[1].id}  # judge FAIL vs people PASS, but not on the changed item
    assert attach(_passfail_run(runs, cases)).exit_code == 0
