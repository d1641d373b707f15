"""A panel in an eval file (issue 25): `juge run` calls its members and stores its verdicts as one judge."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import juge
from juge.config import load_eval
from juge.errors import InputError
from juge.store import Store

WORD = {True: "PASS", False: "FAIL"}


def _scripted_judge(name: str, verdicts: dict[str, str]) -> str:
    """A [[judges]] table whose scripted provider answers each item's prompt with its given verdict."""
    rules = ", ".join(f'{{ match = "answer {i}\\\\.", text = "{v}\\nReason." }}' for i, v in verdicts.items())
    return (
        f'[[judges]]\nname = "{name}"\nsetup = "passfail"\ndescription = "Is it right?"\nprovider = "scripted"\n'
        f'provider_options = {{ model = "{name}-2026", responses = [{rules}] }}\n'
    )


def _panel_eval(tmp_path: Path, n: int, seed: int = 7, people: float = 0.85) -> tuple[Path, list[dict[str, str]]]:
    """n PASS/FAIL items, three people each right `people` of the time (85 %), three scripted judges each right
    70 %, all errors independent; an eval file with the judges and a majority panel of them."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.5
    ids = [f"i{k}" for k in range(n)]
    (tmp_path / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "group": i, "split": "dev", "question": "q", "output": f"answer {i}."}) + "\n"
            for i in ids
        ),
        "utf-8",
    )
    labels = [
        {"item_id": i, "rater_id": f"r{r}", "label": WORD[bool(truth[k] ^ (rng.random() > people))]}
        for k, i in enumerate(ids)
        for r in range(3)
    ]
    judges = "".join(
        _scripted_judge(name, {i: WORD[bool(truth[k] ^ (rng.random() > 0.7))] for k, i in enumerate(ids)})
        for name in ("a", "b", "c")
    )
    eval_file = tmp_path / "eval.toml"
    eval_file.write_text(
        f'cases = "cases.jsonl"\n{judges}\n[[panels]]\nname = "jury"\nmembers = ["a", "b", "c"]\n'
        '[prices]\n"a-2026" = { input = 1.0, output = 2.0 }\n"b-2026" = { input = 1.0, output = 2.0 }\n'
        '"c-2026" = { input = 1.0, output = 2.0 }\n',
        "utf-8",
    )
    return eval_file, labels


def test_a_panel_of_three_run_live_beats_each_member_and_calibrates_as_one_judge(tmp_path):
    """Majority of three independent judges each right 70 % is right 78.4 % of the time: the panel run by
    `juge run` agrees with the people more than any member, and calibrate reports it as one judge whose members
    are a field. Its tokens and cost are its members' sum, not counted twice in the run's cost; a rerun calls
    nothing and stores nothing new."""
    eval_file, labels = _panel_eval(tmp_path, 300)
    db = tmp_path / "j.db"
    run = juge.run(eval_file, db=db)
    assert run.engine_stats["calls"] == 900  # the members' calls, nothing for the panel
    with Store(db) as store:
        stored = store.judgments(run.run_id)
    panel = [j for j in stored if j.judge == "jury"]
    members = [j for j in stored if j.judge != "jury"]
    assert len(panel) == 300 and {j.template for j in panel} == {"majority"}
    assert panel[0].model == "panel: a/passfail-v1 (a-2026) + b/passfail-v1 (b-2026) + c/passfail-v1 (c-2026)"
    by_item = {j.item_id: j for j in panel}
    for item in ("i0", "i1", "i2"):
        votes = [j.verdict for j in members if j.item_id == item]
        assert by_item[item].verdict == max(set(votes), key=votes.count)  # three PASS/FAIL votes: a majority
        mine = [j for j in members if j.item_id == item]
        assert by_item[item].tokens_in == sum(j.tokens_in for j in mine)
        assert by_item[item].cost == pytest.approx(sum(j.cost for j in mine))
    assert run.summary.cost["judges"] == pytest.approx(sum(j.cost for j in members))  # not counted twice
    assert run.summary.judges["jury"].model == [panel[0].model]
    # The panel's verdict is the case's: a member outvoted neither fails nor passes it.
    assert run.summary.cases_passed == sum(j.verdict == "PASS" for j in panel)
    assert run.summary.cases_failed == sum(j.verdict == "FAIL" for j in panel)

    result = juge.calibrate(run=run.run_id, db=db, labels=labels, resamples=20)
    cal = result.to_dict()
    agreement = {k: v["agreement"]["value"] for k, v in cal["judges"].items()}
    assert set(agreement) == {"a/passfail-v1", "b/passfail-v1", "c/passfail-v1", "jury/majority"}
    assert agreement["jury/majority"] > max(agreement[f"{m}/passfail-v1"] for m in "abc")
    versions = cal["versions"]["judges"]
    assert versions["jury/majority"]["members"] == ["a/passfail-v1", "b/passfail-v1", "c/passfail-v1"]
    assert "members" not in versions["a/passfail-v1"] and result.versions.judges["a/passfail-v1"].members == []

    again = juge.run(eval_file, db=db)
    assert again.engine_stats.get("calls", 0) == 0 and again.stored_now == 0


def test_a_pass_fail_cascade_from_the_panel_to_a_member_routes_live(tmp_path):
    """A PASS/FAIL policy with the panel as its first stage lists the panel's members, and routing calls them
    once: the member a later stage asks again is answered from the cache; a rerun calls nothing."""
    eval_file, labels = _panel_eval(tmp_path, 120, people=0.75)  # people who agree less: the panel may decide
    db = tmp_path / "j.db"
    run = juge.run(eval_file, db=db)
    policy = juge.policy.derive(run=run.run_id, db=db, labels=labels, cascade="jury,a", target=0.5, resamples=20)
    assert policy.judges["jury/majority"].members == ["a/passfail-v1", "b/passfail-v1", "c/passfail-v1"]
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy.to_dict()), encoding="utf-8")
    routed = juge.route(path, eval_file=eval_file, items=tmp_path / "cases.jsonl", db=tmp_path / "r.db")
    assert routed.calls == 3 * 120 and len(routed.runs) >= 1
    again = juge.route(path, eval_file=eval_file, items=tmp_path / "cases.jsonl", db=tmp_path / "r.db")
    assert again.calls == 0
    assert [(d.item_id, d.route, d.stage) for d in again.decisions] == [
        (d.item_id, d.route, d.stage) for d in routed.decisions
    ]

    # A policy whose one judge is the panel: routing calls its members and reads the panel's verdicts.
    alone = juge.policy.derive(run=run.run_id, db=db, labels=labels, judges=["jury"], resamples=20)
    assert alone.judge == "jury/majority"
    path.write_text(json.dumps(alone.to_dict()), encoding="utf-8")
    single = juge.route(path, eval_file=eval_file, items=tmp_path / "cases.jsonl", db=tmp_path / "s.db")
    assert single.calls == 3 * 120
    judged = {d.item_id: d.verdict for d in single.decisions if d.route == "judge"}
    with Store(tmp_path / "s.db") as store:
        panel = {j.item_id: j.verdict for j in store.judgments(single.run_id) if j.judge == "jury"}
    assert judged and all(panel[i] == v for i, v in judged.items())


def test_every_caller_counts_the_panel_for_its_members(tmp_path):
    """The run summary, the run report's failing cases and compare/estimate's run_outcomes agree: on each case
    the panel's verdict stands for its members'."""
    from juge.reports.runs import failing_cases
    from juge.runs.verdicts import run_outcomes

    eval_file, _ = _panel_eval(tmp_path, 40)
    db = tmp_path / "j.db"
    run = juge.run(eval_file, db=db)
    with Store(db) as store:
        row = store.get_run(run.run_id)
        judgments = store.judgments(run.run_id)
        failing = failing_cases(store, run.run_id, run.summary.to_dict())
        outcomes, _ = run_outcomes(store.run_cases(run.run_id), judgments, {}, row["config"], threshold=None)
    panel_fails = {j.item_id for j in judgments if j.judge == "jury" and j.verdict == "FAIL"}
    member_fails = {j.item_id for j in judgments if j.judge != "jury" and j.verdict == "FAIL"}
    assert panel_fails < member_fails  # some case a member failed is passed by the panel
    assert {c["item_id"] for c in failing} == panel_fails == {i for i, o in outcomes.items() if o.verdict == "fail"}
    assert run.summary.cases_failed == len(panel_fails)


def test_a_panel_verdict_is_stored_once_every_member_has_answered(tmp_path):
    """As a resumed run does: a slot a member has not answered yet gets no panel verdict; once it has, the next
    pass stores that one only (and never a second copy)."""
    from juge.runs.panels import store_panel_judgments

    eval_file, _ = _panel_eval(tmp_path, 6)
    db = tmp_path / "j.db"
    run = juge.run(eval_file, db=db)
    config = load_eval(eval_file)
    with Store(db) as store:
        kept = next(j for j in store.judgments(run.run_id) if j.judge == "b" and j.item_id == "i3")
        store.conn.execute("DELETE FROM judgments WHERE run_id = ? AND judge = 'jury'", (run.run_id,))
        store.conn.execute("DELETE FROM judgments WHERE run_id = ? AND judge = 'b' AND item_id = 'i3'", (run.run_id,))
        store.commit()
        assert store_panel_judgments(store, run.run_id, config.panels, config.judges) == 5
        store.save_judgment(run.run_id, kept)
        assert store_panel_judgments(store, run.run_id, config.panels, config.judges) == 1
        assert store_panel_judgments(store, run.run_id, config.panels, config.judges) == 0
        assert sorted(j.item_id for j in store.judgments(run.run_id) if j.judge == "jury") == [
            f"i{k}" for k in range(6)
        ]


@pytest.mark.parametrize(
    ("panel", "field", "words"),
    [
        ('members = ["a", "z"]', "panels[0].members", "no judge 'z'"),
        ('members = ["a", "a"]', "panels[0].members", "named twice"),
        ('members = ["a"]', "panels[0].members", "at least 2"),
        ('members = ["a", "b"]\naggregate = "mean"', "panels[0].aggregate", "mean needs score"),
        ('members = ["a", "b"]\nties = "tie"', "panels[0].ties", "pairwise"),
        ('members = ["a", "b"]\naggregate = "vote"', "panels[0].aggregate", "majority"),
    ],
)
def test_a_bad_panel_names_its_field(tmp_path, panel, field, words):
    judges = _scripted_judge("a", {}) + _scripted_judge("b", {})
    path = tmp_path / "eval.toml"
    path.write_text(f'cases = "c.jsonl"\n{judges}\n[[panels]]\nname = "jury"\n{panel}\n', "utf-8")
    with pytest.raises(InputError) as exc:
        load_eval(path)
    assert words in str(exc.value) and field.split(".")[-1] in str(exc.value)
    assert f"{path}:" in str(exc.value)


def test_a_panel_file_names_its_members_and_runs_as_one_judge(tmp_path):
    """A judge file with [[members]] (one inline, two by file) is a panel: `juge run --cases --judge jury.toml`
    calls its members and stores its verdicts; a bad member names the panel file and the member's key."""
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"i{k}", "question": "q", "output": f"answer i{k}."}) + "\n" for k in range(4)),
        "utf-8",
    )
    verdicts = {"a": "PASS PASS FAIL FAIL", "b": "PASS FAIL PASS FAIL", "c": "PASS FAIL FAIL PASS"}
    tables = {n: _scripted_judge(n, {f"i{k}": v for k, v in enumerate(vs.split())}) for n, vs in verdicts.items()}
    (tmp_path / "judges").mkdir()
    for n in "bc":
        (tmp_path / "judges" / f"{n}.toml").write_text(tables[n].removeprefix("[[judges]]\n"), "utf-8")
    jury = tmp_path / "judges" / "jury.toml"
    jury.write_text(
        'name = "jury"\naggregate = "majority"\n' + tables["a"].replace("[[judges]]", "[[members]]")
        + '[[members]]\nfile = "b.toml"\n[[members]]\nfile = "c.toml"\n',
        "utf-8",
    )  # fmt: skip
    db = tmp_path / "j.db"
    run = juge.run(cases=tmp_path / "cases.jsonl", judges=[jury], db=db)
    with Store(db) as store:
        panel = {j.item_id: j.verdict for j in store.judgments(run.run_id) if j.judge == "jury"}
    assert panel == {"i0": "PASS", "i1": "FAIL", "i2": "FAIL", "i3": "FAIL"}
    assert run.engine_stats["calls"] == 12

    jury.write_text(jury.read_text("utf-8").replace('file = "c.toml"', 'file = "c.toml"\nmodel = "x"'), "utf-8")
    with pytest.raises(InputError) as exc:
        juge.run(cases=tmp_path / "cases.jsonl", judges=[jury], db=db)
    assert str(exc.value).startswith(f"{jury}:") and "members[2]" in str(exc.value)
    # Two members of one name (c.toml given twice): the panel file's member is named, not the run's judge list.
    jury.write_text(jury.read_text("utf-8").replace('file = "c.toml"\nmodel = "x"', 'file = "b.toml"'), "utf-8")
    with pytest.raises(InputError) as exc:
        juge.run(cases=tmp_path / "cases.jsonl", judges=[jury], db=db)
    assert exc.value.field == "members[2].name" and str(exc.value).startswith(f"{jury}:")
    with pytest.raises(InputError, match="a panel file"):
        from juge.judges import load_judge

        load_judge(jury)


@pytest.mark.parametrize("where", ["judge", "panel"])
@pytest.mark.parametrize("char", ["\\u001b[2J", "\\u202e"])
def test_a_name_with_a_control_or_bidi_character_is_refused(tmp_path, where, char):
    """Names are printed as they are (run's headings, runs, policy tables): ESC would drive the terminal, U+202E
    would reverse what follows it."""
    judges = _scripted_judge("a", {}) + _scripted_judge("b", {})
    if where == "judge":
        judges = judges.replace('name = "b"', f'name = "b{char}"')
    panel = f'[[panels]]\nname = "{"jury" + char if where == "panel" else "jury"}"\nmembers = ["a", "b"]\n'
    if where == "judge":
        panel = ""
    path = tmp_path / "eval.toml"
    path.write_text(f'cases = "c.jsonl"\n{judges}\n{panel}', "utf-8")
    with pytest.raises(InputError, match="hidden or control character") as exc:
        load_eval(path)
    assert "name" in str(exc.value) and str(path) in str(exc.value)


def test_a_file_that_is_not_text_is_an_input_error_not_a_traceback(tmp_path):
    """`file = 3` in [[judges]] or in a panel file's [[members]] was joined to a path: a TypeError."""
    path = tmp_path / "eval.toml"
    path.write_text('cases = "c.jsonl"\n[[judges]]\nfile = 3\n', "utf-8")
    with pytest.raises(InputError, match="file must be a path") as exc:
        load_eval(path)
    assert exc.value.line == 3 and exc.value.field == "judges[0].file"
    (tmp_path / "a.toml").write_text(_scripted_judge("a", {}).removeprefix("[[judges]]\n"), "utf-8")
    (tmp_path / "jury.toml").write_text('name = "jury"\n[[members]]\nfile = "a.toml"\n[[members]]\nfile = 3\n', "utf-8")
    path.write_text('cases = "c.jsonl"\n[[judges]]\nfile = "jury.toml"\n', "utf-8")
    with pytest.raises(InputError, match="file must be a path") as exc:
        load_eval(path)
    assert exc.value.field == "members[1].file" and exc.value.line == 5


def test_a_panel_s_splits_are_not_called_a_format_problem(tmp_path):
    """A unanimous panel of three leaves many items unsettled (counted unparsed): the run's warning says its
    members split, not "check the judge's format or model"."""
    eval_file, _ = _panel_eval(tmp_path, 30)
    eval_file.write_text(
        eval_file.read_text("utf-8").replace(
            'members = ["a", "b", "c"]', 'members = ["a", "b", "c"]\naggregate = "unanimous"'
        ),
        "utf-8",
    )
    run = juge.run(eval_file, db=tmp_path / "j.db")
    warning = next(w for w in run.warnings if w.startswith("judge jury:"))
    assert "members do not settle" in warning and "format" not in warning
