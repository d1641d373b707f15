"""juge calibrate over labels of an unequal-probability draw (issue 26 item 2): a pairwise study weights every
figure by 1 / chance (Hajek ratios, the bootstrap drawing items with their weights); a grade study refuses."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import juge
from cli_helpers import juge_main as app
from juge.calibration.pairtable import JudgeOnItem, PairItem
from juge.calibration.pairwise import Bootstrap, vs_people
from juge.stats import kappa_estimate, ratio_estimate
from juge.stats.bootstrap import pair_kappa_estimates


def test_hajek_ratio_and_kappa_by_hand():
    # Three items: agreeing pairs / pairs 1/1, 0/1, 2/2; chances 0.5, 0.25, 1 -> weights 2, 4, 1.
    # Hajek: (2*1 + 4*0 + 1*2) / (2*1 + 4*1 + 1*2) = 4 / 8.
    est = ratio_estimate([1, 0, 2], [1, 1, 2], item_weights=[2, 4, 1], n_resamples=200)
    assert est.value == pytest.approx(0.5) and est.n == 4 and est.n_items == 3
    assert ratio_estimate([1, 0, 2], [1, 1, 2], n_resamples=200).value == pytest.approx(0.75)
    # Kappa of the weighted pooled table: item 1 (A,A), item 2 (A,B), item 3 (B,B) twice.
    tables = np.zeros((3, 2, 2))
    tables[0, 0, 0], tables[1, 0, 1], tables[2, 1, 1] = 1, 1, 2
    pooled = 2 * tables[0] + 4 * tables[1] + 1 * tables[2]  # [[2, 4], [0, 2]] of 8
    p_o = np.trace(pooled) / 8
    p_e = (pooled.sum(1) @ pooled.sum(0)) / 64
    est = kappa_estimate(tables, item_weights=[2, 4, 1], n_resamples=200)
    assert est.value == pytest.approx((p_o - p_e) / (1 - p_e)) and est.n == 4
    # The same pairs without tables (what PASS/FAIL and score studies use): the same figure, resample for resample.
    (pairs,) = pair_kappa_estimates(["A", "A", "B", "B"], ["A", "B", "B", "B"], [0, 1, 2, 2], ["A", "B"], n_items=3,
                                    item_weights=[2, 4, 1], n_resamples=200)  # fmt: skip
    assert (pairs.value, pairs.low, pairs.high, pairs.n) == pytest.approx((est.value, est.low, est.high, est.n))
    with pytest.raises(ValueError, match="positive"):
        ratio_estimate([1], [1], item_weights=[0])


def _item(k: int, judge: str, votes: list[str]) -> PairItem:
    return PairItem(f"i{k}", f"g{k}", "c", None, False, 1, 1, tuple((f"r{j}", v) for j, v in enumerate(votes)),
                    {"j": JudgeOnItem(verdict=judge)})  # type: ignore[arg-type]  # fmt: skip


def test_a_decisive_draw_biases_unweighted_agreement_and_not_the_weighted_one():
    """2,000 pairs, 30 % decisive (the judge agrees with a person on 50 % of them, 90 % of the others): the truth is
    0.78. A decisive draw of 200 (4x the chance) read as a random sample leans to the decisive items' 0.5; weighted
    by 1 / chance it does not (200 repetitions: 0.780, its interval covering the truth in 95.5 %)."""
    rng = np.random.default_rng(4)
    n, budget = 2000, 200
    decisive = np.arange(n) < 0.3 * n
    agree = np.where(decisive, 0.5, 0.9)
    truth = float(agree.mean())
    weight = np.where(decisive, 4.0, 1.0)
    pi = weight * budget / weight.sum()
    plain, weighted, covered = [], [], 0
    for _ in range(200):
        drawn = np.flatnonzero(rng.random(n) < pi)
        items = []
        for k in drawn:
            votes = ["A" if rng.random() < agree[k] else "B" for _ in range(3)]
            items.append(_item(int(k), "A", votes))
        boot = Bootstrap(n_resamples=300, seed=1, item_weights={f"i{k}": 1 / pi[k] for k in drawn})
        w = vs_people(items, "j", boot)["agreement"]
        u = vs_people(items, "j", Bootstrap(n_resamples=10))["agreement"]
        weighted.append(w["value"])
        plain.append(u["value"])
        covered += w["low"] <= truth <= w["high"]
        # The weighted figure is the Hajek ratio, by hand: sum_i (agreeing votes / pi_i) / sum_i (votes / pi_i).
        hand = sum(sum(v == "A" for _, v in it.votes) / pi[int(it.item_id[1:])] for it in items) / sum(
            len(it.votes) / pi[int(it.item_id[1:])] for it in items
        )
        assert w["value"] == pytest.approx(hand)
    assert np.mean(plain) - truth < -0.05  # unweighted: 0.648 measured (0.63 of the draw decisive)
    assert abs(np.mean(weighted) - truth) < 0.01
    assert 0.90 <= covered / 200 <= 0.99


def _sample_selection(sample_dir: Path, tmp_path: Path) -> tuple[Path, dict[str, float]]:
    """A selection over the sample's items: coding and math drawn with chance 0.8, the rest 0.2."""
    rows = [json.loads(line) for line in (sample_dir / "items.jsonl").read_text().splitlines()]
    chance = {r["item_id"]: 0.8 if r["category"] in ("coding", "math") else 0.2 for r in rows}
    path = tmp_path / "init.json"
    path.write_text(json.dumps({"selection": {"method": "decisive", "budget": 100, "population": len(rows),
                                              "probabilities": chance}}))  # fmt: skip
    return path, chance


def test_calibrate_weights_a_pairwise_study_of_a_decisive_draw(tmp_path: Path, sample_dir: Path):
    selection, chance = _sample_selection(sample_dir, tmp_path)
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(app, ["calibrate", "--items", str(sample_dir / "items.jsonl"), "--judgments",
                                   str(sample_dir / "judgments.jsonl"), "--selection", str(selection), "--split",
                                   "all", "--resamples", "200", "--json", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    cal = json.loads(out.read_text())
    assert cal["weighting"] == "inverse-probability"
    assert cal["ceiling"]["krippendorff_alpha"] is None  # not weighted, so left out
    # Person vs person by hand, the Hajek ratio over the items' rater pairs.
    inputs = juge.calibration_inputs(items=sample_dir / "items.jsonl")
    votes: dict[str, list] = {}
    for lab in inputs.data.labels:
        votes.setdefault(lab.item_id, []).append(lab.label)
    num = sum(sum(a == b for a, b in combinations(v, 2)) / chance[i] for i, v in votes.items())
    den = sum(len(list(combinations(v, 2))) / chance[i] for i, v in votes.items())
    assert cal["ceiling"]["agreement"]["value"] == pytest.approx(num / den)
    plain = juge.calibrate(items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl", split="all",
                           resamples=200)  # fmt: skip
    assert plain.weighting == "none" and plain.ceiling.agreement.value != pytest.approx(num / den)
    assert cal["ceiling"]["agreement"]["n"] == plain.ceiling.agreement.n  # n counts the pairs, unweighted


def test_a_selection_that_misses_labelled_items_is_refused(tmp_path: Path, sample_dir: Path):
    selection, chance = _sample_selection(sample_dir, tmp_path)
    data = json.loads(selection.read_text())
    del data["selection"]["probabilities"][next(iter(chance))]
    selection.write_text(json.dumps(data))
    res = CliRunner().invoke(app, ["calibrate", "--items", str(sample_dir / "items.jsonl"), "--judgments",
                                   str(sample_dir / "judgments.jsonl"), "--selection", str(selection),
                                   "--json", str(tmp_path / "cal.json")])  # fmt: skip
    assert res.exit_code == 2 and not (tmp_path / "cal.json").exists()
    assert "no recorded chance" in res.output
