"""Stratified PPI++ (juge estimate --strata category): cross-checked against ppi_python for the PPI++ parts, a
hand-worked combination, and simulations where the truth is known."""

from __future__ import annotations

import json

import numpy as np
import pytest

from juge.runs.corrected import PassRateStudy, ppi_mean, stratified_pass_rate, stratified_ppi_mean


def test_ppi_mean_matches_ppi_python_interval_and_lambda():
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(3)
    n, big_n = 400, 3000
    truth = rng.random(n + big_n) < 0.35
    judge = np.where(truth, rng.random(n + big_n) < 0.85, rng.random(n + big_n) < 0.1).astype(float)
    y, fl, fu = truth[:n].astype(float), judge[:n], judge[n:]
    theta, low, high, lam = ppi_mean(y, fl, fu, confidence=0.9)
    # ppi_python's lambda uses a 1/n covariance (ours 1/(n-1)) and np.std (ddof 0): equal up to O(1/n).
    lo_ref, hi_ref = ppi_py.ppi_mean_ci(y, fl, fu, alpha=0.1)
    assert float(low) == pytest.approx(float(lo_ref[0]), abs=2e-4)
    assert float(high) == pytest.approx(float(hi_ref[0]), abs=2e-4)
    # At the same lambda the point estimate is the same formula exactly.
    assert float(theta) == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, fl, fu, lam=float(lam))[0]))


def test_stratified_combination_hand_worked():
    # Stratum a: 3 labelled, 3 unlabelled; stratum b: 2 labelled, no unlabelled (labels alone, lambda 0).
    a = (np.array([1, 0, 1.0]), np.array([1, 0, 1.0]), np.array([1, 1, 0.0]))
    b = (np.array([1, 0.0]), np.array([0, 0.0]), np.array([]))
    theta, low, high, parts = stratified_ppi_mean([a, b], [6 / 8, 2 / 8], confidence=0.95)
    # a: cov(y, f) = 1/3, var(f over all 6) = 4/15, lambda = (1/3) / ((1 + 3/3) 4/15) = 5/8;
    # theta_a = 2/3 + 5/8 (2/3 - 2/3) = 2/3; y - lambda f = (3/8, 0, 3/8): var 3/64;
    # PPI++ alone: se_a^2 = (3/64)/3 + (25/64)(1/3)/3; the rectifier's variance 3/64 is under the floor
    # q (1 - q) = 4/25 (q = 1/5), so se_a^2 = (4/25)/3 + 25/576.
    t_a, v_a, lam_a = parts[0]
    assert float(lam_a) == pytest.approx(5 / 8)
    assert float(t_a) == pytest.approx(2 / 3)
    assert float(v_a) == pytest.approx(4 / 75 + 25 / 576)
    # b: theta 1/2, se^2 = var(1, 0) / 2 = 0.25 (above the floor 1/4 * 3/4).
    assert (float(parts[1][0]), float(parts[1][1]), float(parts[1][2])) == (0.5, 0.25, 0.0)
    assert float(theta) == pytest.approx(0.75 * 2 / 3 + 0.25 * 0.5)
    se = np.sqrt(0.75**2 * (4 / 75 + 25 / 576) + 0.25**2 * 0.25)
    assert float(high - low) == pytest.approx(2 * 1.959964 * se, rel=1e-5)


def simulate(rng, reps, rates, accuracies, n_lab, n_unl):
    """Per stratum: (reps, n) labels and judge verdicts, the judge right with the stratum's accuracy."""
    strata = []
    for rate, acc, n, big_n in zip(rates, accuracies, n_lab, n_unl, strict=True):
        truth = rng.random((reps, n + big_n)) < rate
        judge = np.where(rng.random(truth.shape) < acc, truth, ~truth).astype(float)
        strata.append((truth[:, :n].astype(float), judge[:, :n], judge[:, n:]))
    return strata


def run_both(strata, shares):
    theta, low, high, _ = stratified_ppi_mean(strata, shares)
    pooled = [np.concatenate([s[i] for s in strata], axis=1) for i in range(3)]
    _, p_low, p_high, _ = ppi_mean(*pooled)
    return low, high, p_low, p_high


N_LAB, N_UNL = (60, 60, 60), (600, 600, 600)  # labels allocated in proportion to the strata's sizes
SHARES = [1 / 3] * 3


def test_stratified_ppi_covers_and_is_narrower_when_the_judge_s_accuracy_differs_by_category():
    rng = np.random.default_rng(2024)
    rates, accuracies = (0.8, 0.5, 0.2), (0.98, 0.55, 0.85)  # near-perfect, near-chance, good
    low, high, p_low, p_high = run_both(simulate(rng, 500, rates, accuracies, N_LAB, N_UNL), SHARES)
    truth = np.mean(rates)
    coverage = np.mean((low <= truth) & (truth <= high))
    assert 0.93 <= coverage <= 0.97
    assert np.mean((p_low <= truth) & (truth <= p_high)) >= 0.93
    ratio = np.median((high - low) / (p_high - p_low))
    assert ratio < 0.9


def test_stratified_ppi_is_no_wider_when_the_judge_is_equally_good_everywhere():
    rng = np.random.default_rng(7)
    rates, accuracies = (0.4, 0.4, 0.4), (0.85, 0.85, 0.85)
    low, high, p_low, p_high = run_both(simulate(rng, 500, rates, accuracies, N_LAB, N_UNL), SHARES)
    assert 0.93 <= np.mean((low <= 0.4) & (0.4 <= high)) <= 0.97
    assert np.median((high - low) / (p_high - p_low)) <= 1.02


def test_strata_with_one_label_are_pooled_and_weights_are_the_shares_of_cases():
    ids_l = ["a1", "a2", "a3", "b1", "c1"]
    ids_u = ["a4", "a5", "b2", "b3", "c2", "c3", "c4"]
    study = PassRateStudy(
        labelled_ids=ids_l,
        unlabelled_ids=ids_u,
        y=np.array([1, 0, 1, 1, 0.0]),
        f_labelled=np.array([1, 0, 1, 1, 1.0]),
        f_unlabelled=np.array([1, 0, 1, 0, 1, 0, 0.0]),
        n_missing=0,
        n_labels_not_in_run=0,
    )
    strata = {i: i[0] for i in ids_l + ids_u}
    est = stratified_pass_rate(study, strata)
    assert est.pooled == ["b", "c"]
    rows = {s.stratum: s for s in est.strata}
    assert set(rows) == {"a", "(pooled)"}
    assert (rows["a"].n, rows["a"].n_labelled, rows["a"].weight) == (5, 3, 5 / 12)
    assert (rows["(pooled)"].n, rows["(pooled)"].n_labelled) == (7, 2)
    assert est.value == pytest.approx(5 / 12 * rows["a"].value + 7 / 12 * rows["(pooled)"].value)


def test_cli_estimate_strata_category_writes_each_stratum(tmp_path):
    from typer.testing import CliRunner

    from cli_helpers import juge_main as app
    from juge.data.records import Case, HumanLabel, Judgment
    from juge.store import Store

    rng = np.random.default_rng(5)
    cases, labels = [], []
    with Store(tmp_path / "j.db") as store:
        judged = []
        for cat, acc in (("coding", 0.95), ("writing", 0.6)):
            for k in range(150):
                item = f"{cat}-{k}"
                truth = rng.random() < 0.5
                says = truth if rng.random() < acc else not truth
                cases.append(Case(id=item, question="q", output="o", category=cat))
                judged.append((item, says))
                if k < 40:
                    labels.append(HumanLabel(item_id=item, rater_id="r", label="PASS" if truth else "FAIL"))
        store.create_run(dataset_hash="d", juge_version="t", run_id="r1", cases=cases)
        for item, says in judged:
            verdict = "PASS" if says else "FAIL"
            store.save_judgment(
                "r1",
                Judgment(item_id=item, judge="g", model="m", template="t", text=verdict, verdict=verdict, outcome="ok"),
            )
    labels_path = tmp_path / "labels.jsonl"
    labels_path.write_text("".join(lab.model_dump_json() + "\n" for lab in labels))
    args = ["estimate", "--run", "r1", "--labels", str(labels_path), "--db", str(tmp_path / "j.db")]
    res = CliRunner().invoke(app, [*args, "--strata", "category", "--json", str(tmp_path / "e.json")])
    assert res.exit_code == 0, res.output
    saved = json.loads((tmp_path / "e.json").read_text())
    strat = saved["stratified"]
    assert strat["by"] == "category" and strat["n"] == 300
    assert [(s["stratum"], s["n"], s["n_labelled"], s["weight"]) for s in strat["strata"]] == [
        ("coding", 150, 40, 0.5),
        ("writing", 150, 40, 0.5),
    ]
    assert strat["strata"][0]["lambda"] > strat["strata"][1]["lambda"]
    assert strat["value"] == pytest.approx(sum(s["weight"] * s["value"] for s in strat["strata"]))
    # Asked for, with 40 labels in each stratum: it is the figure to report.
    assert saved["recommended"] == "stratified"
    assert "stratified PPI++ (by category) (recommended)" in res.output and "Why stratified PPI++" in res.output
    res = CliRunner().invoke(app, [*args, "--json", str(tmp_path / "plain.json")])
    plain = json.loads((tmp_path / "plain.json").read_text())
    assert plain["stratified"] is None and plain["recommended"] == "ppi++"
    res = CliRunner().invoke(app, [*args, "--strata", "group"])
    assert res.exit_code == 2


def test_a_neyman_allocation_keeps_stratified_coverage_and_biases_pooled_ppi():
    """Labels drawn per category in proportion to N_k sigma_k (what juge plan allocates), not to size: the
    stratified estimate weights categories by their shares of the cases, so it stays unbiased; pooling the
    labels as one random sample over-weights the category labelled most."""
    from juge.runs.corrected import moments, neyman

    rng = np.random.default_rng(11)
    rates, accuracies = (0.8, 0.5, 0.2), (0.98, 0.55, 0.85)
    pilot = simulate(rng, 1, rates, accuracies, (200, 200, 200), (800, 800, 800))
    strata_moments = [moments(y[0], fl[0], np.concatenate([fl[0], fu[0]])) for y, fl, fu in pilot]
    alloc = neyman(strata_moments, 180)
    assert alloc[1] > 2 * alloc[0]  # the near-chance category gets the labels
    sims = simulate(rng, 500, rates, accuracies, alloc, [1000 - a for a in alloc])
    theta, low, high, _ = stratified_ppi_mean(sims, SHARES)
    truth = np.mean(rates)
    assert 0.93 <= np.mean((low <= truth) & (truth <= high)) <= 0.97
    assert abs(np.mean(theta) - truth) < 0.005
    pooled = [np.concatenate([s[i] for s in sims], axis=1) for i in range(3)]
    p_theta, p_low, p_high, _ = ppi_mean(*pooled)
    assert abs(np.mean(p_theta) - truth) > 0.02  # biased towards the over-sampled category
    assert np.mean((p_low <= truth) & (truth <= p_high)) < 0.9
    # The same 180 labels in proportion to size: wider than Neyman's allocation.
    _, prop_low, prop_high, _ = stratified_ppi_mean(simulate(rng, 500, rates, accuracies, N_LAB, (940,) * 3), SHARES)
    assert np.median(high - low) < 0.95 * np.median(prop_high - prop_low)


def test_estimate_reads_the_recorded_selection_and_estimates_labels_drawn_by_category_by_category(tmp_path):
    """Labels drawn by `label init --select stratified` (coding heavily over-sampled against its share): with the
    selection the estimate is stratified (recommended, no --strata needed); a label outside the selection's
    categories is refused."""
    from juge.data.records import Case, HumanLabel, Judgment
    from juge.errors import InputError
    from juge.label.selection import select_cases
    from juge.runs.api import estimate
    from juge.store import Store

    rng = np.random.default_rng(8)
    cases, verdicts, truth = [], {}, {}
    for cat, size, acc, rate in (("coding", 100, 0.97, 0.9), ("writing", 900, 0.6, 0.3)):
        for k in range(size):
            item = f"{cat}-{k}"
            truth[item] = rng.random() < rate
            verdicts[item] = truth[item] if rng.random() < acc else not truth[item]
            cases.append(Case(id=item, question="q", output="o", category=cat))
    with Store(tmp_path / "j.db") as store:
        store.create_run(dataset_hash="d", juge_version="t", run_id="r1", cases=cases)
        for item, says in verdicts.items():
            v = "PASS" if says else "FAIL"
            store.save_judgment("r1", Judgment(item_id=item, judge="g", model="m", template="t", text=v, verdict=v,
                                               outcome="ok"))  # fmt: skip
    # Half the budget on coding, 10 % of the cases: a pooled estimate would lean towards coding's 0.9.
    coding = [c for c in cases if c.category == "coding"]
    picked, sel = select_cases(coding, method="stratified", budget=50, seed=1)
    writing, _ = select_cases([c for c in cases if c.category == "writing"], method="stratified", budget=50, seed=2)
    recorded = sel.model_dump()
    recorded["strata"].append({"stratum": "writing", "population": 900, "selected": 50, "probability": 50 / 900})
    path = tmp_path / "init.json"
    path.write_text(json.dumps({"project": "p", "selection": recorded}))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(
            HumanLabel(item_id=c.id, rater_id="r", label="PASS" if truth[c.id] else "FAIL").model_dump_json() + "\n"
            for c in [*picked, *writing]
        )
    )
    result = estimate("r1", labels, db=tmp_path / "j.db", selection=path)
    assert result.recommended == "stratified" and result.stratified is not None
    assert [(s.stratum, s.weight) for s in result.stratified.strata] == [("coding", 0.1), ("writing", 0.9)]
    assert any("labels drawn by category" in n for n in result.notes)
    # The truth here is about 0.1 * 0.9 + 0.9 * 0.3 = 0.36; the human-only mean of these labels is about 0.6.
    assert result.stratified.low <= np.mean(list(truth.values())) <= result.stratified.high
    assert result.human_only.value > 0.5
    bad = dict(recorded, strata=[s for s in recorded["strata"] if s["stratum"] == "coding"])
    path.write_text(json.dumps({"selection": bad}))
    with pytest.raises(InputError, match="did not draw"):
        estimate("r1", labels, db=tmp_path / "j.db", selection=path)
    path.write_text(json.dumps({"project": "p"}))
    with pytest.raises(InputError, match="no selection"):
        estimate("r1", labels, db=tmp_path / "j.db", selection=path)
