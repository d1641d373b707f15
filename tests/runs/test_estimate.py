"""Corrected pass rate: PPI++ and Rogan-Gladen, validated on simulations where the truth is known."""

from __future__ import annotations

import numpy as np
import pytest

from juge.data.records import HumanLabel
from juge.errors import InputError
from juge.runs.corrected import corrected_pass_rate, human_pass_shares, ppi_mean, rogan_gladen, rogan_gladen_estimate
from juge.verdicts import CaseOutcome


def simulate(rng, n_studies, n, big_n, *, rate=0.3, sens=0.85, spec=0.9):
    """Studies with known truth: human PASS ~ Bernoulli(rate), judge errs with the given sens/spec."""
    truth = rng.random((n_studies, n + big_n)) < rate
    judge = np.where(truth, rng.random(truth.shape) < sens, rng.random(truth.shape) >= spec)
    return truth[:, :n].astype(float), judge[:, :n].astype(float), judge[:, n:].astype(float)


def test_ppi_interval_covers_the_true_rate_in_93_to_97_percent_of_1000_studies():
    rng = np.random.default_rng(20231103)
    y, fl, fu = simulate(rng, 1000, 200, 2000)
    theta, low, high, lam = ppi_mean(y, fl, fu, confidence=0.95)
    coverage = np.mean((low <= 0.3) & (0.3 <= high))
    assert 0.93 <= coverage <= 0.97
    # The judge-only rate is biased here (0.3*0.85 + 0.7*0.1 = 0.325): the correction must matter.
    naive_cover = np.mean(np.abs(fu.mean(1) - 0.3) < 1.96 * np.sqrt(0.325 * 0.675 / 2000))
    assert naive_cover < 0.5
    assert np.all((lam >= 0) & (lam <= 1))


def test_ppi_is_narrower_than_human_only_with_a_good_judge_and_falls_back_with_a_useless_one():
    rng = np.random.default_rng(1)
    y, fl, fu = simulate(rng, 200, 200, 2000, sens=0.95, spec=0.95)
    _, low, high, _ = ppi_mean(y, fl, fu)
    human_width = 2 * 1.96 * y.std(1, ddof=1) / np.sqrt(200)
    assert np.median((high - low) / human_width) < 0.6
    # A judge that ignores the truth: lambda near 0, the estimate near the human mean.
    y2 = (rng.random((200, 200)) < 0.3).astype(float)
    noise_l, noise_u = (rng.random((200, 200)) < 0.5).astype(float), (rng.random((200, 2000)) < 0.5).astype(float)
    theta2, _, _, lam2 = ppi_mean(y2, noise_l, noise_u)
    assert np.median(lam2) < 0.1
    assert np.median(np.abs(theta2 - y2.mean(1))) < 0.01


def test_ppi_matches_the_formula_on_a_hand_worked_case():
    y = np.array([1, 1, 0, 0, 1.0])
    fl = np.array([1, 0, 0, 1, 1.0])
    fu = np.array([1, 1, 0, 0, 0, 1.0])
    theta, low, high, lam = ppi_mean(y, fl, fu)
    n, big_n = 5, 6
    cov = np.cov(y, fl, ddof=1)[0, 1]  # 0.1
    var_f = np.var(np.concatenate([fl, fu]), ddof=1)
    expected_lam = cov / ((1 + n / big_n) * var_f)
    assert lam == pytest.approx(expected_lam)
    assert theta == pytest.approx(0.6 + expected_lam * (0.5 - 0.6))
    se = np.sqrt(np.var(y - expected_lam * fl, ddof=1) / n + expected_lam**2 * np.var(fu, ddof=1) / big_n)
    assert high - low == pytest.approx(2 * 1.959964 * se, rel=1e-5)


def test_rogan_gladen_hand_worked():
    # sens = 1/2, spec = 1, judge rate on unlabelled = 0.25 -> (0.25 + 1 - 1) / 0.5 = 0.5
    theta, sens, spec = rogan_gladen(np.array([1, 1, 0, 0.0]), np.array([1, 0, 0, 0.0]), np.array([1, 0, 0, 0.0]))
    assert (float(theta), float(sens), float(spec)) == (0.5, 0.5, 1.0)
    # A judge no better than chance: undefined.
    theta, _, _ = rogan_gladen(np.array([1, 0.0]), np.array([0, 1.0]), np.array([1, 0.0]))
    assert np.isnan(theta)


def test_rogan_gladen_bootstrap_interval_covers_in_most_studies():
    rng = np.random.default_rng(7)
    y, fl, fu = simulate(rng, 120, 200, 1000)
    hits = 0
    for i in range(120):
        est, _, _ = rogan_gladen_estimate(y[i], fl[i], fu[i], n_resamples=300, seed=i)
        hits += est.low <= 0.3 <= est.high
    assert 0.88 <= hits / 120 <= 0.995


def outcomes_and_labels(rng, n_cases=600, n_labelled=150):
    truth = rng.random(n_cases) < 0.4
    judge = np.where(truth, rng.random(n_cases) < 0.9, rng.random(n_cases) < 0.15)
    outcomes = {f"c{i}": CaseOutcome("pass" if judge[i] else "fail") for i in range(n_cases)}
    outcomes["c0"] = CaseOutcome("missing", ["judge j: unparsed"])
    labels = [
        HumanLabel(item_id=f"c{i}", rater_id="r1", label="PASS" if truth[i] else "FAIL") for i in range(n_labelled)
    ]
    return outcomes, labels


def test_corrected_pass_rate_reports_every_figure_and_recommends_ppi():
    outcomes, labels = outcomes_and_labels(np.random.default_rng(3))
    result = corrected_pass_rate(outcomes, human_pass_shares(labels), n_resamples=500)
    assert result["n_cases"] == 600 and result["n_labelled"] == 150 and result["n_missing_verdict"] == 1
    assert result["judge_only"]["n"] == 599  # the missing verdict is not in the judge-only rate
    for key in ("judge_only", "human_only", "ppi", "rogan_gladen"):
        est = result[key]
        assert est["low"] <= est["value"] <= est["high"], key
    assert result["recommended"] == "ppi++"
    # The corrected estimate has a narrower interval than the labels alone.
    width = lambda e: e["high"] - e["low"]  # noqa: E731
    assert width(result["ppi"]) < width(result["human_only"])


def test_labels_must_be_pass_fail_and_match_the_run():
    with pytest.raises(InputError, match="pairwise"):
        human_pass_shares([HumanLabel(item_id="a", rater_id="r", label="A")])
    with pytest.raises(InputError, match="--label-threshold"):
        human_pass_shares([HumanLabel(item_id="a", rater_id="r", label=4)])
    shares = human_pass_shares(
        [HumanLabel(item_id="a", rater_id="r1", label=4), HumanLabel(item_id="a", rater_id="r2", label=2)], threshold=3
    )
    assert shares == {"a": 0.5}
    with pytest.raises(InputError, match="none of the labelled items"):
        corrected_pass_rate({"x": CaseOutcome("pass")}, {"a": 1.0})


def test_cli_estimate_prints_every_figure_and_writes_json(tmp_path):
    import json

    from typer.testing import CliRunner

    from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
    from juge.data.records import Case, Judgment
    from juge.store import Store

    rng = np.random.default_rng(11)
    outcomes, labels = outcomes_and_labels(rng, n_cases=200, n_labelled=60)
    with Store(tmp_path / "j.db") as store:
        store.create_run(
            dataset_hash="d",
            juge_version="t",
            run_id="r1",
            cases=[Case(id=i, question="q", output="o") for i in outcomes],
        )
        for item, o in outcomes.items():
            verdict = {"pass": "PASS", "fail": "FAIL", "missing": None}[o.verdict]
            store.save_judgment(
                "r1",
                Judgment(
                    item_id=item,
                    judge="g",
                    model="m",
                    template="t",
                    text="...",
                    verdict=verdict,
                    outcome="ok" if verdict else "unparsed",
                ),
            )
    labels_path = tmp_path / "labels.jsonl"
    labels_path.write_text("".join(lab.model_dump_json() + "\n" for lab in labels))
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "estimate",
            "--run",
            "r1",
            "--labels",
            str(labels_path),
            "--db",
            str(tmp_path / "j.db"),
            "--json",
            str(tmp_path / "e.json"),
            "--resamples",
            "300",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "PPI++ (recommended)" in res.output
    # The missing count is a sentence with its n, not a cell under the estimates' "value [95% interval] n" header.
    n_missing = sum(o.verdict == "missing" for o in outcomes.values())
    missing = [line for line in res.output.splitlines() if "missing verdict" in line]
    assert len(missing) == 1 and missing[0].startswith(f"missing verdict: {n_missing} of {len(outcomes)} cases")
    assert not any("interval] n:" in line and "[" not in line.split("n:", 1)[1] for line in res.output.splitlines())
    saved = json.loads((tmp_path / "e.json").read_text())
    assert saved["n_labelled"] == 60 and saved["run_id"] == "r1"
    pairwise = tmp_path / "pair.jsonl"
    pairwise.write_text('{"item_id": "c1", "rater_id": "r", "label": "A"}\n')
    res = runner.invoke(app, ["estimate", "--run", "r1", "--labels", str(pairwise), "--db", str(tmp_path / "j.db")])
    assert res.exit_code == 2 and "pairwise" in res.output


def _naive_rogan_gladen_interval(y, fl, fu, n_resamples, seed):
    """Percentile interval by drawing case indices one resample at a time (the plain method)."""
    rng = np.random.default_rng(seed)
    boot = []
    for _ in range(n_resamples):
        i = rng.integers(0, len(y), len(y))
        k = rng.integers(0, len(fu), len(fu))
        sens = (y[i] * fl[i]).sum() / y[i].sum()
        spec = ((1 - y[i]) * (1 - fl[i])).sum() / (1 - y[i]).sum()
        boot.append(np.clip((fu[k].mean() + spec - 1) / (sens + spec - 1), 0, 1))
    return np.quantile(boot, [0.025, 0.975])


def test_rogan_gladen_interval_matches_plain_resampling_and_stays_small():
    import tracemalloc

    rng = np.random.default_rng(3)
    y = (rng.random(400) < 0.6).astype(float)
    fl = np.where(rng.random(400) < 0.85, y, 1 - y)
    fu = (rng.random(100_000) < 0.55).astype(float)
    tracemalloc.start()
    est, _, _ = rogan_gladen_estimate(y, fl, fu, n_resamples=2000, seed=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # A (resamples x cases) matrix would be 2000 x 100,000 x 8 bytes = 1.6 GB.
    assert peak < 64 * 2**20
    low, high = _naive_rogan_gladen_interval(y, fl, fu, 2000, seed=1)
    assert est.low == pytest.approx(low, abs=0.015) and est.high == pytest.approx(high, abs=0.015)


@pytest.mark.parametrize("given", [float("nan"), float("inf")])
def test_a_threshold_that_is_no_score_is_refused(given):
    """--threshold nan passed no score: every case of a score run counted as a fail (estimate, plan, label init)."""
    from juge.runs.verdicts import run_threshold

    with pytest.raises(InputError, match="--threshold"):
        run_threshold({"min_score": 7}, given)
    assert run_threshold({"min_score": 7}, 6.5) == 6.5 and run_threshold({"min_score": 7}) == 7
