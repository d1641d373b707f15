"""Structured (JSON schema) answers are held to the same strict parsers as text answers."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from juge.judges import judge_from_dict
from juge.judges.parsers import parse_structured

SCORE = {"lo": 1, "hi": 5, "marker": "NOTE:", "rescale_from": None, "require_reasoning": True}
CRITERIA = {"criteria": {"correct": [1, 3], "tone": [0, 2]}, "extra_keys": False, "require_reasoning": True}


@pytest.mark.parametrize(
    "setup, config, answer, verdict",
    [
        ("passfail", {"require_reason": True}, {"verdict": "PASS", "reason": "Matches the context."}, "PASS"),
        ("score", SCORE, {"reasoning": "Clear.", "score": 4}, 4),
        ("score", SCORE | {"rescale_from": [0, 10]}, {"reasoning": "Ok.", "score": 7.5}, 1 + 0.75 * 4),
        (
            "additive",
            {"n_items": 3, "marker": "Total:", "require_reasoning": True},
            {"reasoning": "1 yes 2 no 3 yes", "total": 2},
            2,
        ),
        (
            "criteria",
            CRITERIA,
            {"reasoning": "Both fine.", "scores": {"correct": 3, "tone": 2}},
            {"correct": 3, "tone": 2},
        ),
        ("pairwise", {}, {"reasoning": "A is right.", "verdict": "A"}, "A"),
    ],
)
def test_valid_structured_answers(setup: str, config: dict, answer: dict, verdict) -> None:
    result = parse_structured(json.dumps(answer), setup, config)
    assert result.outcome == "ok", result
    assert result.verdict == pytest.approx(verdict) if isinstance(verdict, float) else result.verdict == verdict


@pytest.mark.parametrize(
    "setup, config, text",
    [
        ("passfail", {"require_reason": True}, '{"verdict": "pass", "reason": "x"}'),
        ("passfail", {"require_reason": True}, '{"verdict": "PASS"}'),
        ("passfail", {"require_reason": True}, '{"verdict": "PASS", "reason": ""}'),
        ("passfail", {"require_reason": True}, '{"verdict": "PASS", "reason": "ok\\nFAIL"}'),
        ("passfail", {"require_reason": True}, '{"verdict": "PASS", "reason": "x", "confidence": 1}'),
        ("passfail", {"require_reason": True}, '{"verdict": "P\\u0410SS", "reason": "x"}'),
        ("passfail", {"require_reason": True}, '{"verdict": true, "reason": "x"}'),
        ("passfail", {"require_reason": True}, "PASS\nfine"),
        ("passfail", {"require_reason": True}, '{"verdict": "PASS", "reason": "x"} {"verdict": "FAIL"}'),
        ("score", SCORE, '{"reasoning": "x", "score": 6}'),
        ("score", SCORE, '{"reasoning": "x", "score": 4.0}'),
        ("score", SCORE, '{"reasoning": "x", "score": "4"}'),
        ("score", SCORE, '{"reasoning": "x", "score": true}'),
        ("score", SCORE, '{"reasoning": "", "score": 4}'),
        ("score", SCORE, '{"reasoning": "x\\nNOTE: 2", "score": 4}'),
        ("score", SCORE | {"rescale_from": [0, 10]}, '{"reasoning": "x", "score": 1e-9}'),
        ("score", SCORE | {"rescale_from": [0, 10]}, '{"reasoning": "x", "score": NaN}'),
        ("criteria", CRITERIA, '{"reasoning": "x", "scores": {"correct": 3}}'),
        ("criteria", CRITERIA, '{"reasoning": "x", "scores": {"correct": 3, "tone": true}}'),
        ("criteria", CRITERIA, '{"reasoning": "x", "scores": [3, 2]}'),
        ("pairwise", {}, '{"reasoning": "x", "verdict": "[[A]]"}'),
        ("pairwise", {}, '{"reasoning": "x", "verdict": "D"}'),
        ("pairwise", {}, '{"reasoning": "I said [[B]] first", "verdict": "A"}'),
        ("pairwise", {}, '{"reasoning": "x", "verdict": "A]] [[B"}'),
        ("pairwise", {}, ""),
    ],
)
def test_invalid_structured_answers_are_unparsed(setup: str, config: dict, text: str) -> None:
    result = parse_structured(text, setup, config)
    assert result.outcome == "unparsed", result
    assert result.verdict is None


# --- the schema a judge sends and the parser that reads the answer agree ------------

JUDGES = {
    "score": judge_from_dict(
        {
            "name": "s",
            "setup": "score",
            "description": "d",
            "structured": True,
            "levels": {"1": "a", "2": "b", "3": "c", "4": "d"},
        }
    ),
    "additive": judge_from_dict(
        {"name": "a", "setup": "additive", "description": "d", "structured": True, "items": ["x", "y", "z"]}
    ),
    "criteria": judge_from_dict(
        {
            "name": "c",
            "setup": "criteria",
            "description": "d",
            "structured": True,
            "criteria": {
                "correct": {"description": "c", "levels": {"1": "a", "2": "b"}},
                "tone": {"description": "t", "levels": {"0": "a", "1": "b", "2": "c"}},
            },
        }
    ),
}


def within(schema: dict, value) -> bool:
    return type(value) is int and schema["minimum"] <= value <= schema["maximum"]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["score", "additive"]), st.integers(-3, 8))
def test_score_schema_and_parser_accept_the_same_numbers(setup: str, value: int) -> None:
    judge = JUDGES[setup]
    key = "score" if setup == "score" else "total"
    schema = judge.json_schema()["properties"][key]
    answer = json.dumps({"reasoning": "Because.", key: value})
    assert (judge.parse(answer).outcome == "ok") == within(schema, value)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["correct", "tone", "other"]),
        st.one_of(st.integers(-1, 3), st.booleans(), st.floats(0, 2)),
        max_size=3,
    )
)
def test_criteria_schema_and_parser_accept_the_same_objects(scores: dict) -> None:
    judge = JUDGES["criteria"]
    schema = judge.json_schema()["properties"]["scores"]
    valid = set(scores) == set(schema["required"]) and all(
        within(schema["properties"][k], v) for k, v in scores.items()
    )
    answer = json.dumps({"reasoning": "Because.", "scores": scores})
    assert (judge.parse(answer).outcome == "ok") == valid


@pytest.mark.parametrize(
    "setup, answer",
    [
        ("passfail", {"verdict": "PASS\nwhatever", "reason": "Matches the context."}),
        ("passfail", {"verdict": "PASS\n", "reason": "Matches."}),
        ("passfail", {"verdict": "FAIL\nPASS", "reason": "Two verdicts."}),
        ("passfail", {"verdict": "PASS", "reason": "Matches.\nVerdict: FAIL"}),
        ("pairwise", {"reasoning": "A is right.", "verdict": "A]] [[B"}),
        ("pairwise", {"reasoning": "Verdict: B", "verdict": "A"}),
    ],
)
def test_a_verdict_field_carrying_more_than_the_verdict_is_unparsed(setup: str, answer: dict) -> None:
    assert parse_structured(json.dumps(answer), setup, {}).outcome == "unparsed"
