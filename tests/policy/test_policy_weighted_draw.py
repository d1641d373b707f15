"""juge policy derive and test over labels of an unequal-probability draw (issue 26 item 2): a pairwise policy of
the margin or lower-bound rule weights every figure of its category rows by 1 / chance (Hajek ratios, the
bootstrap drawing items with their weights) and records its ``weighting``; a guarantee, a cascade and a PASS/FAIL
or score policy still refuse such labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from grade_data import PASSFAIL_DEV, PASSFAIL_HOLDOUT, SCORE_DEV, write_study
from typer.testing import CliRunner

from cli_helpers import juge_main as app
from juge.policy.file import read_policy
from juge.policy.inputs import policy_study

RESAMPLES = "200"


def _inputs(sample_dir: Path) -> list[str]:
    return ["--items", str(sample_dir / "items.jsonl"), "--judgments", str(sample_dir / "judgments.jsonl")]


def _derive(tmp_path: Path, sample_dir: Path, name: str, *extra: str):
    out = tmp_path / f"{name}.json"
    res = CliRunner().invoke(app, ["policy", "derive", *_inputs(sample_dir), "--resamples", RESAMPLES, "--json",
                                   str(out), "-o", str(tmp_path / f"{name}.md"), *extra])  # fmt: skip
    return res, out


def _decisive_draw(tmp_path: Path, sample_dir: Path, judge: str) -> tuple[Path, dict[str, float]]:
    """A decisive-like draw: items where ``judge`` disagrees with the people's majority drawn 4x as often (0.8 vs
    0.2), so unweighted figures lean toward the judge's disagreements."""
    table = policy_study(items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl").data.table()  # type: ignore[union-attr]
    chance = {}
    for it in table.items:
        on = it.judges.get(judge)
        chance[it.item_id] = 0.8 if on is not None and on.label != it.majority else 0.2
    path = tmp_path / "init.json"
    path.write_text(json.dumps({"selection": {"method": "decisive", "budget": 100, "population": len(chance),
                                              "probabilities": chance}}))  # fmt: skip
    return path, chance


def _hajek_vs_people(items, key: str, chance: dict[str, float]) -> float:
    """Judge vs person by hand: sum_i (votes equal to the judge's label / pi_i) / sum_i (votes / pi_i)."""
    judged = [it for it in items if key in it.judges and it.judges[key].label is not None]
    num = sum(sum(v == it.judges[key].label for _, v in it.votes) / chance[it.item_id] for it in judged)
    den = sum(len(it.votes) / chance[it.item_id] for it in judged)
    return num / den


def test_derive_and_test_weight_a_decisive_draw(tmp_path: Path, sample_dir: Path):
    res, plain_path = _derive(tmp_path, sample_dir, "plain")
    assert res.exit_code == 0, res.output
    plain = json.loads(plain_path.read_text())
    assert "weighting" not in plain
    selection, chance = _decisive_draw(tmp_path, sample_dir, plain["judge"])
    res, out = _derive(tmp_path, sample_dir, "weighted", "--selection", str(selection))
    assert res.exit_code == 0, res.output
    policy = read_policy(out)  # the hash verifies with the new key
    assert policy["weighting"] == "inverse-probability"
    assert (
        "1 / its chance" in (tmp_path / "weighted.md").read_text()
        and "chance" not in (tmp_path / "plain.md").read_text()
    )
    table = policy_study(items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl").data.table()  # type: ignore[union-attr]
    dev = table.split("dev").items
    biased = 0
    for c, row in policy["categories"].items():
        key = policy["templates_by_category"][c]
        hand = _hajek_vs_people([it for it in dev if it.category == c], key, chance)
        assert row["vs_people"]["value"] == pytest.approx(hand)
        assert row["difference"]["value"] == pytest.approx(row["vs_people"]["value"] - row["ceiling"]["value"])
        assert row["vs_people"]["n"] == plain["categories"][c]["vs_people"]["n"]  # n counts the votes, unweighted
        if key == plain["templates_by_category"][c]:
            # the draw over-represents the judge's disagreements: unweighted, it looks further from the people
            biased += plain["categories"][c]["vs_people"]["value"] < hand - 0.01
    assert biased == len(policy["categories"])  # 0.54-0.76 unweighted, 0.78-0.90 weighted
    # The holdout test weights its figures the same way, and says so.
    tested = tmp_path / "test.json"
    res = CliRunner().invoke(app, ["policy", "test", "--policy", str(out), *_inputs(sample_dir), "--selection",
                                   str(selection), "--resamples", RESAMPLES, "--db", str(tmp_path / "j.db"),
                                   "--json", str(tested), "--no-fail"])  # fmt: skip
    assert res.exit_code == 0, res.output
    test = json.loads(tested.read_text())
    assert test["weighting"] == "inverse-probability"
    holdout = table.split("holdout").items
    decided = {d["item_id"] for d in test["items"] if d["route"] == "judge"}
    share = sum(1 / chance[it.item_id] for it in holdout if it.item_id in decided) / sum(
        1 / chance[it.item_id] for it in holdout
    )
    assert test["judge_decides"]["value"] == pytest.approx(share)
    for c, row in test["per_category"].items():
        key = policy["templates_by_category"].get(c, policy["judge"])
        hand = _hajek_vs_people([it for it in holdout if it.category == c], key, chance)
        assert row["holdout_gap"]["vs_people"]["value"] == pytest.approx(hand)


@pytest.mark.parametrize("extra", [["--rule", "guarantee"], ["--cascade", "chat-small,chat-strong"]],
                         ids=["guarantee", "cascade"])  # fmt: skip
def test_guarantee_and_cascade_still_refuse_a_decisive_draw(tmp_path: Path, sample_dir: Path, extra: list[str]):
    chance = {json.loads(line)["item_id"]: 0.8 if k % 2 else 0.2
              for k, line in enumerate((sample_dir / "items.jsonl").read_text().splitlines())}  # fmt: skip
    selection = tmp_path / "init.json"
    selection.write_text(json.dumps({"selection": {"method": "decisive", "probabilities": chance}}))
    res, out = _derive(tmp_path, sample_dir, "p", "--selection", str(selection), *extra)
    assert res.exit_code == 2, res.output
    assert not out.exists() and "decisive draw" in res.output


def test_a_pass_fail_policy_weights_a_decisive_draw(tmp_path: Path):
    """grade_data's PASS/FAIL study, the items where the judge differs from a rater drawn 4x as often (0.8 vs 0.2).
    refunds, per copy: 3 x FF judge F and 4 x PP judge P (weight 5 each), 1 x FF judge P and 2 x (F, P) judge P
    (weight 1.25 each). Judge vs each person: (3*5*2 + 4*5*2 + 2*1.25*1) / 2 (3*5 + 1.25 + 4*5 + 2*1.25) = 72.5 /
    77.5 = 0.935 (unweighted 0.800); failures caught 3*5*2 / (30 + 1.25*2 + 2*1.25) = 30 / 35 = 0.857 (0.600);
    one person of another's (30 + 2.5) / 35 = 0.929 (0.800): still below, a person decides."""
    items, labels, judgments = write_study(tmp_path, PASSFAIL_DEV + PASSFAIL_HOLDOUT)
    chance = {
        case["id"]: 0.2 if call["verdict"] == labs[0]["label"] == labs[1]["label"] else 0.8
        for case, labs, call in PASSFAIL_DEV + PASSFAIL_HOLDOUT
    }
    selection = tmp_path / "init.json"
    selection.write_text(json.dumps({"selection": {"method": "decisive", "probabilities": chance}}))
    study = ["--items", str(items), "--labels", str(labels), "--judgments", str(judgments), "--selection",
             str(selection), "--resamples", RESAMPLES]  # fmt: skip
    out = tmp_path / "policy.json"
    res = CliRunner().invoke(app, ["policy", "derive", *study, "--json", str(out), "-o", str(tmp_path / "P.md")])
    assert res.exit_code == 0, res.output
    policy = read_policy(out)
    assert policy["weighting"] == "inverse-probability"
    refunds = policy["categories"]["refunds"]
    assert refunds["judge"]["agreement"]["value"] == pytest.approx(72.5 / 77.5)
    assert refunds["judge"]["failures_caught"]["rate"]["value"] == pytest.approx(30 / 35)
    assert refunds["people"]["failures_caught"]["rate"]["value"] == pytest.approx(32.5 / 35)
    assert refunds["judge"]["failures_caught"]["k"] == 18  # counts as labelled: 6 of 10 per copy, 3 copies
    assert refunds["decision"] == "person", refunds["decision"]
    assert "1 / its chance" in (tmp_path / "P.md").read_text() and "Hajek ratio" in res.output  # said on screen
    tested = tmp_path / "test.json"
    res = CliRunner().invoke(app, ["policy", "test", "--policy", str(out), *study, "--db", str(tmp_path / "j.db"),
                                   "--json", str(tested), "--no-fail"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(tested.read_text())["weighting"] == "inverse-probability"
    # A score policy still refuses such labels.
    write_study(tmp_path / "s", SCORE_DEV)
    s_chance = {case["id"]: 0.8 if k % 2 else 0.2 for k, (case, _, _) in enumerate(SCORE_DEV)}
    (tmp_path / "s" / "init.json").write_text(json.dumps({"selection": {"method": "decisive",
                                                                        "probabilities": s_chance}}))  # fmt: skip
    res = CliRunner().invoke(app, ["policy", "derive", "--items", str(tmp_path / "s/items.jsonl"), "--labels",
                                   str(tmp_path / "s/labels.jsonl"), "--judgments", str(tmp_path / "s/judgments.jsonl"),
                                   "--selection", str(tmp_path / "s/init.json"), "--json", str(tmp_path / "s/p.json")])  # fmt: skip
    assert res.exit_code == 2 and not (tmp_path / "s/p.json").exists(), res.output
