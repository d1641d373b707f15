"""Rule 6 counts only what routing does: inconsistent items stay out of the threshold walk, coverage is over all
items, and the holdout check reads the items the policy actually sent to the judge."""

from __future__ import annotations

import pytest
from test_policy_rules import BOOT, calls, study

from juge.data.records import Case, HumanLabel
from juge.policy.derivation import PairStudyData, derive_policy, policy_markdown
from juge.policy.holdout import run_holdout_test
from juge.store import Store


def split_data(split: str) -> PairStudyData:
    """30 consistent right items; 6 whose orders disagree (people: tie, so 'tie' would count as right);
    2 consistent items without a majority; 2 with an unparsed order. 40 items."""
    data = study([("c", ["A", "A"], {"j": "A"})] * 30, split=split)

    def add(name: str, votes: list[str], judged: list) -> None:
        item_id = f"{split}-{name}"
        data.cases.append(
            Case(
                id=item_id,
                group=f"{split}-g-{name}",
                category="c",
                question="q",
                output_1="a",
                output_2="b",
                split=split,
            )
        )
        data.labels.extend(HumanLabel(item_id=item_id, rater_id=f"r{i}", label=v) for i, v in enumerate(votes))
        data.judgments.extend(judged(item_id))

    for k in range(6):
        add(f"flip{k}", ["tie", "tie"], lambda i: calls(i, "j", "plain", "A", "B"))
    for k in range(2):
        add(f"split{k}", ["A", "B"], lambda i: calls(i, "j", "plain", "A", "A"))
    for k in range(2):
        add(f"broken{k}", ["A", "A"], lambda i: calls(i, "j", "plain", "A", "A", outcome21="unparsed"))
    return data


def test_inconsistent_items_stay_out_of_the_walk_and_coverage_counts_every_dev_item():
    g = derive_policy(split_data("dev"), rule="guarantee", target=0.9, confidence=0.9, boot=BOOT)["guarantee"]
    assert g["threshold"] == 1.0 and [s["threshold"] for s in g["steps"]] == [1.0]  # 0 is no candidate
    assert g["n_calibration"] == 30  # consistent verdict and a majority
    assert (g["n_covered"], g["n_items"]) == (32, 40) and g["coverage"] == pytest.approx(32 / 40)


def test_holdout_guarantee_is_checked_on_the_items_routed_to_the_judge(tmp_path):
    dev, held = split_data("dev"), split_data("holdout")
    policy = derive_policy(dev, rule="guarantee", target=0.9, confidence=0.9, boot=BOOT)
    assert "covering 32 of all 40 dev items" in policy_markdown(policy)
    data = PairStudyData(dev.cases + held.cases, dev.labels + held.labels, dev.judgments + held.judgments, {}, {})
    with Store(tmp_path / "j.db") as store:
        result = run_holdout_test(policy, data, store, boot=BOOT)
    judged = [d for d in result["items"] if d["route"] == "judge"]
    g = result["guarantee"]
    assert len(judged) == 32 and g["n_covered"] == 32 and g["n_items"] == 40
    assert g["disagreement"]["n"] == 30 and g["n_covered_without_majority"] == 2
    assert g["disagreement"]["value"] == 0.0 and g["held"] is True
