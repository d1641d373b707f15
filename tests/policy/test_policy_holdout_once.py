"""The holdout is used once: a subset, relabelled or renamed copy is the same holdout; the check and the record
are one transaction; an unwritable --json does not use it up."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from test_policy_rules import BAD_CATEGORY, BOOT, ROUNDING_CATEGORY, study
from typer.testing import CliRunner

from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
from juge.data.records import HumanLabel
from juge.policy.derivation import PairStudyData, derive_policy
from juge.policy.holdout import HoldoutAlreadyUsed, run_holdout_test
from juge.store import Store

HOLDOUT = [
    ("roleplay", ["A", "A"], {"j": "A"}),
    ("roleplay", ["B", "B"], {"j": "B"}),
    ("coding", ["A", "A"], {"j": "A"}),
    ("coding", ["A", "B"], {"j": "A"}),
]


def data(holdout_spec=HOLDOUT, split="holdout") -> PairStudyData:
    dev, held = study(ROUNDING_CATEGORY + BAD_CATEGORY), study(holdout_spec, split=split)
    return PairStudyData(
        dev.cases + held.cases, dev.labels + held.labels, dev.judgments + held.judgments, {}, {"items": "test"}
    )


@pytest.fixture()
def policy():
    return derive_policy(data(), boot=BOOT)


def test(policy, d, store, **kw):
    return run_holdout_test(policy, d, store, boot=BOOT, **kw)


test.__test__ = False  # a helper, not a test


def _dropped_one(d):
    d.cases = [c for c in d.cases if c.id != "holdout-coding-3"]
    return d


def _relabelled(d):
    d.labels = [
        HumanLabel(item_id=lab.item_id, rater_id=lab.rater_id, label="B")
        if lab.item_id == "holdout-roleplay-0"
        else lab
        for lab in d.labels
    ]
    return d


def _renamed(d):
    for c in d.cases:
        if c.split == "holdout":
            c.split = "final"
    return d


def _one_group_shared(d):
    # A new item id, but in the group of an item already tested.
    new = study([("coding", ["A", "A"], {"j": "A"})], split="holdout")
    new.cases[0].id, new.cases[0].group = "fresh-item", "holdout-g0"
    for lab in new.labels:
        lab.item_id = "fresh-item"
    for j in new.judgments:
        j.item_id = "fresh-item"
    d.cases = [c for c in d.cases if c.split != "holdout"] + new.cases
    d.labels += new.labels
    d.judgments += new.judgments
    return d


@pytest.mark.parametrize("change", [_dropped_one, _relabelled, _renamed, _one_group_shared])
def test_a_changed_copy_of_a_used_holdout_is_refused_without_force(tmp_path, policy, change):
    with Store(tmp_path / "j.db") as store:
        first = test(policy, data(), store)
        changed = change(data())
        split = "final" if change is _renamed else "holdout"
        with pytest.raises(HoldoutAlreadyUsed, match="already tested"):
            test(policy, changed, store, split=split)
        assert store.conn.execute("SELECT COUNT(*) FROM holdout_uses").fetchone()[0] == 1
        forced = test(policy, change(data()), store, split=split, force=True)
    assert forced["data_hash"] != first["data_hash"]
    assert forced["forced"] and "FORCED" in forced["warning"]
    assert len(forced["previous_uses"]) == 1 and forced["previous_uses"][0]["shared_groups"] >= 1


def test_the_refusal_names_the_python_argument_as_well_as_the_cli_flag(tmp_path, policy):
    # A Python caller of juge.policy.test cannot "pass --force": it must be told force=True.
    with Store(tmp_path / "j.db") as store:
        test(policy, data(), store)
        with pytest.raises(HoldoutAlreadyUsed) as refused:
            test(policy, data(), store)
    assert "force=True" in str(refused.value) and "--force" in str(refused.value)


def test_another_policy_on_a_used_holdout_is_refused_and_fresh_items_are_not(tmp_path, policy):
    other = derive_policy(data(), margin=0.2, boot=BOOT)
    assert other["policy_hash"] != policy["policy_hash"]
    fresh = [("writing", ["A", "A"], {"j": "A"})] * 3
    with Store(tmp_path / "j.db") as store:
        test(policy, data(), store)
        with pytest.raises(HoldoutAlreadyUsed):
            test(other, _dropped_one(data()), store)
        untouched = test(other, data(fresh, split="fresh"), store, split="fresh")
    assert not untouched["forced"] and untouched["previous_uses"] == []


def test_concurrent_tests_cannot_both_pass_the_check(tmp_path, policy, monkeypatch):
    """B starts after A checked but before A recorded: B must see A's use and be refused."""
    db = tmp_path / "j.db"
    outcome: dict[str, object] = {}

    def other_test():
        with Store(db) as store:
            try:
                outcome["b"] = test(policy, data(), store)
            except HoldoutAlreadyUsed as exc:
                outcome["b"] = exc

    original = Store.record_holdout_use
    started: list[threading.Thread] = []

    def record_after_b_started(self, *args, **kwargs):
        if not started:
            started.append(threading.Thread(target=other_test))
            started[0].start()
            started[0].join(timeout=1.5)  # B finishes (old code) or waits on A's transaction (new code)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Store, "record_holdout_use", record_after_b_started)
    with Store(db) as store:
        a = test(policy, data(), store)
    started[0].join(timeout=30)
    assert not a["forced"]
    assert isinstance(outcome["b"], HoldoutAlreadyUsed)
    with Store(db) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM holdout_uses").fetchone()[0] == 1


def _files(tmp_path: Path) -> list[str]:
    rows = [
        {
            "item_id": f"i{k}",
            "question_id": k,
            "category": "writing",
            "split": "dev" if k < 10 else "holdout",
            "question": "q",
            "answer_1": "a",
            "answer_2": "bb",
            "reference": None,
            "human_ratings": [{"rater_id": "r1", "label": "A"}, {"rater_id": "r2", "label": "A"}],
        }
        for k in range(20)
    ]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "j.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "item_id": f"i{k}",
                    "judge": "j",
                    "model": "m",
                    "prompt": "p",
                    "order": o,
                    "letter": "A",
                    "outcome": "ok",
                    "text": "x",
                }
            )
            + "\n"
            for k in range(20)
            for o in ("12", "21")
        )
    )
    return [
        "--items",
        str(tmp_path / "items.jsonl"),
        "--judgments",
        str(tmp_path / "j.jsonl"),
        "--db",
        str(tmp_path / "j.db"),
        "--resamples",
        "100",
    ]


def test_an_unwritable_json_path_does_not_use_up_the_holdout(tmp_path):
    common = _files(tmp_path)
    runner = CliRunner()
    policy = tmp_path / "p.json"
    assert (
        runner.invoke(app, ["policy", "derive", *common, "-o", str(tmp_path / "P.md"), "--json", str(policy)]).exit_code
        == 0
    )
    (tmp_path / "a-file").write_text("")
    for bad in (tmp_path / "a-file" / "out.json", tmp_path):  # under a file; a folder
        res = runner.invoke(
            app, ["policy", "test", "--policy", str(policy), *common, "--json", str(bad)], env={"COLUMNS": "300"}
        )
        assert res.exit_code == 2 and "--json" in res.output, res.output
    with Store(tmp_path / "j.db") as store:
        assert store.conn.execute("SELECT COUNT(*) FROM holdout_uses").fetchone()[0] == 0
    good = runner.invoke(app, ["policy", "test", "--policy", str(policy), *common, "--json", str(tmp_path / "t.json")])
    assert good.exit_code == 0, good.output
    result = json.loads((tmp_path / "t.json").read_text())
    assert not result["forced"] and result["n_items"] == 10
    assert not list(tmp_path.glob(".*.tmp"))


def test_the_refusal_names_an_item_as_an_item_and_a_group_as_a_group():
    from juge.policy.holdout import _used_before

    text = _used_before(
        [
            {
                "shared_items": 1,
                "shared_groups": 1,
                "examples": ["item 'mtb-q100-a-vs-b'", "group '100'"],
                "found_in": ["store"],
                "used_at": "2026-11-29T14:00",
                "policy_hash": "p" * 64,
            }
        ]
    )
    assert "e.g. item 'mtb-q100-a-vs-b' and group '100'" in text and "found in store" in text
