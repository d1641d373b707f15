"""The README's worked policy example quotes figures from the embedded sample: they must be the ones
`juge policy derive` computes (a reader checks them against the command's output)."""

from __future__ import annotations

import re
from pathlib import Path

import juge

README = Path(__file__).resolve().parents[2] / "README.md"


def _interval(e: dict) -> str:
    return f"{e['value']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"


def test_readme_quotes_the_derived_policy_figures() -> None:
    demo = juge.demo_path("items.jsonl").parent
    policy = juge.policy.derive(items=demo / "items.jsonl", judgments=demo / "judgments.jsonl").to_dict()
    selection = policy["selection"]
    chosen = next(c for c in selection["candidates"] if c["key"] == selection["chosen"])
    majority = chosen["vs_majority"]["agreement"]
    coding = policy["categories"]["coding"]
    text = " ".join(README.read_text(encoding="utf-8").split())  # the README wraps its lines anywhere

    sentence = re.search(r"On the sample: the judge is `([^`]+)` \(agreement with the majority ([^)]*?), n=(\d+)", text)
    assert sentence, "the README's policy example sentence is gone"
    assert sentence.group(1) == selection["chosen"]
    assert sentence.group(2) == _interval(majority)
    assert int(sentence.group(3)) == majority["n"]
    assert f"paired difference {_interval(selection['difference']['difference'])}" in text
    assert (
        f"judge vs person {coding['vs_people']['value']:.3f}, person vs person {coding['ceiling']['value']:.3f}, "
        f"a gap of {coding['gap']:.3f}" in text
    )
    roleplay = policy["categories"]["roleplay"]
    assert roleplay["decision"] == "judge"
    assert f"Roleplay stays with the judge at a gap of exactly {roleplay['gap']:.3f}" in text
    assert f"the runner-up `{selection['runner_up'].split('/')[0]}` is within noise" in text
