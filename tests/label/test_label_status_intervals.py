"""`juge label status`: rater-vs-rater agreement and kappa carry a seeded bootstrap interval over items."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

import juge
from juge.cli import app
from juge.label.db import LabelStore
from juge.label.results import LabelStatus
from label_helpers import score_case, write_cases, write_rubric


def _project(tmp_path: Path, verdicts: dict[str, list[str]]) -> str:
    """A passfail project whose every item is labelled by every rater in `verdicts` (item i: verdicts[r][i])."""
    db_url = f"sqlite:///{tmp_path / 'labels.db'}"
    cases = [score_case(i) for i in range(len(next(iter(verdicts.values()))))]
    juge.label_init(
        "pf",
        cases=write_cases(tmp_path / "cases.jsonl", cases),
        task="passfail",
        rubric=write_rubric(tmp_path / "rubric.toml"),
        overlap=1.0,
        overlap_raters=len(verdicts),
        db_url=db_url,
    )
    position = {c.id: i for i, c in enumerate(cases)}
    tokens = {name: juge.label_add_rater(name, project="pf", db_url=db_url).token for name in verdicts}
    store = LabelStore(db_url)
    for name, said in verdicts.items():
        rater = store.rater_by_token(tokens[name])
        while (a := store.next_assignment(rater)) is not None:
            store.save_label(rater, a.id, said[position[a.case.id]])
    store.close()
    return db_url


def test_hand_worked_agreement_half_and_kappa_zero(tmp_path: Path) -> None:
    # ann P P F F, ben P F P F: 2 of 4 pairs equal; p_e = .5*.5 + .5*.5 = .5, so kappa = (.5 - .5) / .5 = 0.
    ann, ben = ["PASS", "PASS", "FAIL", "FAIL"], ["PASS", "FAIL", "PASS", "FAIL"]
    s = juge.label_status("pf", db_url=_project(tmp_path, {"ann": ann, "ben": ben}), resamples=500)
    assert s.agreement_estimate.value == pytest.approx(0.5) and s.agreement_estimate.n == 4
    assert s.kappa_estimate.value == pytest.approx(0.0) == pytest.approx(cohen_kappa_score(ann, ben))
    assert s.agreement_estimate.low < 0.5 < s.agreement_estimate.high


def test_intervals_resample_items_and_match_a_plain_item_bootstrap(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    n_items = 30
    truth = rng.random(n_items) < 0.5
    # Three raters per item, each flipping the truth 25 % of the time: an item's 3 pairs are not independent.
    verdicts = {
        name: ["PASS" if t != (rng.random() < 0.25) else "FAIL" for t in truth] for name in ("ann", "ben", "cal")
    }
    db_url = _project(tmp_path, verdicts)
    s = juge.label_status("pf", db_url=db_url)
    assert s == juge.label_status("pf", db_url=db_url)  # seeded: the same figures twice
    assert s.pairs == s.agreement_estimate.n == s.kappa_estimate.n == 3 * n_items

    # The pooled pairs, raters in name order, as label_status forms them.
    names = sorted(verdicts)
    pairs = [[(verdicts[a][i], verdicts[b][i]) for a in names for b in names if a < b] for i in range(n_items)]
    first = [p[0] for item in pairs for p in item]
    second = [p[1] for item in pairs for p in item]
    assert s.agreement_estimate.value == pytest.approx(np.mean(np.array(first) == np.array(second)))
    assert s.kappa_estimate.value == pytest.approx(cohen_kappa_score(first, second))
    assert s.kappa == pytest.approx(s.kappa_estimate.value) and s.agreement == pytest.approx(s.agreement_estimate.value)

    # A plain cluster bootstrap: draw items with replacement, keep all of an item's pairs.
    equal = np.array([sum(a == b for a, b in item) for item in pairs])
    draws = np.random.default_rng(0).integers(0, n_items, size=(4000, n_items))
    plain = np.percentile(equal[draws].sum(axis=1) / (3 * n_items), [2.5, 97.5])
    est = s.agreement_estimate
    assert est.low == pytest.approx(plain[0], abs=0.03) and est.high == pytest.approx(plain[1], abs=0.03)
    assert s.kappa_estimate.low < s.kappa_estimate.value < s.kappa_estimate.high


def test_cli_prints_the_intervals_and_json_carries_them_and_old_files_load(tmp_path: Path) -> None:
    ann, ben = ["PASS", "PASS", "FAIL", "FAIL", "PASS", "FAIL"], ["PASS", "FAIL", "PASS", "FAIL", "PASS", "FAIL"]
    db_url = _project(tmp_path, {"ann": ann, "ben": ben})
    runner = CliRunner()
    printed = runner.invoke(app, ["label", "status", "pf", "--db-url", db_url, "--resamples", "300"])
    assert printed.exit_code == 0, printed.output
    figures = {x.split("  ")[1].strip(): x.split("  ")[-1].strip() for x in printed.output.splitlines() if "  " in x}
    assert figures["agreement"].startswith("0.667 [") and figures["agreement"].endswith("] n=6")
    assert figures["Cohen's kappa"].startswith("0.333 [") and figures["Cohen's kappa"].endswith("] n=6")
    saved = json.loads(runner.invoke(app, ["label", "status", "pf", "--db-url", db_url, "--json", "-"]).output)
    assert set(saved["agreement_estimate"]) == {"value", "low", "high", "n"}
    assert saved["agreement_estimate"]["value"] == pytest.approx(saved["agreement"])
    old = {k: v for k, v in saved.items() if k not in ("agreement_estimate", "kappa_estimate")}
    assert LabelStatus.model_validate(old).agreement == saved["agreement"]


@pytest.mark.parametrize("n_items", [40, 9])
def test_status_gives_the_calibrate_ceiling_interval_not_only_its_value(tmp_path: Path, n_items: int) -> None:
    # The same labels, the same seed and resamples: `juge label status` and `juge calibrate` print one
    # figure, so one interval (status used to order PASS/FAIL and the items its own way, so it drew other
    # resamples; with few items the bootstrap draws items, not patterns, and their order matters).
    rng = np.random.default_rng(3)
    truth = rng.random(n_items) < 0.6
    said = {r: ["PASS" if (t if rng.random() < 0.8 else not t) else "FAIL" for t in truth] for r in ("ann", "ben")}
    db_url = _project(tmp_path, said)
    status = juge.label_status("pf", db_url=db_url)
    labels = tmp_path / "labels.jsonl"
    juge.label_export("pf", output=labels, db_url=db_url)
    ceiling = juge.calibrate(items=tmp_path / "cases.jsonl", labels=labels, split="all").ceiling
    for mine, theirs in ((status.kappa_estimate, ceiling.kappa), (status.agreement_estimate, ceiling.agreement)):
        assert (mine.value, mine.low, mine.high, mine.n) == pytest.approx(
            (theirs.value, theirs.low, theirs.high, theirs.n)
        )
