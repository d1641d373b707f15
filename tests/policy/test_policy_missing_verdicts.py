"""Missing verdicts earn nothing: rule 1 compares candidates on shared items and shows coverage; rule 3 compares
judge vs person and person vs person on the same items."""

from __future__ import annotations

import pytest
from test_policy_rules import BOOT, study

from juge.policy.derivation import derive_policy, policy_markdown


def lazy_and_good():
    """10 items, majority A. 'good' answers all, wrong on 0-3 (6/10). 'lazy' answers only 4-8, wrong on 8 (4/5)."""
    spec = []
    for k in range(10):
        verdicts = {"good": "B" if k < 4 else "A"}
        if 4 <= k <= 8:
            verdicts["lazy"] = "B" if k == 8 else "A"
        spec.append(("c", ["A", "A"], verdicts))
    return study(spec)


def test_rule1_compares_on_shared_items_and_reports_coverage():
    policy = derive_policy(lazy_and_good(), boot=BOOT)
    sel = policy["selection"]
    assert sel["chosen"] == "good/plain" and sel["n_shared_items"] == 5
    rows = {r["key"]: r for r in sel["candidates"]}
    assert rows["good/plain"]["vs_majority"]["agreement"]["value"] == 1.0  # 5 of 5 shared
    assert rows["lazy/plain"]["vs_majority"]["agreement"]["value"] == pytest.approx(0.8)
    assert rows["lazy/plain"]["coverage"] == {"value": 0.5, "n_with_verdict": 5, "n_items": 10}
    assert rows["good/plain"]["coverage"]["value"] == 1.0
    diff = sel["difference"]
    assert diff["n_items"] == 5 and diff["difference"]["value"] == pytest.approx(0.2)
    md = policy_markdown(policy)
    assert "5 shared items" in md and "50.0% (5 of 10)" in md


def test_rule3_compares_both_agreements_on_the_items_the_judge_answered():
    # The judge answers 4 items the raters agree on (3 right) and has no verdict on 4 items they split on.
    spec = [("c", ["A", "A"], {"j": "A"})] * 3 + [("c", ["A", "A"], {"j": "B"})] + [("c", ["A", "B"], {})] * 4
    row = derive_policy(study(spec), boot=BOOT)["categories"]["c"]
    assert (row["n_items"], row["n_with_verdict"], row["n_votes"]) == (8, 4, 8)
    assert row["vs_people"]["value"] == pytest.approx(6 / 8) and row["ceiling"]["value"] == 1.0
    assert row["gap"] == -0.25 and row["decision"] == "person"
    assert row["difference"]["value"] == pytest.approx(-0.25)
