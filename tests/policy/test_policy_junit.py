"""`juge policy test --junit`: a test case per category and one for the policy, a category or a policy that did
not hold a failure carrying the reason (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path

from junitparser import Failure, JUnitXml, Skipped

from cli_helpers import run_cli, tiny_pairwise_study
from juge.policy.junit import policy_test_junit
from juge.policy.results import Conclusion, HoldoutTest


def _kinds(xml: str, tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "t.xml"
    path.write_text(xml)
    return {
        case.name: next((type(r).__name__ for r in case.result if isinstance(r, Failure | Skipped)), "passed")
        for suite in JUnitXml.fromfile(str(path))
        for case in suite
    }


def test_policy_test_junit_follows_the_conclusions(tmp_path, monkeypatch, capsys):
    common = tiny_pairwise_study(tmp_path)
    policy, junit = tmp_path / "policy.json", tmp_path / "ci" / "policy-test.xml"
    code, _, err = run_cli(monkeypatch, capsys, "policy", "derive", *common, "-o", str(tmp_path / "P.md"),
                           "--json", str(policy))  # fmt: skip
    assert code == 0, err
    code, _, err = run_cli(monkeypatch, capsys, "policy", "test", "--policy", str(policy), *common,
                           "--json", str(tmp_path / "t.json"), "--junit", str(junit))  # fmt: skip
    test = HoldoutTest.model_validate(json.loads((tmp_path / "t.json").read_text()))
    assert code == (1 if test.held is False else 0), err
    kinds = _kinds(junit.read_text(), tmp_path)
    expected_policy = {True: "passed", False: "Failure", None: "Skipped"}[test.held]
    assert kinds.pop("policy held") == expected_policy
    assert kinds == {
        f"category {name}": {True: "passed", False: "Failure", None: "Skipped"}[
            c.conclusion.held if c.conclusion else None
        ]
        for name, c in test.per_category.items()
    }
    # NOT HELD: the policy's test case fails with the conclusion's reason.
    failed = test.model_copy(update={"conclusion": Conclusion(held=False, reason="not held in writing")})
    xml = policy_test_junit(failed)
    assert _kinds(xml, tmp_path)["policy held"] == "Failure" and "NOT HELD: not held in writing" in xml


def test_an_unwritable_junit_path_refuses_the_test_before_it_uses_the_holdout(tmp_path, monkeypatch, capsys):
    common = tiny_pairwise_study(tmp_path)
    policy = tmp_path / "policy.json"
    code, _, err = run_cli(monkeypatch, capsys, "policy", "derive", *common, "-o", str(tmp_path / "P.md"),
                           "--json", str(policy))  # fmt: skip
    assert code == 0, err
    (tmp_path / "file").write_text("x")
    code, _, err = run_cli(monkeypatch, capsys, "policy", "test", "--policy", str(policy), *common,
                           "--junit", str(tmp_path / "file" / "t.xml"))  # fmt: skip
    assert code == 2 and "--junit" in err
    assert "holdout_tests" not in json.loads(policy.read_text()) or not json.loads(policy.read_text())["holdout_tests"]
