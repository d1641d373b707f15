"""The typed policy models: a policy file (pairwise of schema 1 or 2, PASS/FAIL, score) loads as a PolicyResult
and writes back exactly, its hash intact; a holdout test comes back as a HoldoutTest with its conclusion."""

from __future__ import annotations

import json

from grade_data import PASSFAIL_DEV, PASSFAIL_HOLDOUT, SCORE_DEV, SCORE_HOLDOUT, write_study
from pydantic import BaseModel
from test_policy_guarantee_routing import split_data
from test_policy_rules import BAD_CATEGORY, BOOT, ROUNDING_CATEGORY, study

from juge.calibration.inputs import load_inputs
from juge.policy.derivation import PairStudyData, derive_policy, derive_policy_result, policy_hash, read_policy_result
from juge.policy.grades import grade_study_data
from juge.policy.holdout import test_policy_result
from juge.results import HoldoutTest, PolicyResult
from juge.store import Store


def grade_data(folder, rows):
    items, labels, judgments = write_study(folder, rows)
    return grade_study_data(load_inputs(items=items, labels=labels, judgments=[judgments]))


def test_a_pairwise_policy_of_either_schema_round_trips_with_its_hash():
    policy = derive_policy(study(ROUNDING_CATEGORY + BAD_CATEGORY), boot=BOOT)
    typed = PolicyResult.model_validate(policy)
    assert typed.to_dict() == policy and policy_hash(typed.to_dict()) == policy["policy_hash"]
    assert typed.judge_kind == "pairwise" and typed.schema_version == 3
    assert typed.judge_decides("roleplay") and not typed.judge_decides("coding") and not typed.tested
    old = {k: v for k, v in policy.items() if k not in ("schema_version", "judge_kind", "policy_hash")}
    old["policy_hash"] = policy_hash(old)  # a file written before schema 2
    typed_old = PolicyResult.model_validate(old)
    written = typed_old.to_dict()  # the same keys, and schema_version 1 after format; the hash still holds
    assert written == {**old, "schema_version": 1} and list(written)[:3] == ["kind", "format", "schema_version"]
    assert policy_hash(written) == old["policy_hash"] == policy_hash({**written, "judge_kind": "pairwise"})
    assert typed_old.schema_version == 1 and typed_old.judge_kind == "pairwise"
    assert policy_hash({**written, "margin": 0.5}) != old["policy_hash"]  # any other edit still breaks it


def test_grade_policies_derive_and_test_typed(tmp_path):
    for name, rows in (("pf", PASSFAIL_DEV + PASSFAIL_HOLDOUT), ("sc", SCORE_DEV + SCORE_HOLDOUT)):
        data = grade_data(tmp_path / name, rows)
        typed = derive_policy_result(data, boot=BOOT)
        assert typed.judge_kind == data.kind and policy_hash(typed.to_dict()) == typed.policy_hash
        assert PolicyResult.model_validate(json.loads(json.dumps(typed.to_dict()))).to_dict() == typed.to_dict()
        (tmp_path / name / "policy.json").write_text(json.dumps(typed.to_dict()))

    data = grade_data(tmp_path / "pf", PASSFAIL_DEV + PASSFAIL_HOLDOUT)
    with Store(tmp_path / "j.db") as store:
        result = test_policy_result(
            tmp_path / "pf" / "policy.json", data, store, boot=BOOT, json_path=tmp_path / "h.json"
        )
    assert isinstance(result, HoldoutTest) and result.held is False and not result.forced
    assert result.per_category["billing"].conclusion.held is False  # type: ignore[union-attr]
    assert result.to_dict() == json.loads((tmp_path / "h.json").read_text())
    reread = read_policy_result(tmp_path / "pf" / "policy.json")
    assert reread.tested and reread.holdout_tests[0].test_id == result.test_id and reread.holdout_tests[0].held is False


def test_the_typed_entry_points_take_str_paths(tmp_path):
    # A Python user writes read_policy_result("policy.json"); a str used to fail with AttributeError.
    data = grade_data(tmp_path / "pf", PASSFAIL_DEV + PASSFAIL_HOLDOUT)
    typed = derive_policy_result(data, boot=BOOT)
    (tmp_path / "policy.json").write_text(json.dumps(typed.to_dict()))
    assert read_policy_result(str(tmp_path / "policy.json")).policy_hash == typed.policy_hash
    with Store(tmp_path / "j.db") as store:
        result = test_policy_result(
            str(tmp_path / "policy.json"), data, store, boot=BOOT, json_path=str(tmp_path / "h.json")
        )
    assert result.to_dict() == json.loads((tmp_path / "h.json").read_text())
    assert read_policy_result(str(tmp_path / "policy.json")).holdout_tests[0].test_id == result.test_id


def undeclared(model, where="policy"):
    """Keys of `model` or of any part inside it that no model declares (kept, but untyped)."""
    found = [f"{where}.{k}" for k in model.model_extra or {}]
    for name in type(model).model_fields:
        value = getattr(model, name)
        values = (
            value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else [("", value)]
        )
        for key, v in values:
            if isinstance(v, BaseModel):
                found += undeclared(v, f"{where}.{name}{f'[{key}]' if key != '' else ''}")
    return found


def test_the_nested_parts_are_typed_and_every_kind_writes_back_exactly(tmp_path):
    # Each kind's policy (pairwise under two rules, PASS/FAIL, score) as a file: every key it holds is declared by
    # a model, and the file read back writes the same JSON, numbers unchanged, so its hash holds.
    pair = study(ROUNDING_CATEGORY + BAD_CATEGORY)
    policies = {
        "pairwise": derive_policy(pair, boot=BOOT),
        "guarantee": derive_policy(pair, boot=BOOT, rule="guarantee"),
    }
    for name, rows in (("passfail", PASSFAIL_DEV + PASSFAIL_HOLDOUT), ("score", SCORE_DEV + SCORE_HOLDOUT)):
        policies[name] = derive_policy_result(grade_data(tmp_path / name, rows), boot=BOOT).to_dict()
    typed = {}
    for name, policy in policies.items():
        text = json.dumps(policy, sort_keys=True)
        typed[name] = PolicyResult.model_validate(json.loads(text))
        assert json.dumps(typed[name].to_dict(), sort_keys=True) == text, name
        assert undeclared(typed[name]) == [], name
        selection = typed[name].selection
        assert selection is not None and selection.chosen == typed[name].judge == selection.candidates[0].key
        assert typed[name].judges[typed[name].judge].models == policy["judges"][policy["judge"]]["models"]
    g = typed["guarantee"].guarantee
    assert g is not None and [s.n for s in g.steps] == [s["n"] for s in policies["guarantee"]["guarantee"]["steps"]]
    billing = typed["passfail"].categories["billing"]
    caught = policies["passfail"]["categories"]["billing"]["judge"]["failures_caught"]
    assert billing.judge is not None and billing.judge.failures_caught is not None
    assert (billing.judge.failures_caught.k, billing.judge.failures_caught.n) == (caught["k"], caught["n"])
    assert billing.checks is not None and billing.checks["failures caught"].ok is (billing.decision == "judge")
    score = typed["score"]
    assert score.threshold_choice is not None and score.threshold == score.threshold_choice.chosen
    advice = policies["score"]["categories"]["advice"]["people"]["at_threshold"]["agreement"]
    assert score.categories["advice"].people.at_threshold.agreement.value == advice["value"]  # type: ignore[union-attr]


def test_keys_no_model_declares_are_kept_in_every_part():
    # A key a later juge may add (or one a model does not declare yet) survives a read and a write, at any depth.
    policy = derive_policy(study(ROUNDING_CATEGORY + BAD_CATEGORY), boot=BOOT)
    policy["selection"]["candidates"][0]["coverage"]["note"] = "kept"
    policy["judges"][policy["judge"]]["provider"] = "openai"
    policy["bootstrap"]["method"] = "percentile"
    typed = PolicyResult.model_validate(json.loads(json.dumps(policy)))
    assert typed.to_dict() == policy
    assert undeclared(typed) == [
        "policy.judges[j/plain].provider",
        "policy.selection.candidates[0].coverage.note",
        "policy.bootstrap.method",
    ]


def test_every_key_of_a_holdout_test_is_declared(tmp_path):
    # A holdout test of each kind (a pairwise policy under the guarantee rule, PASS/FAIL, score): every key it
    # writes is declared by a model, and the typed test writes back what the file holds.
    dev, held = split_data("dev"), split_data("holdout")
    pair = PairStudyData(dev.cases + held.cases, dev.labels + held.labels, dev.judgments + held.judgments, {}, {})
    cases = {"guarantee": (derive_policy(dev, rule="guarantee", boot=BOOT), pair)}
    for name, rows in (("passfail", PASSFAIL_DEV + PASSFAIL_HOLDOUT), ("score", SCORE_DEV + SCORE_HOLDOUT)):
        data = grade_data(tmp_path / name, rows)
        cases[name] = (derive_policy_result(data, boot=BOOT).to_dict(), data)
    for name, (policy, data) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(policy))
        with Store(tmp_path / f"{name}.db") as store:
            test = test_policy_result(path, data, store, boot=BOOT, json_path=tmp_path / f"{name}-h.json")
        written = json.loads((tmp_path / f"{name}-h.json").read_text())
        assert undeclared(test, "test") == [], name
        assert HoldoutTest.model_validate(written).to_dict() == written
        assert [d.item_id for d in test.items] == [d["item_id"] for d in written["items"]]
        assert test.conclusion is not None and test.conclusion.on_judged_items is not None
        first = next(iter(test.per_category.values()))
        assert first.holdout_gap is not None and first.holdout_gap.n_with_verdict is not None
