"""`juge label ...` from Python (juge.label_init, juge.label_status, ...): typed results, InputError on bad
input, and the same figures the CLI prints: each command's --json is its API result, valid against
docs/schema/label_*.json. Also: the project is named the same way on every command."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

import juge
from juge.cli import app
from juge.data.records import Judgment
from juge.errors import InputError
from juge.label.db import LabelStore
from juge.store import Store
from label_helpers import read_jsonl, score_case, write_cases, write_rubric

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "docs" / "schema"
runner = CliRunner()


def validate(name: str, data: dict) -> None:
    jsonschema.validate(data, json.loads((SCHEMA_DIR / f"{name}.json").read_text(encoding="utf-8")))


@pytest.fixture
def project(tmp_path: Path) -> tuple[str, list]:
    """Project 'pf' over 6 passfail cases, every one for two raters; ann says PASS on all, ben FAIL on the
    first two; returns (db_url, cases)."""
    db_url = f"sqlite:///{tmp_path / 'labels.db'}"
    cases = [score_case(i) for i in range(6)]
    made = juge.label_init(
        "pf",
        cases=write_cases(tmp_path / "cases.jsonl", cases),
        task="passfail",
        rubric=write_rubric(tmp_path / "rubric.toml"),
        overlap=1.0,
        db_url=db_url,
    )
    assert isinstance(made, juge.LabelInit)
    assert (made.project, made.items, made.overlap_items) == ("pf", 6, 6)
    tokens = {name: juge.label_add_rater(name, project="pf", db_url=db_url).token for name in ("ann", "ben")}
    store = LabelStore(db_url)
    for name, fail in (("ann", set()), ("ben", {cases[0].id, cases[1].id})):
        rater = store.rater_by_token(tokens[name])
        while (a := store.next_assignment(rater)) is not None:
            store.save_label(rater, a.id, "FAIL" if a.case.id in fail else "PASS")
    store.close()
    return db_url, cases


def cli_json(*args: str) -> dict:
    result = runner.invoke(app, ["label", *args, "--json", "-"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_status_from_python_counts_what_was_labelled(project) -> None:
    db_url, _ = project
    s = juge.label_status("pf", db_url=db_url)
    assert isinstance(s, juge.LabelStatus)
    assert (s.items, s.items_closed, s.labels, s.pairs) == (6, 6, 12, 6)
    assert s.agreement == pytest.approx(4 / 6)  # ben's two FAILs against ann's PASS
    assert [(r.rater, r.labels) for r in s.raters] == [("ann", 6), ("ben", 6)]
    assert s.disagreements == 2


def test_every_figure_printing_command_json_is_its_api_result_and_valid(project, tmp_path: Path) -> None:
    """The CLI adds nothing of its own: what --json writes equals what the function returns."""
    db_url, cases = project
    runs = tmp_path / "runs.db"
    with Store(runs) as store:
        run_id = store.create_run(dataset_hash="h", juge_version="t", cases=cases)
        for case in cases:
            store.save_judgment(
                run_id,
                Judgment(
                    item_id=case.id, judge="j", model="m", template="t", text="FAIL", verdict="FAIL", outcome="ok"
                ),
            )
    db = ("--db-url", db_url)
    checks = [
        ("label_status", ("status", "pf", *db), lambda: juge.label_status("pf", db_url=db_url)),
        (
            "label_release",
            ("release", "pf", "--dry-run", "--idle-hours", "0", *db),
            lambda: juge.label_release("pf", idle_hours=0, dry_run=True, db_url=db_url),
        ),
        (
            "label_attach",
            ("attach-run", "pf", run_id, "--db", str(runs), *db),
            lambda: juge.label_attach_run("pf", run_id, db=runs, db_url=db_url),
        ),
        ("label_disagreements", ("disagreements", "pf", *db), lambda: juge.label_disagreements("pf", db_url=db_url)),
        (
            "label_export",
            ("export", "pf", "-o", str(tmp_path / "l.jsonl"), *db),
            lambda: juge.label_export("pf", output=tmp_path / "l.jsonl", db_url=db_url),
        ),
    ]
    for schema, args, call in checks:
        printed = cli_json(*args)
        validate(schema, printed)
        assert call().to_dict() == printed, schema
    attached = juge.label_attach_run("pf", run_id, db=runs, db_url=db_url)
    assert (attached.attached, attached.judges, attached.left_out) == (6, ["j"], [])
    found = juge.label_disagreements("pf", db_url=db_url)
    # people agree on PASS for four items and the judge says FAIL; on two the raters themselves differ
    assert sorted(found.item_ids) == sorted(c.id for c in cases)
    assert {d.item_id for d in found.items if d.reasons == ["raters disagree"]} == {cases[0].id, cases[1].id}
    assert len(read_jsonl(tmp_path / "l.jsonl")) == 12


def test_init_json_is_valid_and_matches_what_was_created(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'labels.db'}"
    cases = write_cases(tmp_path / "cases.jsonl", [score_case(i) for i in range(5)])
    rubric = write_rubric(tmp_path / "rubric.toml")
    printed = cli_json(
        "init", "one", "--cases", str(cases), "--task", "score", "--rubric", str(rubric), "--db-url", db_url
    )
    validate("label_init", printed)
    again = juge.label_init("two", cases=cases, task="score", rubric=rubric, db_url=db_url).to_dict()
    assert {**printed, "project": "two"} == again  # same cases and seed: same figures


def test_bad_input_raises_input_error_and_never_prints(project, tmp_path: Path, capsys) -> None:
    db_url, _ = project
    calls = [
        lambda: juge.label_status("nope", db_url=db_url),
        lambda: juge.label_add_rater("ann", project="pf", db_url=db_url),  # already there
        lambda: juge.label_revoke_rater("nobody", project="pf", db_url=db_url),
        lambda: juge.label_release("pf", rater="nobody", db_url=db_url),
        lambda: juge.label_disagreements("pf", from_list="never-saved", db_url=db_url),
        lambda: juge.label_attach_run("pf", "no-such-run", db=tmp_path / "runs.db", db_url=db_url),
        lambda: juge.label_status(db_url="not a url"),
        lambda: juge.label_init(
            "x", cases=tmp_path / "cases.jsonl", task="ranking", rubric=tmp_path / "rubric.toml", db_url=db_url
        ),
    ]
    for call in calls:
        with pytest.raises(InputError):
            call()
    assert capsys.readouterr() == ("", "")


def test_a_rotated_link_replaces_the_old_one(project) -> None:
    db_url, _ = project
    old = juge.label_add_rater("cy", project="pf", adjudicator=True, db_url=db_url)
    new = juge.label_rotate_link("cy", project="pf", db_url=db_url)
    assert (
        new.adjudicator and new.token != old.token and new.link("http://h:1/") == f"http://h:1/login?token={new.token}"
    )
    store = LabelStore(db_url)
    assert store.rater_by_token(old.token) is None and store.rater_by_token(new.token).name == "cy"
    store.close()


def test_the_project_is_named_the_same_way_on_every_command(project, tmp_path: Path) -> None:
    """First argument or -p/--project everywhere; the older forms (add-rater NAME -p P, init --name) still work."""
    db_url, cases = project
    rubric = write_rubric(tmp_path / "r.toml")
    init = ("--cases", str(tmp_path / "cases.jsonl"), "--task", "passfail", "--rubric", str(rubric))

    def ok(*args: str) -> str:
        result = runner.invoke(app, ["label", *args, "--db-url", db_url])
        assert result.exit_code == 0, (args, result.output)
        return result.output

    for new, forms in {
        "q1": [("init", "q1", *init)],
        "q2": [("init", "-p", "q2", *init)],
        "q3": [("init", "--name", "q3", *init)],
    }.items():
        ok(*forms[0])
        assert juge.label_status(new, db_url=db_url).items == 6
    ok("add-rater", "q1", "dan")  # PROJECT NAME
    ok("add-rater", "eve", "-p", "q1")  # NAME -p PROJECT (the older form)
    ok("add-rater", "-p", "q1", "q1", "fay")  # both, the same project
    assert [r.rater for r in juge.label_status("q1", db_url=db_url).raters] == ["dan", "eve", "fay"]
    ok("rotate-link", "q1", "dan")
    ok("revoke-rater", "-p", "q1", "eve")
    clash = runner.invoke(app, ["label", "add-rater", "q1", "gus", "-p", "q2", "--db-url", db_url])
    assert clash.exit_code != 0 and isinstance(clash.exception, InputError)
    too_many = runner.invoke(app, ["label", "add-rater", "q1", "gus", "extra", "--db-url", db_url])
    assert too_many.exit_code == 2
    runs = tmp_path / "runs.db"
    with Store(runs) as store:
        run_id = store.create_run(dataset_hash="h", juge_version="t", cases=cases)
        store.save_judgment(
            run_id, Judgment(item_id=cases[0].id, judge="j", model="m", template="t", verdict="PASS", outcome="ok")
        )
    assert "Attached 1" in ok("attach-run", "-p", "pf", run_id, "--db", str(runs))  # -p PROJECT RUN_ID
    assert "Attached 1" in ok("attach-run", "pf", run_id, "--db", str(runs))  # PROJECT RUN_ID
    for command in ("status", "release", "disagreements"):
        assert ok(command, "pf") == ok(command, "-p", "pf") == ok(command, "--project", "pf")


def test_each_label_command_calls_one_api_function_and_nothing_below_it() -> None:
    """The command module reaches the store only through juge.label.api: one function per command."""
    import ast

    import juge.commands.label as commands

    tree = ast.parse(Path(commands.__file__).read_text(encoding="utf-8"))
    below = ("juge.label.db", "juge.label.review", "juge.label.app", "juge.store", "sqlalchemy", "uvicorn")
    seen = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            assert not node.module.startswith(below), f"commands/label.py imports {node.module}"
        if isinstance(node, ast.FunctionDef) and node.name.endswith("_command"):
            called = [
                alias.name
                for sub in ast.walk(node)
                if isinstance(sub, ast.ImportFrom) and sub.module == "juge.label.api"
                for alias in sub.names
            ]
            seen[node.name] = called
    assert len(seen) == 10 and all(len(called) == 1 for called in seen.values()), seen
