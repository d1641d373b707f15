"""The weekly audit closed (issue 24 item 3): audit-sample records each draw in the policy file and sends the items,
never the verdicts, to a blind labelling project; `juge audit status` reads the labels back per week, with the
anytime-valid drift test (tests/stats/test_stats_sequential.py checks the test itself)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli_helpers import run_cli, write_jsonl
from juge.cli import app
from juge.data.records import Case, HumanLabel, Judgment
from juge.label.audit import audit_sample, audit_status
from juge.label.db import LabelStore
from juge.policy.audit_status import audit_figures
from juge.policy.results import AuditRecord, PolicyResult
from juge.store import Store

RUBRIC = 'name = "helpfulness"\ndescription = "Which answer helps the user more."\n'
MONDAY = datetime(2026, 11, 2, 9, tzinfo=UTC)  # ISO week 2026-W45


def juge(*args: object) -> object:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "300"})


def dev_item(k: int) -> dict:
    return {
        "item_id": f"i{k}",
        "question_id": k,
        "category": "writing",
        "split": "dev",
        "question": "q",
        "answer_1": "a",
        "answer_2": "bb",
        "reference": None,
        "human_ratings": [{"rater_id": "r1", "label": "A"}, {"rater_id": "r2", "label": "A"}],
    }


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    """A pairwise policy whose judge decides `writing` (people agree 100 %: bar 1 - margin), and a run of 40 new
    items the judge called A in both orders."""
    items = write_jsonl(tmp_path / "items.jsonl", [dev_item(k) for k in range(32)])
    calls = write_jsonl(
        tmp_path / "judgments.jsonl",
        [
            {"item_id": f"i{k}", "judge": "strong", "model": "m", "prompt": "p", "order": o,
             "letter": "A" if o == "12" else "B", "outcome": "ok", "text": "x"}
            for k in range(32)
            for o in ("12", "21")
        ],
    )  # fmt: skip
    policy = tmp_path / "policy.json"
    res = juge("policy", "derive", "--items", items, "--judgments", calls, "--db", tmp_path / "j.db",
               "-o", tmp_path / "P.md", "--json", policy, "--resamples", "100")  # fmt: skip
    assert res.exit_code == 0, res.output
    db = tmp_path / "runs.db"
    with Store(db) as store:
        cases = [
            Case(id=f"w{k}", category="writing", question=f"question {k}", output_1="a", output_2="bb")
            for k in range(40)
        ]
        store.create_run(dataset_hash="h", juge_version="t", cases=cases, run_id="r")
        for k in range(40):
            for order, letter in (("12", "A"), ("21", "B")):
                store.save_judgment(
                    "r",
                    Judgment(item_id=f"w{k}", judge="strong", model="m", template="p", order=order,
                             text=f"JUDGE-TEXT-{k}", verdict=letter, outcome="ok"),
                )  # fmt: skip
    rubric = tmp_path / "rubric.toml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    return {"policy": policy, "db": db, "rubric": rubric, "tmp": tmp_path}


def label_all(db: Path, project: str, label: str) -> int:
    """One rater labels every item handed to them with ``label`` (pairs: in the fixed order)."""
    store = LabelStore(f"sqlite:///{db}")
    proj = store.project(project)
    names = {r["rater"] for r in store.rater_counts(proj)}
    name = f"rater{len(names)}"
    store.add_rater(proj, name)
    rater = store.rater(proj, name)
    n = 0
    while (a := store.next_assignment(rater)) is not None:
        store.save_label(rater, a.id, label, shown_order="12")
        n += 1
    store.close()
    return n


def test_audit_sample_feeds_a_blind_project_and_status_reads_it_back(setup: dict[str, Path]) -> None:
    policy, db, rubric = setup["policy"], setup["db"], setup["rubric"]
    first = audit_sample(policy, "r", db=db, n=10, seed=1, label_project="audit", rubric=rubric, drawn_at=MONDAY)
    assert first.recorded and first.week == "2026-W45" and first.label_items_added == 10
    second = audit_sample(policy, "r", db=db, n=10, seed=2, label_project="audit", drawn_at=MONDAY + timedelta(7))
    again = len({d.item_id for d in first.sample} & {d.item_id for d in second.sample})
    assert second.week == "2026-W46" and second.label_items_added == 10 - again
    # the policy file keeps both draws (outside its hash: it still loads) with the judge's verdicts
    document = PolicyResult.load(policy)
    assert [a.week for a in document.audits] == ["2026-W45", "2026-W46"]
    assert {i.verdict for a in document.audits for i in a.items} == {"A"}
    # blind: the label store holds the items, and no verdict or judge text at all
    store = LabelStore(f"sqlite:///{db}")
    proj = store.project("audit")
    table = store.item_table(proj)
    assert len(table) == 20 - again
    dump = json.dumps(table, default=str)
    assert "JUDGE-TEXT" not in dump and '"verdict"' not in dump
    with store.engine.connect() as c:
        assert c.exec_driver_sql("SELECT COUNT(*) FROM label_judge_verdicts").scalar() == 0
    store.close()

    status = audit_status(policy, db_url=f"sqlite:///{db}")
    assert status.outcome == "too few labels yet" and status.overall.n_items == 0
    assert [b.n_labelled for b in status.batches] == [0, 0]

    assert label_all(db, "audit", "A") >= 20 - again  # people agree with the judge everywhere
    status = audit_status(policy, db_url=f"sqlite:///{db}")
    writing = status.categories["writing"]
    assert writing.agreement.value == 1.0 and writing.n_items == 20 - again
    assert writing.ceiling == 1.0 and writing.bar == pytest.approx(1.0 - writing.margin)
    assert [w.week for w in writing.weeks] == ["2026-W45", "2026-W46"]
    assert [w.n_items for w in writing.weeks] == [10, 10 - again]
    # 1.0 on under 20 items cannot yet show a 0.95 bar is cleared; it says how many would
    assert status.outcome == "too few labels yet" and status.overall.items_to_decide > status.overall.n_items

    res = juge("audit", "status", policy, "--db", db, "--json", setup["tmp"] / "status.json")
    assert res.exit_code == 0, res.output
    data = json.loads((setup["tmp"] / "status.json").read_text())
    assert data["outcome"] == "too few labels yet" and data["categories"]["writing"]["n_items"] == 20 - again


def test_a_judge_people_disagree_with_is_drifted_exit_1(setup: dict[str, Path]) -> None:
    policy, db, rubric = setup["policy"], setup["db"], setup["rubric"]
    res = juge("audit-sample", "--policy", policy, "--run", "r", "--db", db, "-n", "30", "--seed", "3",
               "--label-project", "weekly", "--rubric", rubric)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "30 items added to labelling project weekly" in res.output
    label_all(db, "weekly", "B")
    res = juge("audit", "status", policy, "--db", db, "--json", setup["tmp"] / "s.json",
               "--junit", setup["tmp"] / "audit.xml")  # fmt: skip
    assert res.exit_code == 1, res.output
    data = json.loads((setup["tmp"] / "s.json").read_text())
    assert data["outcome"] == "drifted" and data["categories"]["writing"]["agreement"]["value"] == 0.0
    assert data["overall"]["drifted_in"] == data["batches"][0]["week"]
    # For CI: a failure per drifted category and for all of them (issue 28).
    from junitparser import Failure, JUnitXml

    xml = JUnitXml.fromfile(str(setup["tmp"] / "audit.xml"))
    failed = {c.name for s in xml for c in s if any(isinstance(r, Failure) for r in c.result)}
    assert failed == {"writing", "all categories"} and xml.tests == 2


def test_a_new_project_needs_a_rubric_and_nothing_is_recorded(setup: dict[str, Path], monkeypatch, capsys) -> None:
    policy, db = setup["policy"], setup["db"]
    before = policy.read_text()
    args = ("audit-sample", "--policy", str(policy), "--run", "r", "--db", str(db), "--label-project", "new")
    code, _, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2 and "--rubric" in err
    assert policy.read_text() == before


def _weekly_records(weeks: int, per_week: int) -> list[dict]:
    return [
        {"drawn_at": f"w{w}", "week": f"2026-W{w + 1:02d}", "run_id": "r", "seed": w, "label_project": "p",
         "items": [{"item_id": f"{w}-{i}", "category": "writing", "verdict": "A"} for i in range(per_week)]}
        for w in range(weeks)
    ]  # fmt: skip


@pytest.mark.parametrize("drop", [0.0, 0.15])
def test_status_on_a_scripted_half_year(setup: dict[str, Path], drop: float) -> None:
    """26 weekly draws of 50 items; the judge agrees with the one person at its bar + 0.05 until week 9, then
    ``drop`` less: the command's figures give the simulation's outcome."""
    policy = PolicyResult.load(setup["policy"])
    bar = float(policy.categories["writing"].ceiling.value) - float(policy.margin)  # type: ignore[union-attr]
    records = _weekly_records(26, 50)
    rng = np.random.default_rng(4)
    labels = []
    for w, rec in enumerate(records):
        p = bar + 0.05 - (drop if w >= 8 else 0.0)
        for item in rec["items"]:
            agree = rng.random() < min(p, 1.0)
            labels.append(HumanLabel(item_id=item["item_id"], rater_id="ann", label="A" if agree else "B"))
    audited = policy.model_copy(update={"audits": [AuditRecord.model_validate(r) for r in records]})
    status = audit_figures(audited, {"p": labels})
    assert len(status.overall.weeks) == 26 and status.overall.n_items == 26 * 50
    if drop:
        assert status.outcome == "drifted" and status.overall.drifted_in >= "2026-W09"
    else:
        assert status.outcome == "holding" and status.overall.agreement.low >= bar


def _two_category_policy(kind: str = "pairwise", threshold: float | None = None) -> PolicyResult:
    from juge.policy.file import policy_hash

    ceiling = {"value": 0.8, "low": 0.7, "high": 0.9, "n": 200}
    body = {
        "kind": "juge-policy", "format": 1, "schema_version": 3, "judge_kind": kind, "rule": "margin",
        "margin": 0.05, "judge": "j/t", "templates_by_category": {"math": "j/t", "code": "j/t"},
        "categories": {c: {"decision": "judge", "reason": "r", "ceiling": ceiling} for c in ("math", "code")},
        **({"threshold": threshold} if threshold is not None else {}),
    }  # fmt: skip
    return PolicyResult.model_validate({**body, "policy_hash": policy_hash(body)})


def test_one_drifting_category_of_two_is_named_and_the_level_is_split() -> None:
    policy = _two_category_policy()
    records, labels = [], []
    rng = np.random.default_rng(1)
    for w in range(10):
        items = [{"item_id": f"{c}{w}-{i}", "category": c, "verdict": "A"} for c in ("math", "code") for i in range(40)]
        records.append({"drawn_at": f"w{w}", "week": f"2026-W{w + 10}", "run_id": "r", "seed": w,
                        "label_project": "p", "items": items})  # fmt: skip
        for it in items:
            p = 0.3 if it["category"] == "code" and w >= 3 else 0.85
            labels.append(HumanLabel(item_id=it["item_id"], rater_id="ann", label="A" if rng.random() < p else "B"))
    audited = policy.model_copy(update={"audits": [AuditRecord.model_validate(r) for r in records]})
    status = audit_figures(audited, {"p": labels}, alpha=0.05)
    assert status.outcome == "drifted" and "code" in status.reason
    assert status.categories["code"].outcome == "drifted" and status.categories["math"].outcome != "drifted"
    assert status.categories["code"].level == pytest.approx(0.05 / 4) and status.overall.level == pytest.approx(0.025)
    assert status.categories["code"].drifted_in >= "2026-W13"


@pytest.mark.parametrize(
    ("kind", "threshold", "verdict", "label", "expected"),
    [
        ("passfail", None, "PASS", "pass", True),
        ("passfail", None, "FAIL", "PASS", False),
        ("passfail", None, "PASS", "maybe", None),
        ("pairwise", None, "inconsistent", "tie", True),
        ("pairwise", None, "B", "A", False),
        ("score", 4, "5", "4", True),  # both pass at the threshold
        ("score", 4, "3", "4", False),
        ("score", 4, "x", "4", None),
    ],
)
def test_agreement_is_measured_as_the_policy_was(kind, threshold, verdict, label, expected) -> None:
    from juge.policy.audit_status import agrees

    assert agrees(_two_category_policy(kind, threshold), verdict, label) is expected


def test_status_json_to_stdout_alone(setup: dict[str, Path], monkeypatch, capsys) -> None:
    audit_sample(setup["policy"], "r", db=setup["db"], n=5, seed=1, label_project="a", rubric=setup["rubric"])
    code, out, err = run_cli(monkeypatch, capsys, "audit", "status", str(setup["policy"]), "--db", str(setup["db"]),
                             "--json", "-")  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["outcome"] == "too few labels yet" and data["batches"][0]["n_items"] == 5


def test_the_same_draw_shown_twice_is_recorded_once(setup: dict[str, Path]) -> None:
    for _ in range(2):
        audit_sample(setup["policy"], "r", db=setup["db"], n=5, seed=7, drawn_at=MONDAY)
    audit_sample(setup["policy"], "r", db=setup["db"], n=5, seed=8, drawn_at=MONDAY)
    assert [a.seed for a in PolicyResult.load(setup["policy"]).audits] == [7, 8]


def test_a_project_of_another_task_is_refused_before_anything_is_recorded(
    setup: dict[str, Path], monkeypatch, capsys
) -> None:
    store = LabelStore(f"sqlite:///{setup['db']}")
    from juge.label.rubric import read_rubric

    rubric = setup["tmp"] / "score.toml"
    rubric.write_text('name = "q"\ndescription = "d"\nlevels = { 1 = "bad", 2 = "ok" }\n', encoding="utf-8")
    store.create_project("scores", "score", read_rubric(rubric, "score"), [Case(id="x", output="y")])
    store.close()
    before = setup["policy"].read_text()
    args = ("audit-sample", "--policy", str(setup["policy"]), "--run", "r", "--db", str(setup["db"]),
            "--label-project", "scores")  # fmt: skip
    code, _, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2 and "score project" in err and "pairwise" in err
    assert setup["policy"].read_text() == before
