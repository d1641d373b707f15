"""The typed policy models: a policy file (pairwise of schema 1 or 2, PASS/FAIL, score) loads as a PolicyResult
and writes back exactly, its hash intact; a holdout test comes back as a HoldoutTest with its conclusion."""

from __future__ import annotations

import json

from grade_data import PASSFAIL_DEV, PASSFAIL_HOLDOUT, SCORE_DEV, SCORE_HOLDOUT, write_study
from test_policy_rules import BAD_CATEGORY, BOOT, ROUNDING_CATEGORY, study

from juge.calibration.inputs import load_inputs
from juge.policy.derivation import derive_policy, derive_policy_result, policy_hash, read_policy_result
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
    assert typed.judge_kind == "pairwise" and typed.schema_version == 2
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
