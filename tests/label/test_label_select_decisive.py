"""juge label init --select decisive: the cases that would settle something drawn more often, every case with a
positive chance, the chances recorded; juge estimate --selection weights each label by 1 / its chance."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from test_label_selection import store_run
from typer.testing import CliRunner

import juge
from cli_helpers import juge_main as app
from juge.data.records import Case, HumanLabel
from juge.errors import InputError
from juge.label.selection import DECISIVE_WEIGHT, decisive_reasons, inclusion_probabilities, select_cases
from juge.policy.decision import still_open
from juge.runs.judge_signals import JudgeSignals, judge_signals
from label_helpers import write_cases, write_rubric


def test_inclusion_probabilities_add_up_to_the_budget_and_cap_at_one():
    pi = inclusion_probabilities([4.0] * 5 + [1.0] * 95, 50)
    # 4c * 5 + 95c = 50 gives 4c > 1: the five are drawn for sure, the other 45 spread over 95.
    assert pi[:5] == [1.0] * 5 and pi[5] == pytest.approx(45 / 95)
    assert sum(pi) == pytest.approx(50)
    pi = inclusion_probabilities([4.0] * 10 + [1.0] * 90, 26)
    assert pi[0] == pytest.approx(4 * pi[-1]) and pi[-1] == pytest.approx(0.2) and sum(pi) == pytest.approx(26)


def test_still_open():
    assert still_open(too_few="3 judged items (< 10)", low=0.1, high=0.2, margin=0.05).startswith("too few")
    assert "still holds -0.05" in still_open(too_few=None, low=-0.10, high=0.01, margin=0.05)
    assert still_open(too_few=None, low=-0.04, high=0.05, margin=0.05) is None  # within the margin: judge
    assert still_open(too_few=None, low=-0.3, high=-0.06, margin=0.05) is None  # clearly below: person
    assert still_open(too_few=None, low=None, high=None, margin=0.05) is None


def test_decisive_reasons_read_the_policy_s_open_categories_and_the_judge_s_signals():
    cases = [Case(id=f"{c}{k}", question="q", output_1="a", output_2="b", category=c) for c in "wxyz" for k in
             range(3)]  # fmt: skip
    interval = SimpleNamespace
    policy = SimpleNamespace(
        margin=0.05,
        categories={
            "w": SimpleNamespace(too_few="4 judged items (< 10)", difference=None),
            "x": SimpleNamespace(too_few=None, difference=interval(low=-0.2, high=0.1)),
            "y": SimpleNamespace(too_few=None, difference=interval(low=-0.01, high=0.1)),
        },
    )
    signals = JudgeSignals(run_id="r", order_dependent={"y0"}, near_threshold={"z1"}, threshold=7.0)
    reasons = decisive_reasons(cases, signals, policy)  # type: ignore[arg-type]
    flagged = {i for i, r in reasons.items() if r}
    assert flagged == {"w0", "w1", "w2", "x0", "x1", "x2", "y0", "z1"}
    assert "order of the answers" in reasons["y0"][0] and "threshold 7" in reasons["z1"][0]


def test_judge_signals_of_a_pairwise_and_a_score_run(tmp_path: Path):
    pairs = [Case(id=f"p{k}", question="q", output_1="a", output_2="b") for k in range(3)]
    # In order 21 the letters are swapped: A then B is the same verdict; A then A changed with the order.
    verdicts = {"p0": {"12": "A", "21": "B"}, "p1": {"12": "A", "21": "A"}, "p2": {"12": "C", "21": "C"}}
    assert judge_signals("r1", db=store_run(tmp_path / "p.db", verdicts, pairs)).order_dependent == {"p1"}
    scored = [Case(id=f"s{k}", question="q", output="o") for k in range(4)]
    run = store_run(tmp_path / "s.db", {"s0": 6, "s1": 7, "s2": 9, "s3": 3}, scored, config={"min_score": 7})
    signals = judge_signals("r1", db=run)
    assert signals.near_threshold == {"s0", "s1"} and signals.threshold == 7
    assert signals.passes == {"s0": 0.0, "s1": 1.0, "s2": 1.0, "s3": 0.0}
    assert judge_signals("r1", db=run, threshold=3).near_threshold == {"s3"}


def test_decisive_selection_records_every_drawn_case_s_chance():
    cases = [Case(id=f"c{k}", question="q", output="o", category="a") for k in range(200)]
    signals = JudgeSignals(run_id="r", passes={c.id: 1.0 for c in cases}, near_threshold={f"c{k}" for k in range(40)},
                           threshold=7.0)  # fmt: skip
    picked, selection = select_cases(cases, method="decisive", budget=40, seed=2, signals=signals)
    assert selection.allocation == "decisive" and selection.run_id == "r"
    rows = {s.stratum: s for s in selection.strata}
    # 40 decisive cases weighted 4, 160 others 1: c = 40 / 320, chances 0.5 and 0.125.
    assert (rows["decisive"].population, rows["decisive"].probability) == (40, 0.5)
    assert (rows["other"].population, rows["other"].probability) == (160, 0.125)
    assert rows["decisive"].selected + rows["other"].selected == len(picked)
    assert selection.probabilities == {c.id: c.meta["juge_selection"]["probability"] for c in picked}
    near = [c for c in picked if c.meta["juge_selection"]["stratum"] == "decisive"]
    assert near and all("threshold" in c.meta["juge_selection"]["reasons"][0] for c in near)
    with pytest.raises(InputError, match="--run"):
        select_cases(cases, method="decisive", budget=40)
    assert DECISIVE_WEIGHT == 4.0
    # A PASS/FAIL run alone flags nothing: one stratum, every chance budget / cases, and the why says so (it
    # described a 4-to-1 weighting that did not happen).
    plain = JudgeSignals(run_id="r", passes={c.id: 1.0 for c in cases})
    picked, selection = select_cases(cases, method="decisive", budget=40, seed=2, signals=plain)
    assert [(s.stratum, s.probability) for s in selection.strata] == [("other", 0.2)]
    assert f"{DECISIVE_WEIGHT:g} times" not in selection.why and "--plan" in selection.why


def test_label_init_decisive_then_estimate_weights_each_label(tmp_path: Path):
    """A score run where the judge is unreliable near its threshold: decisive labels over-sample those cases; the
    estimate with the selection is weighted (and near the truth), the same labels read as a random sample lean."""
    rng = np.random.default_rng(9)
    cases, scores, truth = [], {}, {}
    for k in range(600):
        item = f"c{k}"
        near = k % 3 == 0
        truth[item] = bool(rng.random() < (0.5 if near else 0.8))
        right = rng.random() < (0.6 if near else 0.95)
        passes = truth[item] if right else not truth[item]
        scores[item] = (7 if passes else 6) if near else (9 if passes else 2)
        cases.append(Case(id=item, question="q", output="o", category="a" if k < 300 else "b"))
    run_db = store_run(tmp_path / "j.db", scores, cases, config={"min_score": 7})
    path = write_cases(tmp_path / "cases.jsonl", cases)
    rubric = write_rubric(tmp_path / "rubric.toml")
    init = tmp_path / "init.json"
    res = CliRunner().invoke(
        app,
        ["label", "init", "p", "--cases", str(path), "--task", "passfail", "--rubric", str(rubric),
         "--db-url", f"sqlite:///{tmp_path / 'labels.db'}", "--select", "decisive", "--budget", "150",
         "--run", "r1", "--run-db", str(run_db), "--json", str(init)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    sel = json.loads(init.read_text())["selection"]
    assert sel["method"] == "decisive" and sel["run_id"] == "r1"
    rows = {s["stratum"]: s for s in sel["strata"]}
    assert rows["decisive"]["population"] == 200 and rows["decisive"]["probability"] == pytest.approx(4 * 150 / 1200)
    drawn = sel["probabilities"]
    assert len(drawn) == rows["decisive"]["selected"] + rows["other"]["selected"]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(HumanLabel(item_id=i, rater_id="r", label="PASS" if truth[i] else "FAIL")
                              .model_dump_json() + "\n" for i in drawn))  # fmt: skip
    result = juge.estimate("r1", labels, db=run_db, selection=init)
    assert result.weighting == "inverse-probability" and result.recommended == "ppi++"
    assert any("inverse of its chance" in n for n in result.notes)
    rate = np.mean(list(truth.values()))
    assert result.ppi.low <= rate <= result.ppi.high
    plain = juge.estimate("r1", labels, db=run_db)
    assert plain.weighting is None
    assert plain.human_only.value < result.human_only.value - 0.04  # unweighted, it leans to the near cases' 0.5
    # CLI: the table says the labels are weighted, --json has the weighting.
    res = CliRunner().invoke(app, ["estimate", "--run", "r1", "--labels", str(labels), "--db", str(run_db),
                                   "--selection", str(init), "--json", str(tmp_path / "e.json")])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "e.json").read_text())["weighting"] == "inverse-probability"
    assert "weighted by 1 / its chance" in res.output
    # A label on a case the selection did not draw is refused, and so is a run of more cases than it drew from.
    extra = next(i for i in truth if i not in drawn)
    with labels.open("a") as out:
        out.write(HumanLabel(item_id=extra, rater_id="r", label="PASS").model_dump_json() + "\n")
    with pytest.raises(InputError, match="no recorded chance"):
        juge.estimate("r1", labels, db=run_db, selection=init)
    small = json.loads(init.read_text())
    small["selection"]["population"] = 500
    init.write_text(json.dumps(small))
    with pytest.raises(InputError, match="drew from 500"):
        juge.estimate("r1", labels, db=run_db, selection=init)


def test_label_init_decisive_favours_the_open_categories_of_a_policy_on_the_sample(tmp_path: Path, sample_dir: Path):
    """The MT-Bench sample's policy: the categories whose paired interval still holds -margin are open, and their
    items are drawn 4 times as often as those of the settled ones."""
    items, calls = sample_dir / "items.jsonl", sample_dir / "judgments.jsonl"
    runner = CliRunner()
    policy = tmp_path / "policy.json"
    res = runner.invoke(app, ["policy", "derive", "--items", str(items), "--judgments", str(calls), "--db",
                              str(tmp_path / "j.db"), "-o", str(tmp_path / "P.md"), "--json", str(policy),
                              "--resamples", "200"])  # fmt: skip
    assert res.exit_code == 0, res.output
    derived = json.loads(policy.read_text())
    open_now = {
        c for c, row in derived["categories"].items()
        if still_open(too_few=row.get("too_few"), low=row["difference"]["low"], high=row["difference"]["high"],
                      margin=derived["margin"])
    }  # fmt: skip
    assert open_now and open_now != set(derived["categories"])  # some open, some settled
    res = runner.invoke(
        app,
        ["label", "init", "p", "--cases", str(items), "--task", "pairwise", "--rubric",
         str(write_rubric(tmp_path / "rubric.toml")), "--db-url", f"sqlite:///{tmp_path / 'labels.db'}",
         "--select", "decisive", "--budget", "60", "--policy", str(policy), "--json", "-"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    sel = json.loads(res.output)["selection"]
    rows = {s["stratum"]: s for s in sel["strata"]}
    assert rows["decisive"]["probability"] == pytest.approx(4 * rows["other"]["probability"])
    assert rows["other"]["probability"] > 0
    from juge.data.adapters import read_pairwise_items

    category = {c.id: c.category for c in read_pairwise_items(items, baseline_fields=()).full_cases()}
    assert rows["decisive"]["population"] == sum(1 for c in category.values() if c in open_now)
    assert all((category[i] in open_now) == (p == rows["decisive"]["probability"]) for i, p in
               sel["probabilities"].items())  # fmt: skip


def test_label_init_decisive_reads_the_open_categories_of_juge_plan(tmp_path: Path, sample_dir: Path):
    """`juge plan --json` on the sample: the categories it does not find settled now (more items needed) are the
    decisive ones, not those on the margin (no labels would settle them); the others keep a quarter of the chance."""
    items, calls = sample_dir / "items.jsonl", sample_dir / "judgments.jsonl"
    runner = CliRunner()
    plan = tmp_path / "plan.json"
    res = runner.invoke(app, ["plan", "--items", str(items), "--judgments", str(calls), "--db", str(tmp_path / "j.db"),
                              "--reps", "200", "--json", str(plan)])  # fmt: skip
    assert res.exit_code == 0, res.output
    # The plan's next step is the command below, reading this very file.
    assert f"--select decisive --budget N --plan {plan} " in res.output
    decisions = [d for d in json.loads(plan.read_text())["decisions"] if d["category"] != "(overall)"]
    open_now = {d["category"] for d in decisions if not d["on_margin"] and (d["n_more"] is None or d["n_more"] > 0)}
    # Coding needs more items; roleplay and writing sit on the margin: no number of labels would settle them.
    assert "coding" in open_now and not {"roleplay", "writing"} & open_now
    assert {d["category"] for d in decisions if d["on_margin"]} >= {"roleplay", "writing"}
    res = runner.invoke(
        app,
        ["label", "init", "p", "--cases", str(items), "--task", "pairwise", "--rubric",
         str(write_rubric(tmp_path / "rubric.toml")), "--db-url", f"sqlite:///{tmp_path / 'labels.db'}",
         "--select", "decisive", "--budget", "60", "--plan", str(plan), "--json", "-"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    sel = json.loads(res.output)["selection"]
    from juge.data.adapters import read_pairwise_items

    category = {c.id: c.category for c in read_pairwise_items(items, baseline_fields=()).full_cases()}
    rows = {s["stratum"]: s for s in sel["strata"]}
    assert rows["decisive"]["population"] == sum(1 for c in category.values() if c in open_now)
    if len(open_now) < len(decisions):
        assert rows["decisive"]["probability"] == pytest.approx(4 * rows["other"]["probability"])
    res = runner.invoke(app, ["label", "init", "q", "--cases", str(items), "--task", "pairwise", "--rubric",
                              str(tmp_path / "rubric.toml"), "--db-url", f"sqlite:///{tmp_path / 'labels.db'}",
                              "--select", "decisive", "--budget", "60", "--plan", str(tmp_path / "P.md")])  # fmt: skip
    assert res.exit_code == 2
    # Another JSON given as the plan (a run's --json, a --width plan): refused naming the file and what is missing.
    other = tmp_path / "run.json"
    other.write_text(json.dumps({"run_id": "r1", "probability": 0.8}), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        juge.label_init("r", cases=items, task="pairwise", rubric=tmp_path / "rubric.toml",
                        db_url=f"sqlite:///{tmp_path / 'labels.db'}", select="decisive", budget=60, plan=other)  # fmt: skip
    assert exc.value.path == str(other) and exc.value.field == "decisions"


def test_recorded_calls_give_the_order_dependent_pairs(tmp_path: Path, sample_dir: Path):
    """--judgments FILE (the sample's recorded calls) instead of a run: a pair is order-dependent when the judge's
    letters, put back in the fixed order, differ (counted here from the file itself)."""
    from juge.runs.judge_signals import recorded_signals

    calls = sample_dir / "judgments.jsonl"
    letters: dict[str, dict[str, str]] = {}
    for line in calls.read_text().splitlines():
        c = json.loads(line)
        if c["judge"] == "chat-strong" and c["prompt"] == "pair-v2" and c["outcome"] == "ok":
            fixed = {"A": "A", "B": "B", "C": "C"} if c["order"] == "12" else {"A": "B", "B": "A", "C": "C"}
            letters.setdefault(c["item_id"], {})[c["order"]] = fixed[c["letter"]]
    expected = {i for i, by in letters.items() if len(by) == 2 and by["12"] != by["21"]}
    signals = recorded_signals(calls, judge="chat-strong/pair-v2")
    assert signals.order_dependent == expected and 0 < len(expected) < 60
    assert signals.run_id is None and signals.source.startswith("--judgments")
    assert len(recorded_signals(calls).order_dependent) > len(expected)  # every judge and prompt
    with pytest.raises(InputError, match="no recorded call of judge 'nobody'"):
        recorded_signals(calls, judge="nobody")
    items = sample_dir / "items.jsonl"
    base = ["label", "init", "--cases", str(items), "--task", "pairwise", "--rubric",
            str(write_rubric(tmp_path / "rubric.toml")), "--db-url", f"sqlite:///{tmp_path / 'labels.db'}",
            "--select", "decisive", "--budget", "40"]  # fmt: skip
    runner = CliRunner()
    res = runner.invoke(app, [*base, "p", "--judgments", str(calls), "--judge", "chat-strong/pair-v2", "--json", "-"])
    assert res.exit_code == 0, res.output
    rows = {s["stratum"]: s for s in json.loads(res.output)["selection"]["strata"]}
    assert rows["decisive"]["population"] == len(expected)
    assert runner.invoke(app, [*base, "q", "--judgments", str(calls), "--run", "r1"]).exit_code == 2
    assert runner.invoke(app, [*base, "q", "--judge", "chat-strong", "--plan", str(calls)]).exit_code == 2


@pytest.mark.parametrize("chance", [7, 0, -0.5, float("inf")])
def test_a_hand_edited_chance_outside_zero_to_one_is_refused(chance):
    """1 / chance weights a label: a chance of 7 or 0 (or 1e-300, a pass rate of 1e299) is no draw's."""
    from juge.runs.corrected_run import selection_estimator

    selection = {"method": "decisive", "population": 2, "probabilities": {"a": 0.5, "b": chance}}
    with pytest.raises(InputError, match="probabilities.b"):
        selection_estimator(selection, {"a": "x", "b": "x"}, {"a": 1.0, "b": 0.0})
    assert selection_estimator({**selection, "probabilities": {"a": 0.5, "b": 1}}, {}, {}).inclusion["b"] == 1.0
