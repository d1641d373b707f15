"""Criteria parser: one strict JSON object on the last line, every criterion present and in range."""

from __future__ import annotations

import pytest

from juge.judges.parsers import parse_criteria, strict_json_object

CRITERIA = {"correct": (1, 3), "helpful": (1, 3), "tone": (0, 2)}
REASONING = "Correct: matches the context.\nHelpful: answers the question.\nTone: polite.\n"


def parse(last_line: str, **kwargs):
    return parse_criteria(REASONING + last_line, criteria=CRITERIA, **kwargs)


def test_valid_object() -> None:
    result = parse('{"correct": 3, "helpful": 2, "tone": 0}')
    assert result.outcome == "ok"
    assert result.verdict == {"correct": 3, "helpful": 2, "tone": 0}


def test_key_order_and_spacing_do_not_matter_and_trailing_blank_lines_are_fine() -> None:
    result = parse('{"tone":1,"correct":1,"helpful":3}\n\n')
    assert result.verdict == {"correct": 1, "helpful": 3, "tone": 1}


def test_missing_field_is_never_defaulted() -> None:
    result = parse('{"correct": 3, "helpful": 2}')
    assert result.outcome == "unparsed"
    assert "tone" in result.reason


@pytest.mark.parametrize(
    "line",
    [
        '{"correct": 3, "helpful": 2, "tone": null}',
        '{"correct": 3, "helpful": 2, "tone": "2"}',
        '{"correct": 3, "helpful": 2, "tone": 2.0}',
        '{"correct": 3, "helpful": 2, "tone": true}',
        '{"correct": 3, "helpful": 2, "tone": 3}',
        '{"correct": 0, "helpful": 2, "tone": 1}',
        '{"correct": -1, "helpful": 2, "tone": 1}',
        '{"correct": NaN, "helpful": 2, "tone": 1}',
        '{"correct": Infinity, "helpful": 2, "tone": 1}',
        '{"correct": 3, "helpful": 2, "tone": 1, "extra": 1}',
        '{"correct": 3, "helpful": 2, "tone": 1, "tone": 2}',
        '{"Correct": 3, "helpful": 2, "tone": 1}',
        '{"correct": 3, "helpful": 2, "tone": [1]}',
        '{"correct": 3, "helpful": 2, "tone": 1}}',
        '{"correct": 3, "helpful": 2, "tone": 1} and that is all',
        '{"correct": 3, "helpful": 2, "tone": 1,}',
        "{'correct': 3, 'helpful': 2, 'tone': 1}",
        '```json {"correct": 3, "helpful": 2, "tone": 1}```',
        ' {"correct": 3, "helpful": 2, "tone": 1}',
        '\ufeff{"correct": 3, "helpful": 2, "tone": 1}',
        '{"correct": 3, "helpful": 2, "tone": 1}\u200b',
        '{"corr\u0435ct": 3, "helpful": 2, "tone": 1}',  # Cyrillic e in the key
        '[{"correct": 3, "helpful": 2, "tone": 1}]',
        '{"correct": 3, "helpful": 2, "tone": 1e0}',
        '{"correct": 10000000000000000000000000000000000003, "helpful": 2, "tone": 1}',
        "{}",
        "",
    ],
)
def test_invalid_objects_are_unparsed(line: str) -> None:
    result = parse(line)
    assert result.outcome == "unparsed", result
    assert result.verdict is None


def test_json_split_over_lines_is_unparsed() -> None:
    text = REASONING + '{\n  "correct": 3,\n  "helpful": 2,\n  "tone": 1\n}'
    assert parse_criteria(text, criteria=CRITERIA).outcome == "unparsed"


def test_extra_keys_can_be_allowed_but_are_not_returned() -> None:
    result = parse('{"correct": 3, "helpful": 2, "tone": 1, "comment": "ok"}', extra_keys=True)
    assert result.verdict == {"correct": 3, "helpful": 2, "tone": 1}


def test_two_objects_with_different_scores_are_unparsed() -> None:
    text = 'Draft: {"correct": 1, "helpful": 2, "tone": 1}\nRevised.\n{"correct": 3, "helpful": 2, "tone": 1}'
    result = parse_criteria(text, criteria=CRITERIA)
    assert result.outcome == "unparsed"
    assert "two JSON objects" in result.reason


def test_an_earlier_identical_object_is_tolerated() -> None:
    text = 'So: {"correct": 3, "helpful": 2, "tone": 1}\n{"correct": 3, "helpful": 2, "tone": 1}'
    assert parse_criteria(text, criteria=CRITERIA).outcome == "ok"


def test_reasoning_is_required_by_default() -> None:
    line = '{"correct": 3, "helpful": 2, "tone": 1}'
    assert parse_criteria(line, criteria=CRITERIA).outcome == "unparsed"
    assert parse_criteria(line, criteria=CRITERIA, require_reasoning=False).outcome == "ok"


def test_strict_json_object_rejects_deep_nesting_without_crashing() -> None:
    with pytest.raises(ValueError):
        strict_json_object("[" * 100_000 + "]" * 100_000)
