"""An order with no letter A/B/C never lets the judge decide, and juge route names a bad letter (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_policy_rules import BAD_CATEGORY, BOOT, ROUNDING_CATEGORY, calls, study
from typer.testing import CliRunner

from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
from juge.data.records import Judgment
from juge.policy.derivation import derive_policy
from juge.policy.route import read_route_item, route_item


@pytest.fixture(scope="module")
def policy():
    return derive_policy(study(ROUNDING_CATEGORY + BAD_CATEGORY), boot=BOOT)


def _without_letter(j: Judgment) -> Judgment:
    # Bypass validation: a stored or hand-built judgment may still be 'ok' without a letter.
    return Judgment.model_construct(**{**j.model_dump(), "verdict": None})


@pytest.mark.parametrize("order", [0, 1])
def test_an_ok_call_without_a_letter_goes_to_a_person(policy, order):
    both = calls("n1", "j", "plain", "B", "B")
    both[order] = _without_letter(both[order])
    d = route_item(policy, "n1", "roleplay", both)  # roleplay goes to the judge when the item is fine
    assert (d.route, d.reason, d.verdict) == ("person", "refused/unparsed/missing", None)
    assert f"order {both[order].order}: outcome ok but no letter" in d.detail


def test_a_letter_outside_a_b_c_goes_to_a_person(policy):
    both = calls("n1", "j", "plain", "B", "B")
    both[0] = Judgment.model_construct(**{**both[0].model_dump(), "verdict": "a"})
    d = route_item(policy, "n1", "roleplay", both)
    assert d.label == "person: refused/unparsed/missing" and "letter 'a' is not A, B or C" in d.detail


def _item(tmp_path: Path, **call_21) -> Path:
    calls_ = [
        {"judge": "j", "model": "m1", "prompt": "plain", "order": "12", "letter": "B", "outcome": "ok"},
        {"judge": "j", "model": "m1", "prompt": "plain", "order": "21", "letter": "A", "outcome": "ok", **call_21},
    ]
    path = tmp_path / "item.json"
    path.write_text(
        json.dumps(
            {
                "item_id": "x1",
                "category": "roleplay",
                "question": "q",
                "answer_1": "a",
                "answer_2": "b",
                "judgments": calls_,
            }
        )
    )
    return path


@pytest.mark.parametrize(
    "call_21, field, words",
    [
        ({"letter": "a"}, "judgments[1].letter", "letter 'a' is not A, B or C"),
        ({"letter": None}, "judgments[1].letter", "no letter/verdict"),
        ({"outcome": "refused"}, "judgments[1].letter", "cannot carry a verdict"),
        ({"outcome": "fine"}, "judgments[1].outcome", "is not one of"),
        ({"order": "13"}, "judgments[1].order", "is not '12' or '21'"),
    ],
)
def test_route_item_file_checks_letters_like_recorded_judgments(tmp_path, policy, call_21, field, words):
    path = _item(tmp_path, **call_21)
    policy_path = tmp_path / "policy.json"
    policy_path.write_text(json.dumps(policy))
    result = CliRunner().invoke(
        app, ["route", "--policy", str(policy_path), "--item", str(path)], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and field in result.output and words in result.output
    assert "Traceback" not in result.output


def test_a_valid_item_file_still_reads(tmp_path):
    case, judgments = read_route_item(_item(tmp_path))
    assert case.id == "x1" and [j.verdict for j in judgments] == ["B", "A"]
