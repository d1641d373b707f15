"""juge plan on PASS/FAIL and score policy studies: the figures the simulation reads (against the bootstrap and
scikit-learn), the settled shares, and the planned count against fresh studies from a known process."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from cli_helpers import juge_main as app
from juge.calibration.grades import PASSFAIL, GradedItem, GradeOnItem
from juge.calibration.pairwise import Bootstrap
from juge.policy.grades import decide, grade_figures
from juge.policy.plan import plan_decision
from juge.policy.plan_grades import N_J, N_P, _figures, _se, checks_of, grade_counts, grade_settled_shares

KEY = "grader/tpl"


def passfail_items(rng, n, *, judge=0.85, raters=0.85, fail=0.3, n_raters=3, category="c"):
    """A known process: each item truly PASS or FAIL; each rater and the judge right with their accuracy."""
    out = []
    for k in range(n):
        truth = "FAIL" if rng.random() < fail else "PASS"
        other = "PASS" if truth == "FAIL" else "FAIL"
        ratings = [(f"r{r}", truth if rng.random() < raters else other) for r in range(n_raters)]
        verdict = truth if rng.random() < judge else other
        out.append(GradedItem(f"{category}-{k}", f"g{k}", category, "dev", ratings, {KEY: GradeOnItem(verdict)}))
    return out


def score_items(rng, n, *, noise=1.0, n_raters=3):
    """Scores 1-5 around a true quality; the judge and raters add their own noise."""
    out = []
    for k in range(n):
        quality = rng.uniform(1, 5)

        def grade(spread, quality=quality):
            return float(np.clip(np.rint(quality + rng.normal(0, spread)), 1, 5))

        ratings = [(f"r{r}", grade(0.8)) for r in range(n_raters)]
        out.append(GradedItem(f"s-{k}", f"g{k}", "c", "dev", ratings, {KEY: GradeOnItem(grade(noise))}))
    return out


def delta(counts, kind):
    """Per check: the judge's and people's values, and the se of each and of their difference."""
    draw = counts[None]
    mean = draw.mean(1)
    out = {}
    for c in checks_of(kind):
        ji, pi = c.judge_influence(draw, mean), c.people_influence(draw, mean)
        out[c.name] = (c.judge(mean)[0], c.people(mean)[0], _se(ji)[0], _se(pi)[0], _se(ji - pi)[0])
    return out


def half(e):
    return (e["high"] - e["low"]) / (2 * 1.96)


def test_passfail_figures_and_their_se_are_those_of_the_rule_and_the_bootstrap():
    items = passfail_items(np.random.default_rng(1), 300)
    boot = Bootstrap(n_resamples=4000, seed=0)
    fig = grade_figures(items, KEY, "passfail", list(PASSFAIL), boot, None)
    got = delta(grade_counts(items, KEY, "passfail", list(PASSFAIL), None), "passfail")
    for name, key in (("agreement", "agreement"), ("kappa", "kappa")):
        j, p, se_j, se_p, _ = got[name]
        assert j == pytest.approx(fig["judge"][key]["value"]) and p == pytest.approx(fig["people"][key]["value"])
        assert se_j == pytest.approx(half(fig["judge"][key]), rel=0.12)
        assert se_p == pytest.approx(half(fig["people"][key]), rel=0.12)
    j, p, se_j, se_p, _ = got["failures caught"]
    assert j == pytest.approx(fig["judge"]["failures_caught"]["rate"]["value"])
    assert p == pytest.approx(fig["people"]["failures_caught"]["rate"]["value"])
    assert se_j == pytest.approx(half(fig["judge"]["failures_caught"]["rate"]), rel=0.12)
    # Kappa of pooled pairs, as scikit-learn computes it on the same pairs.
    pairs = [(it.judges[KEY].value, v) for it in items for _, v in it.ratings]
    assert got["kappa"][0] == pytest.approx(cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs]))


def test_score_figures_weighted_kappa_and_agreement_at_the_threshold():
    items = score_items(np.random.default_rng(2), 300)
    scale = [1.0, 2.0, 3.0, 4.0, 5.0]
    boot = Bootstrap(n_resamples=4000, seed=0)
    fig = grade_figures(items, KEY, "score", scale, boot, 4.0)
    got = delta(grade_counts(items, KEY, "score", scale, 4.0), "score")
    j, p, se_j, se_p, _ = got["weighted kappa"]
    pairs = [(it.judges[KEY].value, v) for it in items for _, v in it.ratings]
    sk = cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs], weights="quadratic")
    assert j == pytest.approx(sk) and j == pytest.approx(fig["judge"]["weighted_kappa"]["value"])
    assert p == pytest.approx(fig["people"]["weighted_kappa"]["value"])
    assert se_j == pytest.approx(half(fig["judge"]["weighted_kappa"]), rel=0.12)
    j, p, se_j, _, _ = got["agreement at the threshold"]
    assert j == pytest.approx(fig["judge"]["at_threshold"]["agreement"]["value"])
    assert se_j == pytest.approx(half(fig["judge"]["at_threshold"]["agreement"]), rel=0.12)


def shares(items, m, *, reps=200, min_recall=None, seed=0):
    counts = grade_counts(items, KEY, "passfail", list(PASSFAIL), None)
    return grade_settled_shares(counts, m, kind="passfail", margin=0.05, min_recall=min_recall, level=0.95,
                                reps=reps, rng=np.random.default_rng(seed))  # fmt: skip


def test_settled_shares_judge_person_thin_and_min_recall():
    rng = np.random.default_rng(3)
    # The judge catches 0.745 of a person's FAIL votes, people 0.625 of each other's; agreement +0.12.
    good = passfail_items(rng, 400, judge=0.99, raters=0.75, fail=0.5)
    share, as_judge, as_person = shares(good, 400)
    assert share > 0.95 and as_judge == share and as_person == 0
    weak = passfail_items(rng, 400, judge=0.6, raters=0.9)
    share, as_judge, as_person = shares(weak, 400)
    assert share > 0.95 and as_person == share and as_judge == 0
    # 8 items: too few to decide (the policy's one rule), whatever the figures.
    assert shares(good[:8], 8)[0] == 0
    # The judge catches nearly every failure, but not the 0.999 --min-recall asks: settled as person.
    assert shares(good, 400, min_recall=0.999)[2] > 0.95


def paired_settled(counts, *, rng, resamples=300, margin=0.05, kind="passfail"):
    """The rule on one study, with paired percentile-bootstrap intervals of each judge-minus-people figure
    (not the delta method the plan uses): settled as judge or as person, or not settled."""
    idx = rng.integers(0, len(counts), (resamples, len(counts)))
    boots = counts[idx].mean(1)
    mean = counts.mean(0)
    people, low, high = {}, {}, {}
    for c in checks_of(kind):
        diffs = c.judge(boots) - c.people(boots)
        lo, hi = np.quantile(diffs, [0.025, 0.975])
        people[c.name] = float(c.people(mean))
        low[c.name], high[c.name] = people[c.name] + lo, people[c.name] + hi
    people["false flags"] = low["false flags"] = high["false flags"] = 0.0
    sums = counts.sum(0)
    if sums[N_J] < 30 or sums[N_P] < 30:
        return None
    caught = (0, 0)
    at_low = decide(_figures(kind, low, people, caught), kind, margin=margin, min_recall=None)[0]
    at_high = decide(_figures(kind, high, people, caught), kind, margin=margin, min_recall=None)[0]
    return "judge" if at_low == "judge" else "person" if at_high == "person" else None


def in_proportion(rows, chances, n=20_000):
    """n items, each type as often as its chance says (largest remainders rounded up)."""
    counts = np.floor(chances * n).astype(int)
    counts[np.argsort(counts - chances * n)[: n - counts.sum()]] += 1
    return np.repeat(rows, counts, axis=0)


def passfail_process(*, judge, raters, fail=0.3, n_raters=3):
    """The known process as its item types: the count row of each (truth, raters' labels, verdict) and its chance."""
    from itertools import product

    rows, chances = [], []
    for truth, *labels, verdict in product(PASSFAIL, *[PASSFAIL] * n_raters, PASSFAIL):
        chance = fail if truth == "FAIL" else 1 - fail
        for label in labels:
            chance *= raters if label == truth else 1 - raters
        chance *= judge if verdict == truth else 1 - judge
        ratings = [(f"r{r}", v) for r, v in enumerate(labels)]
        rows.append(GradedItem("i", "g", "c", "dev", ratings, {KEY: GradeOnItem(verdict)}))
        chances.append(chance)
    return grade_counts(rows, KEY, "passfail", list(PASSFAIL), None), np.array(chances)


@pytest.mark.slow
def test_planned_count_settles_passfail_studies_in_about_the_stated_share():
    """100 items in hand whose simulated studies are drawn as from the known process (its item types in
    proportion: the plan is a plug-in, and a small pilot's own error moves it, as the docs say; this measures the
    simulation and the search); the plan's count; 300 fresh studies of that size drawn from the process itself,
    each decided by the rule with its own paired bootstrap intervals (not the plan's delta method): settled in
    about the stated 80 % (measured: 0.84, 0.85), on the side the process says."""
    for process, seed, truth in (
        # Agreement +0.09, kappa +0.18, failures caught +0.09 against people's: settles as judge.
        ({"judge": 0.95, "raters": 0.8, "fail": 0.5}, 1, "judge"),
        # Agreement -0.105, kappa -0.20, failures caught -0.062: settles as person.
        ({"judge": 0.7, "raters": 0.85, "fail": 0.3}, 2, "person"),
    ):
        rows, chances = passfail_process(**process)
        in_hand = in_proportion(rows, chances)

        def sim(m, rng, in_hand=in_hand):
            return grade_settled_shares(in_hand, m, kind="passfail", margin=0.05, min_recall=None, level=0.95,
                                        reps=400, rng=rng)  # fmt: skip

        plan = plan_decision("c", 100, sim, {}, margin=0.05, probability=0.8, max_factor=20, seed=seed)
        assert plan.n_needed is not None and plan.n_needed > 100, plan
        rng = np.random.default_rng(seed)
        outcomes = [
            paired_settled(rows[rng.choice(len(rows), plan.n_needed, p=chances / chances.sum())], rng=rng)
            for _ in range(300)
        ]
        settled = sum(o is not None for o in outcomes) / len(outcomes)
        assert 0.72 <= settled <= 0.9, (process, plan.n_needed, settled)
        assert outcomes.count("person" if truth == "judge" else "judge") == 0


def write_passfail_study(folder, items):
    cases = [{"id": it.item_id, "group": it.group, "category": it.category, "question": "q", "output": "o",
              "split": it.split} for it in items]  # fmt: skip
    labels = [{"item_id": it.item_id, "rater_id": r, "label": v} for it in items for r, v in it.ratings]
    calls = [{"item_id": it.item_id, "judge": "grader", "model": "m", "template": "tpl", "template_hash": "h",
              "outcome": "ok", "verdict": it.judges[KEY].value, "text": it.judges[KEY].value} for it in items]  # fmt: skip
    for name, rows in (("items", cases), ("labels", labels), ("judgments", calls)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return [f"--{name}" if k % 2 == 0 else str(folder / f"{name}.jsonl") for name in ("items", "labels", "judgments")
            for k in range(2)]  # fmt: skip


def test_cli_plan_on_a_passfail_study(tmp_path):
    rng = np.random.default_rng(7)
    items = (
        passfail_items(rng, 60, judge=0.97, raters=0.8, category="billing")
        + passfail_items(rng, 60, judge=0.55, raters=0.9, category="refunds")
        + passfail_items(rng, 40, judge=0.85, raters=0.85, category="shipping")
    )
    args = ["plan", *write_passfail_study(tmp_path, items), "--db", str(tmp_path / "j.db"), "--reps", "200",
            "--resamples", "200"]  # fmt: skip
    res = CliRunner().invoke(app, [*args, "--json", str(tmp_path / "plan.json")])
    assert res.exit_code == 0, res.output
    rows = {d["category"]: d for d in json.loads((tmp_path / "plan.json").read_text())["decisions"]}
    assert set(rows) == {"billing", "refunds", "shipping", "(overall)"}
    assert rows["billing"]["ruling"] == "judge" and rows["billing"]["n_needed"] is not None
    assert rows["billing"]["judge_share"] >= 0.8
    assert rows["refunds"]["ruling"] == "person" and rows["refunds"]["person_share"] >= 0.8
    for d in rows.values():
        assert (d["n_needed"] is None) == (d["n_more"] is None)
        assert d["on_margin"] == (d["n_needed"] is None and d["distance"] is not None and abs(d["distance"]) < 0.02)
    assert rows["refunds"]["binding"] in ("agreement", "kappa", "failures caught")
    # --min-recall is the PASS/FAIL rule's: a share above 1 is refused as policy derive refuses it.
    assert CliRunner().invoke(app, [*args, "--min-recall", "1.5"]).exit_code == 2


def test_plan_on_a_score_study_reads_the_threshold_of_policy_derive(tmp_path):
    import juge

    items = score_items(np.random.default_rng(5), 120, noise=0.5)
    write_passfail_study(tmp_path, items)  # the same files; the labels and verdicts are scores
    paths = {name: tmp_path / f"{name}.jsonl" for name in ("items", "labels", "judgments")}
    plan = juge.plan(**paths, db=tmp_path / "j.db", reps=100, resamples=200, threshold=4)
    assert plan.decisions[0].binding in ("agreement at the threshold", "weighted kappa")
    chosen = juge.plan(**paths, db=tmp_path / "j.db", reps=100, resamples=200)  # threshold chosen on dev
    assert [d.category for d in chosen.decisions] == ["c", "(overall)"]
    with pytest.raises(juge.InputError, match="min-recall"):
        juge.plan(**paths, db=tmp_path / "j.db", reps=100, min_recall=0.5)
    for bad in (float("nan"), float("inf")):  # NaN passed no score: every item a fail, on derive and plan alike
        with pytest.raises(juge.InputError, match="--threshold must be a finite score"):
            juge.plan(**paths, db=tmp_path / "j.db", reps=100, threshold=bad)
        with pytest.raises(juge.InputError, match="--threshold must be a finite score"):
            juge.policy.derive(**paths, db=tmp_path / "j.db", resamples=100, threshold=bad)


def test_readme_passfail_plan_on_the_mtbench_sample(tmp_path):
    """The figures README shows for the sample read as a PASS/FAIL study (seed 0, 400 studies per size)."""
    import runpy
    from pathlib import Path

    import juge

    root = Path(__file__).resolve().parents[2]
    folder = runpy.run_path(str(root / "examples" / "mtbench_passfail.py"))["write_study"](tmp_path / "pf")
    plan = juge.plan(items=folder / "items.jsonl", labels=folder / "labels.jsonl",
                     judgments=folder / "judgments.jsonl", db=tmp_path / "j.db")  # fmt: skip
    assert plan.judge == "chat-strong/answer-1-wins"
    rows = {d.category: d for d in plan.decisions}
    assert rows["(overall)"].n_items == 155
    assert (rows["coding"].ruling, rows["coding"].binding, rows["coding"].distance) == ("person", "kappa", -0.233)
    assert (rows["extraction"].ruling, rows["extraction"].binding) == ("judge", "failures caught")
    assert rows["extraction"].distance == 0.025 and rows["math"].distance == -0.075
    more = {c: d.n_more for c, d in rows.items()}
    assert more == {"coding": 64, "extraction": 94, "humanities": 38, "math": 162, "reasoning": 140, "roleplay": 28,
                    "stem": 54, "writing": 64, "(overall)": 125}  # fmt: skip
    assert rows["math"].n_needed == rows["math"].cap == 180
    readme = (root / "README.md").read_text()
    assert "and 64 more items settle that" in readme and "94 more" in readme and "needs 162 more" in readme


def test_a_category_with_no_human_fail_turns_on_no_figure():
    from juge.policy.plan_grades import grade_distance

    # policy derive's row for a category with no FAIL vote: a person, though agreement and kappa pass.
    row = {"by_figures": "person", "checks": {"agreement": {"gap": -0.04}, "kappa": {"gap": 0.01}}}
    assert grade_distance(row, margin=0.05, min_recall=None) is None
    row["checks"]["kappa"]["gap"] = -0.08
    assert grade_distance(row, margin=0.05, min_recall=None) == ("kappa", pytest.approx(-0.03))


def score_process(*, judge, raters, n_raters=3, points=4):
    """Scores 1-4: each item's true score equally likely; each rater and the judge give it with their accuracy,
    else a neighbour (half each way, the end points moving inward)."""
    from itertools import product

    scale = [float(p) for p in range(1, points + 1)]

    def chance(said, truth, right):
        if said == truth:
            return right
        near = [t for t in (truth - 1, truth + 1) if 1 <= t <= points]
        return (1 - right) / len(near) if said in near else 0.0

    rows, chances = [], []
    for truth, *labels, verdict in product(scale, repeat=n_raters + 2):
        p = chance(verdict, truth, judge) / points
        for v in labels:
            p *= chance(v, truth, raters)
        if p == 0:
            continue
        ratings = [(f"r{r}", v) for r, v in enumerate(labels)]
        rows.append(GradedItem("i", "g", "c", "dev", ratings, {KEY: GradeOnItem(verdict)}))
        chances.append(p)
    return grade_counts(rows, KEY, "score", scale, 3.0), np.array(chances)


@pytest.mark.slow
def test_planned_count_settles_score_studies_in_about_the_stated_share():
    """As for PASS/FAIL: a score judge (threshold 3) planned from items that describe its process, and 300 fresh
    studies of the planned size from the process, each decided by the rule with paired bootstrap intervals
    (measured: 216 items settled 0.77, 317 items 0.84)."""
    # Weighted kappa +0.018 and agreement at the threshold +0.008 against people's: settles as judge; a judge
    # right on 30 % (weighted kappa 0.116 below, agreement at the threshold 0.045 below) settles as person.
    for process, seed, truth in (
        ({"judge": 0.65, "raters": 0.6}, 1, "judge"),
        ({"judge": 0.3, "raters": 0.6}, 2, "person"),
    ):
        rows, chances = score_process(**process)
        in_hand = in_proportion(rows, chances)

        def sim(m, rng, in_hand=in_hand):
            return grade_settled_shares(in_hand, m, kind="score", margin=0.05, min_recall=None, level=0.95,
                                        reps=400, rng=rng)  # fmt: skip

        plan = plan_decision("c", 100, sim, {}, margin=0.05, probability=0.8, max_factor=20, seed=seed)
        assert plan.n_needed is not None and plan.n_needed > 100, plan
        rng = np.random.default_rng(seed)
        outcomes = [
            paired_settled(
                rows[rng.choice(len(rows), plan.n_needed, p=chances / chances.sum())], rng=rng, kind="score"
            )  # fmt: skip
            for _ in range(300)
        ]
        settled = sum(o is not None for o in outcomes) / len(outcomes)
        assert 0.72 <= settled <= 0.9, (process, plan.n_needed, settled)
        assert outcomes.count("person" if truth == "judge" else "judge") == 0


def test_one_rater_per_item_is_said_to_settle_nothing(tmp_path):
    """With one label per item there is no person-vs-person figure at any size: the plan adds a note saying so
    (and what to do), which the two-rater study does not get."""
    import juge

    items = score_items(np.random.default_rng(5), 120, noise=0.5)
    write_passfail_study(tmp_path, items)
    paths = {name: tmp_path / f"{name}.jsonl" for name in ("items", "labels", "judgments")}
    both = juge.plan(**paths, db=tmp_path / "j.db", reps=20, resamples=100, threshold=4)
    seen: set[str] = set()
    first = []
    for line in paths["labels"].read_text().splitlines():
        if json.loads(line)["item_id"] not in seen:
            seen.add(json.loads(line)["item_id"])
            first.append(line)
    assert len(first) < len(paths["labels"].read_text().splitlines())  # the study had overlap to drop
    paths["labels"].write_text("\n".join(first) + "\n")
    one = juge.plan(**paths, db=tmp_path / "j.db", reps=20, resamples=100, threshold=4)
    assert all(d.n_needed is None for d in one.decisions)
    added = set(one.notes) - set(both.notes)
    assert len(added) == 1 and "--overlap" in added.pop()
