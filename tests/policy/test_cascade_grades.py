"""--rule guarantee and --cascade for PASS/FAIL and score judges (issue 25): the per-item confidence
(juge.policy.confidence.item_confidence, the one function derive, test and route call), derived and tested on
studies the test writes (figures by hand in the comments), and a simulation of scripted judges of known accuracy by
confidence over repeated dev/holdout draws."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from grade_data import PASSFAIL_DEV, PASSFAIL_HOLDOUT, SCORE_DEV, SCORE_HOLDOUT, write_study
from typer.testing import CliRunner

from cli_helpers import juge_main as app
from juge.data.records import Judgment
from juge.policy.cascade import cascade_assign, cascade_walk
from juge.policy.confidence import item_confidence, pass_line
from juge.policy.route import route_item
from juge.stats import binomial_upper_bound

runner = CliRunner()
SCALE = [1.0, 2.0, 3.0, 4.0, 5.0]


def juge(*args):
    return runner.invoke(app, [str(a) for a in args])


def call(verdict, *, repeat=0, outcome="ok", distribution=None):
    return Judgment(
        item_id="x", judge="j", model="m", template="t", repeat=repeat, verdict=verdict, outcome=outcome,
        distribution=distribution,
    )  # fmt: skip


# ---- the confidence ------------------------------------------------------------------------------


def test_passfail_confidence_is_the_share_of_repeats_or_the_probability_given():
    assert item_confidence("passfail", "PASS", [call("PASS")]) == 1.0  # one call: no information, 1
    repeats = [call("PASS"), call("PASS", repeat=1), call("FAIL", repeat=2), call(None, repeat=3, outcome="error")]
    assert item_confidence("passfail", "PASS", repeats) == pytest.approx(2 / 4)  # an error backs nothing
    assert item_confidence("passfail", "FAIL", repeats) == pytest.approx(1 / 4)
    logprobs = [
        call("PASS", distribution={"PASS": 0.8, "FAIL": 0.2}),
        call("PASS", distribution={"PASS": 0.6, "FAIL": 0.4}),
    ]
    assert item_confidence("passfail", "PASS", logprobs) == pytest.approx(0.7)
    assert item_confidence("passfail", None, [call("PASS")]) == 0.0


def test_score_confidence_is_the_distance_from_the_pass_line():
    # Threshold 4 on 1-5: the line is 3.5; 1.5 points of room above it, 2.5 below.
    assert pass_line(4, SCALE) == (3.5, 1.0, 5.0)
    by_score = {s: item_confidence("score", s, [call(s)], threshold=4, scale=SCALE) for s in (1, 2, 3, 4, 5)}
    assert by_score == pytest.approx({1: 1.0, 2: 0.6, 3: 0.2, 4: 1 / 3, 5: 1.0})
    # Repeats: a call on the other side of the line backs nothing; the mean over calls.
    calls = [call(5), call(2, repeat=1), call(4, repeat=2)]
    assert item_confidence("score", 5, calls, threshold=4, scale=SCALE) == pytest.approx((1 + 0 + 1 / 3) / 3)
    # Log-probabilities over the scale: the mass on the verdict's side of the threshold.
    dist = {"1": 0.05, "2": 0.05, "3": 0.2, "4": 0.3, "5": 0.4}
    assert item_confidence("score", 4, [call(4, distribution=dist)], threshold=4, scale=SCALE) == pytest.approx(0.7)
    with pytest.raises(ValueError, match="threshold"):
        item_confidence("score", 4, [call(4)])


# ---- PASS/FAIL: --rule guarantee, derived, tested once and routed ------------------------------------------


def _with_repeats(rows, wrong_ids, n_repeats=4):
    """Each call's repeats agree with it, except on ``wrong_ids`` where all of them give the other verdict."""
    out = []
    for case, labels, call_row in rows:
        calls = [call_row]
        if call_row["outcome"] == "ok":
            other = {"PASS": "FAIL", "FAIL": "PASS"}[call_row["verdict"]]
            for r in range(1, n_repeats + 1):
                calls.append(
                    {**call_row, "repeat": r, "verdict": other if case["id"] in wrong_ids else call_row["verdict"]}
                )
        out.append((case, labels, calls))
    return out


def _write(folder, rows):
    write_study(folder, [(c, labs, calls[0]) for c, labs, calls in rows])
    (folder / "judgments.jsonl").write_text("".join(json.dumps(j) + "\n" for _, _, calls in rows for j in calls))


def _wrong(rows):
    """The items where both raters agree and the judge does not."""
    return {c["id"] for c, labs, j in rows if labs[0]["label"] == labs[1]["label"] != j["verdict"]}


def _derive(folder, *extra):
    res = juge("policy", "derive", "--items", folder / "items.jsonl", "--labels", folder / "labels.jsonl",
               "--judgments", folder / "judgments.jsonl", "--db", folder / "j.db", "-o", folder / "P.md",
               "--json", folder / "policy.json", "--resamples", "100", *extra)  # fmt: skip
    assert res.exit_code == 0, res.output
    return json.loads((folder / "policy.json").read_text())


def _test(folder):
    res = juge("policy", "test", "--policy", folder / "policy.json", "--items", folder / "items.jsonl",
               "--labels", folder / "labels.jsonl", "--judgments", folder / "judgments.jsonl", "--db", folder / "j.db",
               "--json", folder / "h.json", "--resamples", "100")  # fmt: skip
    assert res.exit_code in (0, 1), res.output
    return json.loads((folder / "h.json").read_text())


def test_passfail_guarantee_routes_by_agreement_across_repeats(tmp_path):
    """Dev: 72 items with a majority where the judge is right (its 4 repeats agree: confidence 1) and 3 where it
    is wrong (its repeats all disagree: 1/5). At target 0.95, confidence 0.9: threshold 1 covers n=72, k=0, exact
    bound 1 - 0.1**(1/72) = 0.0315 <= 0.05; threshold 0.2 adds the 3 errors and fails. Holdout: billing's two
    wrong items have disagreeing repeats and go to a person; every other graded item is decided and right."""
    rows = _with_repeats(PASSFAIL_DEV + PASSFAIL_HOLDOUT, _wrong(PASSFAIL_DEV + PASSFAIL_HOLDOUT))
    _write(tmp_path, rows)
    policy = _derive(tmp_path, "--rule", "guarantee", "--target", "0.95", "--confidence", "0.9")
    g = policy["guarantee"]
    assert (g["threshold"], g["n_calibration_covered"], g["disagreements"]) == (1.0, 72, 0)
    assert g["upper_bound"] == pytest.approx(1 - 0.1 ** (1 / 72))
    assert [s["accepted"] for s in g["steps"]] == [True, False] and g["steps"][1]["disagreements"] == 3
    assert g["upper_bound"] == pytest.approx(binomial_upper_bound(0, 72, confidence=0.9))
    # 90 dev items (3 copies of 30): 72 right, 3 wrong, 15 without a majority (confidence 1 too): 72 + 15 covered.
    assert g["n_items"] == 90 and g["n_covered"] == 87
    assert "repeats" in g["confidence_source"] and g["repeats"] == 5
    assert "Rule `guarantee`: the judge decides alone items with confidence >= 1.000" in (tmp_path / "P.md").read_text()
    h = _test(tmp_path)
    hg = h["guarantee"]
    # Holdout: 27 items; the unparsed one, the one of a category dev never saw and billing's two wrong ones go to
    # a person, the other 23 are decided.
    assert h["decisions"]["judge"] == 23 and hg["n_covered"] == 23
    assert hg["disagreement"]["value"] == 0.0 and hg["held"] is True and h["status"] == "held"
    assert h["on_judged_items"]["vs_majority"]["agreement"]["value"] == 1.0  # as a pairwise test writes it
    items = {d["item_id"]: d for d in h["items"]}
    assert items["holdout-billing-0"]["decision"] == "person: low confidence"
    assert items["holdout-billing-0"]["confidence"] == pytest.approx(0.2)
    assert items["holdout-billing-5"]["passes"] is True and items["holdout-billing-5"]["confidence"] == 1.0


# ---- scores: a cascade, derived, tested once and routed --------------------------------------------------------


def _quick(rows):
    """A second, cheaper score judge ``quick``: as grader, except on answers' (2, 1) and (3, 4) items, where it says
    2 for both (wrong on (3, 4): the people pass it)."""
    out = []
    for case, labels, j in rows:
        verdict = j["verdict"]
        if case["category"] == "answers" and {labels[0]["label"], labels[1]["label"]} in ({1, 2}, {3, 4}):
            verdict = 2
        out.append({**j, "judge": "quick", "model": "quick-2026", "verdict": verdict})
    return out


def test_score_cascade_quick_then_grader_then_a_person(tmp_path):
    """Threshold 3 (from the labels), scale 1-5, pass line 2.5: confidence 1 for 1 and 5, 0.6 for 4, 1/3 for 2,
    0.2 for 3. --margin 0.5 lets quick decide answers; advice goes to a person (both judges call 5 for 1 and 1
    for 5 there). Target 0.77 (alpha 0.23), confidence 0.8: each stage at level 0.9. Stage 1, quick: t = 1 covers
    18 right (bound 1 - 0.1**(1/18) = 0.120), t = 0.6 27 right (0.082), t = 1/3 adds 9 right and 6 wrong (exact
    bound of 6 in 42: 0.237 > 0.23): stop, threshold 0.6. Stage 2, grader, sees the 15 answers items quick left,
    all right: t = 1/3 covers 9 (1 - 0.1**(1/9) = 0.226), t = 0.2 all 15 (0.142). Dev: 27 + 15 decided, advice's
    30 to a person. Holdout (one copy): 9 + 5 decided, advice's 4 to a person."""
    rows = SCORE_DEV + SCORE_HOLDOUT
    write_study(tmp_path, rows)
    with (tmp_path / "judgments.jsonl").open("a") as f:
        f.write("".join(json.dumps(j) + "\n" for j in _quick(rows)))
    policy = _derive(
        tmp_path, "--cascade", "quick,grader", "--target", "0.77", "--confidence", "0.8", "--margin", "0.5"
    )
    c = policy["cascade"]
    assert policy["threshold"] == 3 and [s["judge"] for s in c["stages"]] == ["quick/tpl", "grader/tpl"]
    quick, grader = c["stages"]
    assert (
        quick["categories"]["answers"]["decision"] == "judge" and quick["categories"]["advice"]["decision"] == "person"
    )
    assert quick["guarantee"]["threshold"] == pytest.approx(0.6) and quick["n_decided"] == 27
    assert [s["n"] for s in quick["guarantee"]["steps"]] == [18, 27, 42]
    assert grader["guarantee"]["threshold"] == pytest.approx(0.2) and grader["n_decided"] == 15
    assert grader["guarantee"]["upper_bound"] == pytest.approx(1 - 0.1 ** (1 / 15))
    assert c["n_person"] == 30 and c["n_items"] == 72 and c["alone"][1]["n_decided"] == 42
    assert "distance" in quick["guarantee"]["confidence_source"]
    assert set(policy["judges"]) == {"quick/tpl", "grader/tpl"}
    assert "| 2 | grader/tpl | 45 | 15 | 0.200 | 15 |" in (tmp_path / "P.md").read_text()
    h = _test(tmp_path)["cascade"]
    assert [s["n_decided"] for s in h["stages"]] == [9, 5] and h["n_person"] == 4 and h["n_items"] == 18
    assert h["guarantee"]["disagreement"]["value"] == 0.0 and h["guarantee"]["held"] is True
    assert h["vs_majority"]["value"] == 1.0 and h["cost"]["unit"] == "tokens"
    # route reads the same rule: a (3, 4) item, quick's 2 is unsure (1/3 < 0.6), grader's 3 decides (0.2 >= 0.2).
    calls = [
        Judgment.model_validate({**j, "template_hash": j["template_hash"]}) for j in _quick(rows) + [r[2] for r in rows]
    ]
    d = route_item(policy, "holdout-answers-12", "answers", [j for j in calls if j.item_id == "holdout-answers-12"])
    assert (d.route, d.stage, d.verdict, d.passes) == ("judge", 2, "3", True)
    assert d.confidence == pytest.approx(0.2)


def test_grade_cascade_refuses_the_guarantee_rule_and_an_unknown_judge(tmp_path):
    write_study(tmp_path, SCORE_DEV + SCORE_HOLDOUT)
    common = ["policy", "derive", "--items", tmp_path / "items.jsonl", "--labels", tmp_path / "labels.jsonl",
              "--judgments", tmp_path / "judgments.jsonl", "--db", tmp_path / "j.db", "--resamples", "100"]  # fmt: skip
    assert juge(*common, "--cascade", "grader,nobody").exit_code == 2
    assert juge(*common, "--cascade", "grader", "--rule", "guarantee").exit_code == 2
    assert juge(*common, "--rule", "lower-bound").exit_code == 2


# ---- the simulation ---------------------------------------------------------------------------------------


def _confidence_tables():
    """item_confidence for every pattern the scripted judges produce, read once from the real function: a PASS/FAIL
    judge with 5 calls (k of them agreeing with repeat 0's verdict, k = 1..5), and a score judge's one call on 1-5
    with threshold 4 (pass line 3.5)."""
    passfail = {
        k: item_confidence(
            "passfail", "PASS", [call("PASS")] + [call("PASS" if r < k else "FAIL", repeat=r) for r in range(1, 5)]
        )
        for k in range(1, 6)
    }
    score = {s: item_confidence("score", s, [call(s)], threshold=4, scale=SCALE) for s in range(1, 6)}
    return passfail, score


def _draw_passfail(rng, n, quality):
    """Per item a level with per-call accuracy q (repeat 0 is the verdict, 4 more repeats): the verdict is wrong
    with probability 1 - q, and k calls (repeat 0 included) agree with it."""
    q = rng.choice(quality, size=n)
    right = rng.random((n, 5)) < q[:, None]
    agree = (right == right[:, :1]).sum(axis=1)
    return agree, ~right[:, 0]


def _draw_score(rng, n, p_wrong):
    """Per item a score 1-5 (uniform) and a wrong side of the threshold with that score's probability."""
    s = rng.integers(1, 6, size=n)
    return s, rng.random(n) < p_wrong[s - 1]


def _simulate(kind, draws, target, confidence, rng):
    passfail, score = _confidence_tables()
    if kind == "passfail":  # per-call accuracy levels: the cheap judge is right less often per call
        judges = [np.array([0.55, 0.7, 0.85, 0.97]), np.array([0.7, 0.85, 0.95, 0.99])]
        table, draw = passfail, _draw_passfail
    else:  # wrong-side probability by score 1..5 (threshold 4): sure at the ends, unsure next to the line
        judges = [np.array([0.03, 0.2, 0.45, 0.4, 0.04]), np.array([0.01, 0.1, 0.3, 0.25, 0.02])]
        table, draw = score, _draw_score
    held = {"cascade": 0, "strong": 0}
    coverage: dict[str, list[float]] = {"cascade": [], "strong": []}
    for _ in range(draws):
        dev = [draw(rng, 1000, j) for j in judges]
        ho = [draw(rng, 2000, j) for j in judges]
        for name, stages in (("cascade", [0, 1]), ("strong", [1])):
            conf = [[table[int(v)] for v in dev[k][0]] for k in stages]
            walks, _ = cascade_walk(conf, [list(dev[k][1]) for k in stages], target=target, confidence=confidence)
            ho_conf = [[table[int(v)] for v in ho[k][0]] for k in stages]
            stage_of = cascade_assign(ho_conf, [w.threshold for w in walks])
            wrong = [ho[stages[s]][1][i] for i, s in enumerate(stage_of) if s is not None]
            held[name] += not wrong or np.mean(wrong) <= 1 - target
            coverage[name].append(len(wrong) / 2000)
    return {k: v / draws for k, v in held.items()}, {k: float(np.mean(v)) for k, v in coverage.items()}


@pytest.mark.parametrize("kind", ["passfail", "score"])
def test_simulated_grade_guarantee_holds_and_the_cascade_covers_at_least_the_strong_judge(kind):
    """Scripted judges of known accuracy by confidence, through item_confidence, cascade_walk (derive) and
    cascade_assign (route): PASS/FAIL judges whose confidence is the agreement across 5 repeats, score judges whose
    confidence is the distance from the pass line. Over 200 draws of 1,000 dev and 2,000 holdout items, the holdout
    agreement with the truth on decided items is >= target in at least `confidence` of the draws, less binomial
    slack of two standard errors over 200 draws (2 * sqrt(0.9 * 0.1 / 200) = 0.042), for the cascade and the strong
    judge alone; and the cascade decides at least as many items as the strong judge alone at the same target."""
    target, confidence, draws = 0.9, 0.9, 200
    held, coverage = _simulate(kind, draws, target, confidence, np.random.default_rng(25))
    slack = 2 * np.sqrt(confidence * (1 - confidence) / draws)
    assert held["cascade"] >= confidence - slack and held["strong"] >= confidence - slack, held
    assert coverage["cascade"] >= coverage["strong"] > 0.3, coverage


def test_a_grade_route_with_no_threshold_goes_to_a_person():
    """A guarantee policy whose walk found no threshold: every item to a person, its confidence said."""
    policy = {
        "judge_kind": "passfail", "rule": "guarantee", "margin": 0.05, "judge": "j/t", "policy_hash": "h",
        "templates_by_category": {"c": "j/t"}, "judges": {"j/t": {"judge": "j", "template": "t", "models": ["m"]}},
        "categories": {"c": {"decision": "judge", "reason": "r"}},
        "guarantee": {"threshold": None, "target": 0.9, "confidence": 0.9, "n_items": 1, "n_covered": 0,
                      "disagreements": 0, "upper_bound": None},
    }  # fmt: skip
    d = route_item(copy.deepcopy(policy), "x", "c", [call("PASS")])
    assert d.label == "person: no confidence threshold" and d.confidence == 1.0 and d.passes is True


def test_route_eval_asks_as_many_repeats_as_the_dev_confidence_read(tmp_path):
    """A PASS/FAIL guarantee policy derived on 3 repeats per item: route --eval asks the judge 3 times per new
    item (the mock server counts them), and recorded calls with fewer repeats go to a person, said why."""
    from test_route_live import case, write_eval

    from juge.store import Store
    from juge.testing.mockserver import MockConfig, serve_in_thread

    db = tmp_path / "j.db"
    dev = [case(f"d{k}", "c", "dev") for k in range(60)]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in dev))
    with serve_in_thread(MockConfig(latency=0.0)) as server:
        eval_file = write_eval(tmp_path, server.url)
        res = juge("run", eval_file, "--db", db, "--no-progress", "--repeat", "3")
        assert res.exit_code == 0, res.output
        with Store(db) as store:
            (run,) = store.list_runs()
            calls = store.judgments(run["id"])
        verdicts = {j.item_id: j.verdict for j in calls if j.repeat == 0}
        agree = {i: sum(j.verdict == verdicts[i] for j in calls if j.item_id == i) for i in verdicts}
        flip = {"PASS": "FAIL", "FAIL": "PASS"}
        # People agree with the judge except on two items where its repeats all agreed (confidence 1).
        wrong = sorted(i for i, n in agree.items() if n == 3)[:2]
        labels = [{"item_id": i, "rater_id": r, "label": flip[v] if i in wrong else v}
                  for i, v in verdicts.items() for r in ("r1", "r2")]  # fmt: skip
        (tmp_path / "labels.jsonl").write_text("".join(json.dumps(lab) + "\n" for lab in labels))
        res = juge("policy", "derive", "--run", run["id"], "--labels", tmp_path / "labels.jsonl", "--db", db,
                   "-o", tmp_path / "P.md", "--json", tmp_path / "policy.json", "--resamples", "100",
                   "--rule", "guarantee")  # fmt: skip
        assert res.exit_code == 0, res.output
        g = json.loads((tmp_path / "policy.json").read_text())["guarantee"]
        assert g["repeats"] == 3 and g["threshold"] is not None
        new = [case(f"n{k}", "c") for k in range(10)]
        (tmp_path / "new.jsonl").write_text("".join(json.dumps(c) + "\n" for c in new))
        before = server.stats()["requests"]
        res = juge("route", "--policy", tmp_path / "policy.json", "--eval", eval_file, "--items",
                   tmp_path / "new.jsonl", "--db", db, "-o", tmp_path / "out.jsonl")  # fmt: skip
        assert res.exit_code == 0, res.output
        assert server.stats()["requests"] - before == 30  # three repeats per new item
        decisions = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
        assert all(d["confidence"] is not None for d in decisions if d["route"] == "judge")
        assert {d["reason"] for d in decisions} <= {"confidence", "low confidence"}
    one = [j for j in calls if j.item_id == "d0" and j.repeat == 0]
    d = route_item(json.loads((tmp_path / "policy.json").read_text()), "d0", "c", one)
    assert d.label == "person: refused/unparsed/missing" and "1 of the 3 repeats" in d.detail


def test_route_eval_runs_a_passfail_cascade_live(tmp_path):
    """Two PASS/FAIL judges on the mock server, asked 3 times each: people side with quick in category c and with
    strong in category d, so quick may decide c and strong d (rule 3 per stage), each with confidence 1 (its
    repeats agree) and no error on 40 dev items (1 - 0.05**(1/40) = 0.072 <= 0.1). route --eval calls quick only
    on the new c items and strong only on the d items, three times each, and each decision names its stage."""
    from juge.store import Store
    from juge.testing.mockserver import MockConfig, serve_in_thread

    db = tmp_path / "j.db"

    def case(item_id, category, split=None):
        row = {"id": item_id, "group": item_id, "category": category, "question": f"Question {item_id}?",
               "output": f"Answer {item_id}."}  # fmt: skip
        return row | ({"split": split} if split else {})

    dev = [case(f"{c}{k}", c, "dev") for c in "cd" for k in range(40)]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in dev))
    with serve_in_thread(MockConfig(latency=0.0)) as server:
        eval_file = tmp_path / "eval.toml"
        judges = "".join(
            f'\n[[judges]]\nname = "{n}"\nsetup = "passfail"\nmodel = "mock-judge-2026-01"\ndescription = "{d}"\n'
            for n, d in (("quick", "The answer is right."), ("strong", "The answer is right and complete."))
        )
        eval_file.write_text(
            f'name = "live-cascade"\ncases = "cases.jsonl"\n\n[provider]\nname = "openai"\n'
            f'options = {{ base_url = "{server.url}" }}\n{judges}'
        )
        res = juge("run", eval_file, "--db", db, "--no-progress", "--repeat", "3")
        assert res.exit_code == 0, res.output
        with Store(db) as store:
            (run,) = store.list_runs()
            calls = store.judgments(run["id"])
        first = {(j.judge, j.item_id): j.verdict for j in calls if j.repeat == 0}
        labels = [{"item_id": c["id"], "rater_id": r, "label": first[("quick" if c["category"] == "c" else "strong",
                   c["id"])]} for c in dev for r in ("r1", "r2")]  # fmt: skip
        (tmp_path / "labels.jsonl").write_text("".join(json.dumps(lab) + "\n" for lab in labels))
        res = juge("policy", "derive", "--run", run["id"], "--labels", tmp_path / "labels.jsonl", "--db", db,
                   "-o", tmp_path / "P.md", "--json", tmp_path / "policy.json", "--resamples", "100",
                   "--cascade", "quick,strong")  # fmt: skip
        assert res.exit_code == 0, res.output
        stages = json.loads((tmp_path / "policy.json").read_text())["cascade"]["stages"]
        assert [{c for c, r in s["categories"].items() if r["decision"] == "judge"} for s in stages] == [{"c"}, {"d"}]
        assert [s["guarantee"]["repeats"] for s in stages] == [3, 3] and [s["n_decided"] for s in stages] == [40, 40]
        new = [case(f"n{c}{k}", c) for c in "cd" for k in range(10)]
        (tmp_path / "new.jsonl").write_text("".join(json.dumps(c) + "\n" for c in new))
        before = server.stats()["requests"]
        res = juge("route", "--policy", tmp_path / "policy.json", "--eval", eval_file, "--items",
                   tmp_path / "new.jsonl", "--db", tmp_path / "route.db", "--json", tmp_path / "r.json")  # fmt: skip
        assert res.exit_code == 0, res.output
        assert server.stats()["requests"] - before == 60  # 10 items per stage, 3 repeats each
    routed = json.loads((tmp_path / "r.json").read_text())
    with Store(tmp_path / "route.db") as store:
        asked = [{(j.judge, j.item_id) for j in store.judgments(r)} for r in routed["runs"]]
    assert asked == [{("quick", f"nc{k}") for k in range(10)}, {("strong", f"nd{k}") for k in range(10)}]
    stage = {d["item_id"]: d.get("stage") for d in routed["decisions"]}
    assert stage == {f"n{c}{k}": 1 if c == "c" else 2 for c in "cd" for k in range(10)}


# ---- a panel as a cascade stage: its confidence is its members' agreement ----------------------------------------


def _panel_study(folder, split, n_unanimous, n_split_right, n_split_wrong):
    """Items where both people agree. Members a, b, c: all right on ``n_unanimous`` items (half FAIL, half PASS);
    two right and one wrong on ``n_split_right``; on ``n_split_wrong`` (the people PASS) two say FAIL: the panel's
    majority is wrong with 2 of 3. ``strong`` is always right. Appends to the study files in ``folder``."""
    cases, labels, calls = [], [], []
    spec = [("unanimous", n_unanimous, 3), ("split-right", n_split_right, 2), ("split-wrong", n_split_wrong, 1)]
    for kind, n, n_right in spec:
        for k in range(n):
            item_id = f"{split}-{kind}-{k}"
            truth = "PASS" if kind == "split-wrong" or k % 2 else "FAIL"
            other = {"PASS": "FAIL", "FAIL": "PASS"}[truth]
            cases.append({"id": item_id, "group": item_id, "category": "billing", "question": "Q?",
                          "output": "A.", "split": split})  # fmt: skip
            labels += [{"item_id": item_id, "rater_id": r, "label": truth} for r in ("r1", "r2")]
            votes = {"a": truth, "b": truth if n_right >= 2 else other, "c": truth if n_right >= 3 else other}
            for judge, verdict in [*votes.items(), ("strong", truth)]:
                calls.append({"item_id": item_id, "judge": judge, "model": f"model-{judge}", "template": "tpl",
                              "template_hash": "h", "outcome": "ok", "verdict": verdict, "text": verdict,
                              "tokens_in": 100, "tokens_out": 1})  # fmt: skip
    for name, rows in [("items", cases), ("labels", labels), ("judgments", calls)]:
        with (folder / f"{name}.jsonl").open("a") as f:
            f.write("".join(json.dumps(r) + "\n" for r in rows))


def test_a_panel_stage_decides_its_unanimous_items_and_escalates_split_ones(tmp_path):
    """A PASS/FAIL cascade jury (a panel of a, b, c by majority) -> strong. The panel's confidence is the share of
    members agreeing with its verdict: 1 on unanimous items, 2/3 on split ones. Dev: 90 unanimous (all right), 60
    split and right, 6 split and wrong. Target 0.95, confidence 0.9: each stage at level 0.95. The panel: t = 1
    covers 90 right (exact bound 1 - 0.05**(1/90) = 0.033); t = 2/3 adds 66 with 6 wrong (6 of 156: bound above
    0.05): stop at 1. strong sees the 66 split items, all right: 1 - 0.05**(1/66) = 0.0444. Before, the panel's one
    aggregated call gave confidence 1 everywhere: 6 wrong in 156 at the only threshold, so the panel decided none
    and strong all 156. Holdout: 10 unanimous, 4 split right, 2 split wrong: the panel decides 10, strong 6."""
    _panel_study(tmp_path, "dev", 90, 60, 6)
    _panel_study(tmp_path, "holdout", 10, 4, 2)
    panel = ("--panel", "jury=a,b,c")
    policy = _derive(tmp_path, *panel, "--cascade", "jury,strong", "--target", "0.95", "--confidence", "0.9",
                     "--margin", "0.5")  # fmt: skip
    jury, strong = policy["cascade"]["stages"]
    configurations = {r["name"]: r for r in policy["cascade"]["configurations"]}
    assert jury["guarantee"]["threshold"] == 1.0 and jury["n_decided"] == 90
    assert [s["accepted"] for s in jury["guarantee"]["steps"]][:2] == [True, False]
    assert jury["guarantee"]["steps"][1]["disagreements"] == 6
    assert "members" in jury["guarantee"]["confidence_source"]
    assert strong["n_reaching"] == 66 and strong["n_decided"] == 66
    # PASS/FAIL cascades have the pairwise configurations too: the panel alone is priced at its members' calls
    # (3 per item it is called on: all 156, 101 tokens each), the cascade adds strong's 66; with no prices the
    # choice is by tokens: strong and member a (always right, deciding all 156 alone) cost 101 tokens an item,
    # and strong is listed first.
    assert configurations["jury"]["kind"] == "panel" and configurations["jury"]["dev"]["cost"]["calls"] == 3 * 156
    assert configurations["jury"]["dev"]["decided_by_stage"] == [90]
    cascade = configurations["jury → strong"]["dev"]
    assert cascade["decided_by_stage"] == [90, 66] and cascade["cost"]["calls"] == 3 * 156 + 66
    assert cascade["cost"]["tokens_per_item"] == pytest.approx((3 * 156 + 66) * 101 / 156)
    choice = policy["cascade"]["choice"]
    assert choice["cost_basis"] == "tokens" and choice["chosen"] == "strong"
    res = juge("policy", "test", "--policy", tmp_path / "policy.json", "--items", tmp_path / "items.jsonl",
               "--labels", tmp_path / "labels.jsonl", "--judgments", tmp_path / "judgments.jsonl",
               "--db", tmp_path / "j.db", "--json", tmp_path / "h.json", "--resamples", "100", *panel)  # fmt: skip
    assert res.exit_code in (0, 1), res.output
    h = json.loads((tmp_path / "h.json").read_text())
    assert [s["n_decided"] for s in h["cascade"]["stages"]] == [10, 6] and h["cascade"]["n_person"] == 0
    items = {d["item_id"]: d for d in h["items"]}
    assert items["holdout-split-wrong-0"]["stage"] == 2 and items["holdout-split-wrong-0"]["verdict"] == "PASS"
    assert items["holdout-split-right-0"]["confidence"] == 1.0  # strong's
    assert items["holdout-unanimous-0"]["stage"] == 1
    tested = {r["name"]: r for r in h["cascade"]["configurations"]}
    assert tested["jury → strong"]["holdout"]["decided_by_stage"] == [10, 6] and tested["jury"]["kind"] == "panel"
    assert tested["jury"]["holdout"]["n_decided"] == 10 and h["cascade"]["chosen"] == "strong"


def test_a_panel_confidence_reads_its_members_calls_in_the_same_slot():
    def member(judge, verdict, repeat=0, distribution=None):
        return Judgment(item_id="x", judge=judge, model=f"m-{judge}", template="t", repeat=repeat, verdict=verdict, outcome="ok",
                        distribution=distribution)  # fmt: skip

    panel = Judgment(item_id="x", judge="jury", model="panel: a/t (m-a) + b/t (m-b) + c/t (m-c)",
                     template="majority", verdict="PASS", outcome="ok")  # fmt: skip
    others = [member("a", "PASS"), member("b", "PASS"), member("c", "FAIL"), member("a", "FAIL", repeat=1)]
    assert item_confidence("passfail", "PASS", [panel], members=others) == pytest.approx(2 / 3)
    # A member without a call in the slot backs nothing; log-probabilities count as for one judge.
    probs = [member("a", "PASS", distribution={"PASS": 0.9, "FAIL": 0.1}), member("b", "PASS")]
    assert item_confidence("passfail", "PASS", [panel], members=probs) == pytest.approx((0.9 + 1) / 3)
    with pytest.raises(ValueError, match="members"):
        item_confidence("passfail", "PASS", [panel])
    # Pairwise: each order's panel call stands for its members' calls in that order (answer 1 is A in order 12,
    # B in order 21): a and b back the verdict in both orders, c in neither: 4 of 6.
    pair = [panel.model_copy(update={"order": o, "verdict": v}) for o, v in (("12", "A"), ("21", "B"))]
    votes = [member(m, v).model_copy(update={"order": o}) for o, vs in (("12", "AAB"), ("21", "BBA"))
             for m, v in zip("abc", vs)]  # fmt: skip
    assert item_confidence("pairwise", "A", pair, members=votes) == pytest.approx(4 / 6)
    # A score panel (mean 4 on 1-5, threshold 4, line 3.5): members 5 (1.0), 4 (1/3) and 3 (the other side: 0).
    mean = panel.model_copy(update={"template": "mean", "verdict": 4.0})
    scores = [member(m, v) for m, v in zip("abc", (5, 4, 3))]
    assert item_confidence("score", 4.0, [mean], threshold=4, scale=SCALE, members=scores) == pytest.approx(
        (1 + 1 / 3 + 0) / 3
    )
