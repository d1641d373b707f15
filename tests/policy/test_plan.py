"""juge plan: how many more labels settle a policy decision, or reach a pass-rate interval width."""

from __future__ import annotations

import json

import numpy as np
import pytest

import juge
from juge.policy.plan import settled_shares
from juge.runs.corrected import StratumMoments, labels_for_width, ppi_mean
from juge.stats import paired_ratio_difference


def population(rng, n_items, *, judge=0.72, people=0.70, raters=3):
    """Per item: votes agreeing with the judge, votes, rater pairs agreeing, rater pairs. Items differ in
    difficulty (agreement varies by item), so the clustering by item matters as in real studies."""
    shift = rng.normal(0, 0.12, n_items)
    pairs = raters * (raters - 1) // 2
    jp = rng.binomial(raters, np.clip(judge + shift, 0.01, 0.99))
    pp = rng.binomial(pairs, np.clip(people + shift, 0.01, 0.99))
    return np.column_stack([jp, np.full(n_items, raters), pp, np.full(n_items, pairs)]).astype(float)


def test_delta_interval_is_the_bootstrap_interval_of_the_rule():
    rng = np.random.default_rng(1)
    counts = population(rng, 200)
    boot = paired_ratio_difference(*counts.T, n_resamples=4000, seed=0)
    # One "simulated study" that is the data itself: the same items, no redraw.
    a, b, c, d = counts.T
    r1, r2 = a.sum() / b.sum(), c.sum() / d.sum()
    terms = (a - r1 * b) / b.mean() - (c - r2 * d) / d.mean()
    se = terms.std(ddof=1) / np.sqrt(len(a))
    assert (r1 - r2) - 1.96 * se == pytest.approx(boot.low, abs=0.01)
    assert (r1 - r2) + 1.96 * se == pytest.approx(boot.high, abs=0.01)


def pair_process(judge, *, raters=0.7, tie=0.1, n_raters=3):
    """A known process as its item types: the count row of each (truth, votes, the judge's verdict) and its chance.
    Each vote and the judge name the better answer with their accuracy, call a tie with ``tie``, else the worse."""
    from itertools import combinations, product

    def chance(said, truth, right):
        return right if said == truth else tie if said == "tie" else 1 - right - tie

    rows, chances = [], []
    for truth, *votes, verdict in product("AB", *[("A", "B", "tie")] * (n_raters + 1)):
        p = 0.5 * chance(verdict, truth, judge)
        for v in votes:
            p *= chance(v, truth, raters)
        agree = sum(a == b for a, b in combinations(votes, 2))
        rows.append((sum(v == verdict for v in votes), n_raters, agree, n_raters * (n_raters - 1) // 2))
        chances.append(p)
    return np.array(rows, dtype=float), np.array(chances)


def exact_pilot(rows, chances, n):
    """n items, each type as often as its chance says (largest remainders rounded up): items that describe their
    process."""
    counts = np.floor(chances * n).astype(int)
    counts[np.argsort(counts - chances * n)[: n - counts.sum()]] += 1
    return np.repeat(rows, counts, axis=0)


def test_plan_s_item_count_settles_the_rule_in_about_the_stated_share_of_fresh_studies():
    """60 items in hand whose simulated studies are drawn as from the known process (its item types in
    proportion, so the test measures the plan's simulation and search, not a small pilot's own error: the plan is
    a plug-in); the plan's count; 300 fresh studies of that size drawn from the process itself, each decided by
    the rule as policy derive runs it (its paired bootstrap interval): settled in about the stated 80 % (measured:
    0.77, 0.81), on the side the process says."""
    from juge.policy.plan import pair_shares, plan_decision

    rng = np.random.default_rng(26)
    # People agree 0.54 with each other; the judge 0.59 (gap +0.05, judge) or 0.415 (gap -0.125, person).
    for judge, seed, side in ((0.8, 1, "judge"), (0.45, 3, "person")):
        rows, chances = pair_process(judge)
        shares = pair_shares(exact_pilot(rows, chances, 20_000), margin=0.05, level=0.95, reps=400)
        plan = plan_decision("c", 60, shares, {"gap": None}, margin=0.05, probability=0.8, max_factor=20, seed=seed)
        assert plan.n_needed is not None and plan.n_needed > 60
        above = below = 0
        for k in range(300):
            study = rows[rng.choice(len(rows), plan.n_needed, p=chances / chances.sum())]
            est = paired_ratio_difference(*study.T, n_resamples=300, seed=k)
            above += est.low > -0.05
            below += est.high < -0.05
        assert 0.72 <= (above + below) / 300 <= 0.9, (judge, plan.n_needed, (above + below) / 300)
        assert (below if side == "judge" else above) == 0


def test_a_gap_on_the_margin_is_never_settled_and_a_clear_one_is_settled_now():
    rng = np.random.default_rng(3)
    on_margin = population(rng, 30000, judge=0.65, people=0.70)
    share, _, _ = settled_shares(on_margin[:2000], 2000, margin=0.05, level=0.95, reps=200, rng=rng)
    assert share < 0.2
    clear = population(rng, 300, judge=0.9, people=0.6)
    share, judge_share, person_share = settled_shares(clear, 300, margin=0.05, level=0.95, reps=200, rng=rng)
    assert share > 0.95 and judge_share == share and person_share == 0


def test_too_few_items_are_never_settled():
    # 8 items: fewer than MIN_ITEMS, too few to decide whatever the figures (the policy's one rule).
    counts = population(np.random.default_rng(4), 8, judge=0.95, people=0.5)
    share, _, _ = settled_shares(counts, 8, margin=0.05, level=0.95, reps=100, rng=np.random.default_rng(0))
    assert share == 0


def test_labels_for_width_hand_worked_and_ppi_saves_with_a_good_judge():
    # Labels alone: n = ceil((2 z)^2 var / w^2) = ceil(3.8415 * 4 * 0.25 / 0.01) = 385.
    flat = StratumMoments(n_cases=100000, var_y=0.25, var_f=0.25, cov_yf=0.0)
    assert labels_for_width([flat], 0.1, method="labels") == 385
    # A useless judge (no covariance): PPI++ falls back to the labels alone.
    assert labels_for_width([flat], 0.1, method="ppi") == 385
    good = StratumMoments(n_cases=100000, var_y=0.25, var_f=0.25, cov_yf=0.2)
    n_ppi = labels_for_width([good], 0.1, method="ppi")
    assert n_ppi is not None and n_ppi < 200
    assert labels_for_width([good], 0.001, method="ppi") is None  # not within the run's cases


def test_planned_ppi_labels_give_the_target_width():
    rng = np.random.default_rng(9)
    big = 5000
    truth = rng.random((300, big)) < 0.4
    judge = np.where(rng.random(truth.shape) < 0.9, truth, ~truth).astype(float)
    y_all = truth.astype(float)
    m = StratumMoments(
        n_cases=big,
        var_y=float(y_all[0].var(ddof=1)),
        var_f=float(judge[0].var(ddof=1)),
        cov_yf=float(np.cov(y_all[0], judge[0])[0, 1]),
    )
    n = labels_for_width([m], 0.08, method="ppi")
    assert n is not None
    _, low, high, _ = ppi_mean(y_all[:, :n], judge[:, :n], judge[:, n:])
    assert np.median(high - low) == pytest.approx(0.08, rel=0.05)


def test_cli_plan_on_the_embedded_sample(tmp_path):
    from typer.testing import CliRunner

    from cli_helpers import juge_main as app

    args = [
        "plan",
        "--items",
        str(juge.demo_path("items.jsonl")),
        "--judgments",
        str(juge.demo_path("judgments.jsonl")),
    ]
    res = CliRunner().invoke(app, [*args, "--json", str(tmp_path / "plan.json")])
    assert res.exit_code == 0, res.output
    saved = json.loads((tmp_path / "plan.json").read_text())
    rows = {d["category"]: d for d in saved["decisions"]}
    assert {"coding", "roleplay", "writing", "(overall)"} <= set(rows)
    for d in rows.values():
        assert (d["n_needed"] is None) == (d["n_more"] is None)
        if d["n_needed"] is not None:
            assert d["n_more"] == d["n_needed"] - d["n_items"] >= 0 and d["settled_at_needed"] >= 0.8
        else:
            assert d["cap"] == 10 * d["n_items"] and "not within" in d["note"]
    # Coding: the judge is clearly below people (gap -0.156); more items settle it as person.
    assert rows["coding"]["n_more"] > 0 and rows["coding"]["person_share"] > rows["coding"]["judge_share"]
    # Roleplay sits on the margin (gap -0.050): no number of labels in reach settles it.
    assert rows["roleplay"]["n_needed"] is None
    # The figures README shows (seed 0, 400 simulated studies per size).
    more = {c: (d["n_more"], d["cap"]) for c, d in rows.items()}
    assert more["coding"] == (46, 220) and more["roleplay"] == (None, 220) and more["writing"] == (None, 140)
    assert (more["math"][0], more["stem"][0], more["reasoning"][0], more["(overall)"][0]) == (16, 118, 1, 125)
    assert rows["coding"]["person_share"] == pytest.approx(0.815)
    # Roleplay (gap -0.050) and writing (-0.042) sit on the margin: no number of labels would decide them.
    assert rows["roleplay"]["on_margin"] and rows["writing"]["on_margin"] and not rows["extraction"]["on_margin"]
    assert (rows["roleplay"]["binding"], rows["roleplay"]["distance"]) == ("agreement", 0.0)
    res = CliRunner().invoke(app, [*args, "--probability", "1.5"])
    assert res.exit_code == 2


def test_cli_plan_width_on_a_run(tmp_path):
    """A judge right 95 % of the time on coding and 60 % on writing: PPI++ saves labels, stratified more."""
    from typer.testing import CliRunner

    from cli_helpers import juge_main as app
    from juge.data.records import Case, HumanLabel, Judgment
    from juge.store import Store

    rng = np.random.default_rng(5)
    cases, labels, judged = [], [], []
    for cat, acc, rate in (("coding", 0.97, 0.8), ("writing", 0.6, 0.3)):
        for k in range(1000):
            item = f"{cat}-{k}"
            truth = rng.random() < rate
            cases.append(Case(id=item, question="q", output="o", category=cat))
            judged.append((item, truth if rng.random() < acc else not truth))
            if k < 60:
                labels.append(HumanLabel(item_id=item, rater_id="r", label="PASS" if truth else "FAIL"))
    with Store(tmp_path / "j.db") as store:
        store.create_run(dataset_hash="d", juge_version="t", run_id="r1", cases=cases)
        for item, says in judged:
            verdict = "PASS" if says else "FAIL"
            store.save_judgment(
                "r1",
                Judgment(item_id=item, judge="g", model="m", template="t", text=verdict, verdict=verdict, outcome="ok"),
            )
    labels_path = tmp_path / "labels.jsonl"
    labels_path.write_text("".join(lab.model_dump_json() + "\n" for lab in labels))
    args = ["plan", "--run", "r1", "--labels", str(labels_path), "--db", str(tmp_path / "j.db"), "--width", "0.06"]
    res = CliRunner().invoke(app, [*args, "--json", str(tmp_path / "p.json")])
    assert res.exit_code == 0, res.output
    rate = json.loads((tmp_path / "p.json").read_text())["pass_rate"]
    assert (rate["n_cases"], rate["n_labelled"]) == (2000, 120)
    assert rate["ppi_helps"] and rate["rectifier_variance"] < rate["label_variance"]
    assert rate["labels_alone"] > rate["ppi"] > rate["stratified"]
    assert rate["saving_ppi"] == rate["labels_alone"] - rate["ppi"]
    # Neyman: writing (where the judge is weak) gets most of the labels.
    assert rate["allocation"]["writing"] > rate["allocation"]["coding"]
    assert sum(rate["allocation"].values()) == rate["stratified"]
    res = CliRunner().invoke(app, [*args[:-1], "0.001"])
    assert res.exit_code == 0 and "not within 2000" in res.output


def test_ppi_variance_ratio_hand_worked_and_against_simulated_ppi_plus_plus():
    from juge.policy.plan import correlation, ppi_variance_ratio

    # rho = 0.2 / 0.25 = 0.8; lambda = 0.8 / (1 + 100 / 999900); rectifier 0.25 - 2 lambda 0.2 + lambda^2 0.25.
    m = StratumMoments(n_cases=1_000_000, var_y=0.25, var_f=0.25, cov_yf=0.2)
    lam = 0.2 / ((1 + 100 / 999_900) * 0.25)
    se2 = (0.25 - 2 * lam * 0.2 + lam**2 * 0.25) / 100 + lam**2 * 0.25 / 999_900
    assert ppi_variance_ratio(m, 100) == pytest.approx(se2 * (1 + 1 / 97) / (0.25 / 100))
    assert correlation(m) == pytest.approx(0.8)
    assert ppi_variance_ratio(m, 3) is None
    # 20 labels of 520 cases, pass rate 0.6: the variance of PPI++'s estimate (lambda estimated each time)
    # over the labels' alone, in 8,000 simulated studies, against the ratio predicted from the process.
    rng = np.random.default_rng(0)
    for acc, helps in ((0.5, False), (0.75, True), (0.9, True)):
        n, big = 20, 500
        truth = rng.random((8000, n + big)) < 0.6
        judge = np.where(rng.random(truth.shape) < acc, truth, ~truth).astype(float)
        y = truth.astype(float)
        theta, *_ = ppi_mean(y[:, :n], judge[:, :n], judge[:, n:])
        simulated = theta.var() / y[:, :n].mean(1).var()
        p_f = 0.6 * acc + 0.4 * (1 - acc)
        process = StratumMoments(n_cases=n + big, var_y=0.24, var_f=p_f * (1 - p_f), cov_yf=0.6 * acc - 0.6 * p_f)
        predicted = ppi_variance_ratio(process, n)
        assert predicted == pytest.approx(simulated, abs=0.05), acc
        assert (predicted < 1) == helps and (simulated < 1) == helps


def test_cli_plan_width_says_when_the_judge_is_too_weak(tmp_path):
    """A judge that guesses: PPI++ cannot beat the labels alone; the JSON says so and why."""
    from typer.testing import CliRunner

    from cli_helpers import juge_main as app
    from juge.data.records import Case, HumanLabel, Judgment
    from juge.store import Store

    rng = np.random.default_rng(6)
    cases, labels = [], []
    with Store(tmp_path / "j.db") as store:
        for k in range(400):
            truth = rng.random() < 0.5
            cases.append(Case(id=f"c{k}", question="q", output="o", category="a"))
            if k < 40:
                labels.append(HumanLabel(item_id=f"c{k}", rater_id="r", label="PASS" if truth else "FAIL"))
        store.create_run(dataset_hash="d", juge_version="t", run_id="r1", cases=cases)
        for k in range(400):
            verdict = "PASS" if rng.random() < 0.5 else "FAIL"
            store.save_judgment("r1", Judgment(item_id=f"c{k}", judge="g", model="m", template="t", text=verdict,
                                               verdict=verdict, outcome="ok"))  # fmt: skip
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(lab.model_dump_json() + "\n" for lab in labels))
    res = CliRunner().invoke(app, ["plan", "--run", "r1", "--labels", str(path), "--db", str(tmp_path / "j.db"),
                                   "--width", "0.3", "--json", str(tmp_path / "p.json")])  # fmt: skip
    assert res.exit_code == 0, res.output
    rate = json.loads((tmp_path / "p.json").read_text())["pass_rate"]
    assert not rate["ppi_helps"] and rate["ppi_variance_ratio"] >= 1
    assert abs(rate["correlation"]) < 0.3 and rate["ratio_at"] == rate["ppi"]
    assert 1 <= rate["most_saved"] < 1.1


@pytest.mark.parametrize("factor", ["nan", "1e308"])
def test_cli_plan_refuses_a_max_factor_that_is_no_size(tmp_path, factor):
    """NaN or 1e308 times the items is no size to simulate: exit 2 naming the option, not a traceback."""
    from typer.testing import CliRunner

    from cli_helpers import juge_main as app

    args = ["plan", "--items", str(juge.demo_path("items.jsonl")), "--judgments", str(juge.demo_path("judgments.jsonl")),
            "--max-factor", factor, "--json", str(tmp_path / "plan.json")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "--max-factor" in res.output and not (tmp_path / "plan.json").exists()
