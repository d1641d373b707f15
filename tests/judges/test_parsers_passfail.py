"""PASS/FAIL parser: exactly the bare word on the first line, then an explanation; else unparsed."""

from __future__ import annotations

import pytest

from juge.judges.parsers import REASON_CODES, ParseResult, parse_passfail, reason_code


@pytest.mark.parametrize(
    "text, verdict",
    [
        ("PASS\nThe answer states the opening hours from the context.", "PASS"),
        ("FAIL\nIt invents a delivery service the bakery does not offer.", "FAIL"),
        ("FAIL  \r\nTrailing spaces and CRLF after the verdict are fine.", "FAIL"),
        ("PASS\n\nA blank line before the sentence is fine.\n", "PASS"),
        # a conditional mention of the other verdict, in lower case, is prose (the contract's documented form)
        ("PASS\nThe reply would fail only if it named a price, and it does not.", "PASS"),
        ("FAIL\nThe reply would pass if it named the hours; it does not.", "FAIL"),
        ("FAIL\nThe answer says 'pass the salt' instead of answering.", "FAIL"),
        ("FAIL\nIt does not pass the check.", "FAIL"),
        ("PASS\nPASS rates are not the point here; the hours are right.", "PASS"),
    ],
)
def test_valid_outputs(text: str, verdict: str) -> None:
    assert parse_passfail(text) == ParseResult("ok", verdict, None)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n  \n",
        "PASS.\nGood.",
        "**PASS**\nGood.",
        "pass\nGood.",
        "Pass\nGood.",
        " PASS\nLeading space.",
        "PASS: the answer is right.",
        "PASS - the answer is right.",
        "Verdict: PASS\nGood.",
        "\nPASS\nThe verdict is not on the first line.",
        "The answer is good.\nPASS",
        # a verdict word inside prose
        "I would not PASS this\nIt is wrong.",
        "downgrade: PASS\nIt is borderline.",
        "This is a FAIL in my view.\nWrong hours.",
        # hidden and look-alike characters around or inside the verdict
        "\ufeffPASS\nBOM first.",
        "PASS\u200b\nZero-width space after.",
        "\u200bPASS\nZero-width space before.",
        "PA\u200dSS\nZero-width joiner inside.",
        "P\u00adASS\nSoft hyphen inside.",
        "PASS\u2060\nWord joiner after.",
        "\u202ePASS\nBidi override.",
        "PASS\u00a0\nNo-break space after.",
        "\u0420ASS\nCyrillic Er.",
        "PA\u0405S\nCyrillic Dze.",
        "\u03a1ASS\nGreek Rho.",
        "FA\u0399L\nGreek Iota.",
        "\uff30\uff21\uff33\uff33\nFullwidth letters.",
        "\U0001d40f\U0001d400\U0001d412\U0001d412\nMathematical bold.",
        "P\u0301ASS\nCombining accent.",
        "PASS\u2028Line separator glued to the verdict line.",
        # the other verdict in capitals, even in a conditional: a reader cannot tell a hedge from a second
        # verdict, so the contract reads the format's own word only in its place (docs/security.md)
        "PASS\nThe reply would FAIL only if it named a price, and it does not.",
        # two verdicts
        "PASS\nFAIL\nUndecided.",
        "PASS\nLooks fine.\nFAIL",
        "FAIL\nWrong.\nVerdict: PASS",
        "PASS\nGood.\n**fail**",
        "PASS\nGood.\nF\u0391IL",
        # verdict without the required explanation
        "PASS",
        "FAIL\n   ",
    ],
)
def test_hostile_and_borderline_outputs_are_unparsed(text: str) -> None:
    result = parse_passfail(text)
    assert result.outcome == "unparsed"
    assert result.verdict is None
    assert result.reason


def test_reason_names_the_failure_and_starts_with_its_code() -> None:
    assert parse_passfail("").reason == "empty: empty output"
    cases = {
        "": "empty",
        "**PASS**\nx": "disguised",
        "PASS\nok\nFAIL": "second_verdict",
        "FAIL": "no_reasoning",
        "Great answer.\nYes.": "format",
    }
    for text, code in cases.items():
        result = parse_passfail(text)
        assert result.code == code, text
        assert result.reason is not None and result.reason.startswith(f"{code}: ")
        assert reason_code(result.reason) == code
    assert parse_passfail("PASS\nFine.").code is None


def test_a_stored_reason_without_a_known_code_is_unknown() -> None:
    assert reason_code(None) == "unknown"
    assert reason_code("garbled: something") == "unknown"
    assert set(REASON_CODES) >= {"second_verdict", "negated_verdict", "opposite_word", "unknown"}


def test_bare_verdict_accepted_only_when_no_reason_is_required() -> None:
    assert parse_passfail("PASS", require_reason=False).verdict == "PASS"
    assert parse_passfail("PASS", require_reason=True).outcome == "unparsed"
    assert parse_passfail("PASS.", require_reason=False).outcome == "unparsed"


def test_parse_result_cannot_mix_outcome_and_verdict() -> None:
    with pytest.raises(ValueError):
        ParseResult("unparsed", "PASS", "x")
    with pytest.raises(ValueError):
        ParseResult("ok", None, None)
