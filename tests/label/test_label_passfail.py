"""PASS/FAIL projects: one spelling (PASS/FAIL) for people, judges and the export, so only real
disagreements are listed and the export feeds `juge calibrate` as it is."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from juge.cli import app
from juge.data.records import Judgment
from juge.label.app import create_app
from juge.label.db import LabelStore
from juge.label.review import status
from juge.store import Store
from label_helpers import hidden, read_jsonl, score_case, shown_item, sign_in, write_cases

PEOPLE = {0: "PASS", 1: "PASS", 2: "FAIL", 3: "FAIL"}  # what the rater gives item i
JUDGE = {0: "PASS", 1: "FAIL", 2: "FAIL", 3: "FAIL"}  # the judge disagrees on item 1 only

RUBRIC = 'name = "faithful"\ndescription = "Every claim is supported by the context."\n'


def make_passfail_run(path: Path, cases: list) -> str:
    with Store(path) as runs:
        run_id = runs.create_run(dataset_hash="h", juge_version="t", cases=cases)
        for i, case in enumerate(cases):
            runs.save_judgment(
                run_id,
                Judgment(
                    item_id=case.id,
                    judge="faithful",
                    model="m",
                    template="t",
                    text=JUDGE[i],
                    verdict=JUDGE[i],
                    outcome="ok",
                ),
            )
    return run_id


def test_passfail_labels_compare_with_the_judge_and_export_for_calibrate(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'labels.db'}"
    cases = [score_case(i) for i in range(4)]
    cases_path = write_cases(tmp_path / "cases.jsonl", cases)
    (tmp_path / "r.toml").write_text(RUBRIC, encoding="utf-8")
    runner = CliRunner()

    def juge(*args: str):  # noqa: ANN202
        result = runner.invoke(app, list(args), env={"COLUMNS": "300"})
        assert result.exit_code == 0, (result.output, result.exception)
        return result

    juge(
        "label",
        "init",
        "--cases",
        str(cases_path),
        "--task",
        "passfail",
        "--rubric",
        str(tmp_path / "r.toml"),
        "--name",
        "pf",
        "--overlap",
        "0",
        "--db-url",
        db_url,
    )
    store = LabelStore(db_url)
    project = store.project("pf")
    alice = store.add_rater(project, "alice")
    client = TestClient(create_app(store), follow_redirects=True)
    sign_in(client, alice)
    for _ in range(3):  # three items through the page; the buttons carry PASS/FAIL
        page = client.get("/item").text
        number, _ = shown_item(page)
        assert f'value="{PEOPLE[number]}"' in page
        r = client.post(
            "/label",
            data={"csrf": hidden(page, "csrf"), "assignment": hidden(page, "assignment"), "choice": PEOPLE[number]},
        )
        assert r.status_code == 200
    rater = store.rater(project, "alice")  # the fourth as an earlier version stored it: lower case
    last = store.next_assignment(rater)
    number = int(last.case.id.split("-")[1])
    store.save_label(rater, last.id, PEOPLE[number].lower())

    runs = tmp_path / "runs.db"
    run_id = make_passfail_run(runs, cases)
    juge("label", "attach-run", "pf", run_id, "--db", str(runs), "--db-url", db_url)
    listed = [row["item_id"] for row in store.disagreements(project)]
    assert listed == [cases[1].id]
    assert status(store, project)["disagreements"] == 1

    export = tmp_path / "labels.jsonl"
    juge("label", "export", "pf", "-o", str(export), "--db-url", db_url)
    rows = read_jsonl(export)
    assert sorted((r["item_id"], r["label"]) for r in rows) == [(c.id, PEOPLE[i]) for i, c in enumerate(cases)]

    figures = tmp_path / "cal.json"
    juge("calibrate", "--run", run_id, "--db", str(runs), "--labels", str(export), "--json", str(figures))
    study = json.loads(figures.read_text())
    text = json.dumps(study)
    assert '"passfail"' in text
    assert '"matrix": [[1, 1], [0, 2]]' in text  # people PASS: judge PASS 1, FAIL 1; people FAIL: judge FAIL 2
    store.close()


def test_review_page_shows_the_context_and_source_but_not_meta(tmp_path: Path) -> None:
    """An adjudicator deciding faithfulness needs the facts the raters saw; model names stay hidden."""
    from juge.judges.rubric import Rubric

    store = LabelStore(f"sqlite:///{tmp_path / 'labels.db'}")
    case = score_case(0).model_copy(
        update={
            "context": "FACTS: the Pro plan costs $9 <b>per month</b>.",
            "source": "pricing page v3",
            "meta": {"model": "secret-model-alpha"},
        }
    )
    project = store.create_project(
        "pf", "passfail", Rubric(name="f", description="d"), [case], overlap=1, overlap_raters=2
    )
    tokens = [store.add_rater(project, name, adjudicator=name == "carol") for name in ("alice", "bob", "carol")]
    for token, label in zip(tokens[:2], ("PASS", "FAIL")):
        rater = store.rater_by_token(token)
        store.save_label(rater, store.next_assignment(rater).id, label)
    client = TestClient(create_app(store))
    sign_in(client, tokens[2])
    page = client.get("/adjudicate").text
    assert "raters disagree" in page
    assert "FACTS: the Pro plan costs $9 &lt;b&gt;per month&lt;/b&gt;." in page
    assert "pricing page v3" in page
    assert "secret-model-alpha" not in page
    store.close()
