import pytest

from juge.checks import CheckConfigError, make_check, register_check, run_checks
from juge.data.records import Case

CASE = Case(id="c", question="q", reference="Forty-two.")


def check(spec, output, case=CASE):
    c = make_check(spec)
    return c.fn(case, output)


@pytest.mark.parametrize(
    "spec, output, passed",
    [
        ({"kind": "json"}, '{"a": 1}', True),
        ({"kind": "json"}, "{a: 1}", False),
        ({"kind": "required_fields", "fields": ["a", "b"]}, '{"a": 1, "b": 2}', True),
        ({"kind": "required_fields", "fields": ["a", "b"]}, '{"a": 1}', False),
        ({"kind": "required_fields", "fields": ["a"]}, "[1]", False),
        ({"kind": "one_of", "values": ["yes", "no"]}, " yes ", True),
        ({"kind": "one_of", "values": ["yes", "no"]}, "maybe", False),
        ({"kind": "one_of", "field": "status", "values": ["open"]}, '{"status": "open"}', True),
        ({"kind": "range", "min": 1, "max": 5}, "3", True),
        ({"kind": "range", "min": 1, "max": 5}, "6", False),
        ({"kind": "range", "min": 1, "max": 5}, "nan", False),
        ({"kind": "range", "field": "p", "max": 10}, '{"p": true}', False),
        ({"kind": "length", "max_chars": 5}, "123456", False),
        ({"kind": "length", "max_words": 2}, "one two", True),
        ({"kind": "regex", "pattern": r"\$\d+"}, "costs $4", True),
        ({"kind": "regex", "pattern": r"\$\d+"}, "costs four", False),
        ({"kind": "no_regex", "pattern": "(?i)as an ai"}, "As an AI, I", False),
        ({"kind": "forbidden_words", "words": ["Crumbl"]}, "Try crumbl cookies", False),
        ({"kind": "forbidden_words", "words": ["Crumbl"]}, "Try ＣＲＵＭＢＬ cookies", False),
        ({"kind": "forbidden_words", "words": ["Crumbl"]}, "crumbling cookies", True),
        ({"kind": "exact_match"}, "  forty-two ", True),
        ({"kind": "exact_match"}, "forty-three", False),
        ({"kind": "exact_match", "normalize": False}, "forty-two.", False),
    ],
)
def test_builtin_checks(spec, output, passed):
    result = check(spec, output)
    assert result.passed is passed
    assert (result.reason is None) is passed


def test_failure_reasons_say_what():
    assert "missing field(s): b" in check({"kind": "required_fields", "fields": ["a", "b"]}, '{"a": 1}').reason
    assert "forbidden: crumbl" in check({"kind": "forbidden_words", "words": ["Crumbl"]}, "CRUMBL!").reason
    assert check({"kind": "exact_match"}, "x", Case(id="c")).reason == "case has no reference"


def test_registered_user_check_and_exceptions():
    @register_check("mentions_hours")
    def mentions_hours(case, output):
        if "boom" in output:
            raise RuntimeError("bad")
        return ("9" in output, "no opening hours")

    checks = [make_check({"kind": "mentions_hours", "name": "hours"})]
    assert run_checks(checks, CASE, "open 9-5")["hours"].passed
    assert run_checks(checks, CASE, "closed")["hours"].reason == "no opening hours"
    boom = run_checks(checks, CASE, "boom")["hours"]
    assert not boom.passed and "RuntimeError" in boom.reason


def test_python_check_from_module(tmp_path):
    (tmp_path / "mychecks.py").write_text("def polite(case, output):\n    return 'please' in output\n")
    c = make_check({"kind": "python", "function": "mychecks:polite"}, base_dir=tmp_path)
    assert c.fn(CASE, "please wait").passed
    assert not c.fn(CASE, "wait").passed


@pytest.mark.parametrize(
    "spec, message",
    [
        ({}, "needs a 'kind'"),
        ({"kind": "nope"}, "unknown check kind 'nope'"),
        ({"kind": "regex"}, "regex"),
        ({"kind": "regex", "pattern": "("}, "bad pattern"),
        ({"kind": "python", "function": "nomodule_xyz:f"}, "cannot load"),
    ],
)
def test_bad_check_config(spec, message):
    with pytest.raises(CheckConfigError, match=message):
        make_check(spec)


def test_misspelt_option_names_the_known_ones():
    with pytest.raises(
        CheckConfigError, match=r"unknown option\(s\) 'max_char'; length takes: max_chars, min_chars, max_words"
    ):
        make_check({"kind": "length", "max_char": 5})
