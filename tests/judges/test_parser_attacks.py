"""The attack corpus (parser_attacks.py) against every setup's strict parser, both sides."""

from __future__ import annotations

import pytest
from parser_attacks import CONFIG, MUST_FAIL, MUST_PARSE, written_verdict

from juge.judges.parsers import PARSERS

SETUPS = sorted(MUST_FAIL)


def test_the_corpus_is_large_on_both_sides() -> None:
    assert set(SETUPS) == set(PARSERS)
    for setup in SETUPS:
        assert len(MUST_FAIL[setup]) >= 300 and len(MUST_PARSE[setup]) >= 150, setup
        assert len(set(MUST_FAIL[setup])) == len(MUST_FAIL[setup])
        assert not set(MUST_FAIL[setup]) & set(MUST_PARSE[setup]), setup


def test_the_corpus_speaks_every_listed_language() -> None:
    from juge.judges.vocabulary import LANGUAGES

    for code, words in LANGUAGES.items():
        if code == "en":
            continue
        assert any(words["fail"][0] in text for text in MUST_FAIL["passfail"]), code
        assert any(words["pass_"][0] in text for text in MUST_PARSE["passfail"]), code
        assert any(words["better"][0] in text for text in MUST_FAIL["pairwise"]), code
        assert any(words["score"][0] in text for text in MUST_FAIL["score"]), code


@pytest.mark.parametrize("setup", SETUPS)
def test_a_contradicting_second_verdict_is_unparsed(setup: str) -> None:
    parse = PARSERS[setup]
    read = [text for text in MUST_FAIL[setup] if parse(text, **CONFIG[setup]).outcome != "unparsed"]
    assert read == []


@pytest.mark.parametrize("setup", SETUPS)
def test_hostile_looking_prose_still_parses(setup: str) -> None:
    parse = PARSERS[setup]
    wrong = [
        (text, result.reason)
        for text in MUST_PARSE[setup]
        if (result := parse(text, **CONFIG[setup])).verdict != written_verdict(setup, text)
    ]
    assert wrong == []
