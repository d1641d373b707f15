"""The one-scan look for another language's verdict words finds what the 26 per-language scans find."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from juge.judges import contradictions
from juge.judges.vocabulary import LANGUAGES


def every_scan(low: str) -> list[tuple[str, str]]:
    """`_foreign_passfail` without the first look: each language's FAIL words, blanked, then its PASS words."""
    found = []
    for language, pattern in contradictions._vocabulary("fail"):
        found += [("FAIL", f"{LANGUAGES[language]['name']} '{m.group()}'") for m in pattern.finditer(low)]
        low = pattern.sub(lambda m: " " * len(m.group()), low)
    for language, pattern in contradictions._vocabulary("pass_"):
        found += [("PASS", f"{LANGUAGES[language]['name']} '{m.group()}'") for m in pattern.finditer(low)]
    return found


WORDS = sorted(
    {
        contradictions.lowered(w)
        for code, words in LANGUAGES.items()
        if code != "en"
        for w in words["fail"] + words["pass_"]
    }
)


@settings(max_examples=300)
@given(
    st.lists(
        st.one_of(st.sampled_from(WORDS), st.sampled_from([" ", "  ", "x", "é", ".", "\n", "pass", "no "])), max_size=12
    )
)
def test_the_first_look_misses_nothing(pieces):
    low = "".join(pieces)
    assert list(contradictions._foreign_passfail(low)) == every_scan(low)


def test_an_english_answer_is_one_scan():
    assert contradictions._any_foreign_word().search("the answer fits the question well. verdict: pass") is None


def every_conflict(text: str, verdict: str) -> list[tuple[str, str]]:
    """`passfail_conflicts` with every English pattern run on every answer (no first look for its words)."""
    other = "FAIL" if verdict == "PASS" else "PASS"
    folded = contradictions.fold(text)
    found = [("opposite_word", f"'{m.group()}' in capitals") for m in contradictions._CAPITALS[other].finditer(folded)]
    stated, _, prop, _ = contradictions._en_passfail(other)
    found += [("opposite_word", f"'{m.group().strip()}'") for m in stated.finditer(folded)]
    found += [("opposite_word", f"'{m.group().strip()}'") for m in prop.finditer(folded)]
    negated = contradictions._en_passfail(verdict)[1]
    found += [("negated_verdict", f"'{m.group().strip()}'") for m in negated.finditer(folded)]
    low = contradictions.lowered(text)
    return found + [("opposite_word", how) for said, how in every_scan(low) if said != verdict]


ENGLISH = [
    "it is", "this ", "the answer ", "would be ", "does not ", "not ", "fails to ", "give it a ", "Pass", "PASS",
    "passes", "fail", "FAILED", "failure", " the property", " the Criterion", "lacks", "has", "meets", ". ", "\n",
    "ſ", "K", "aprobado", "no ", "通过", "ok",
]  # fmt: skip


@settings(max_examples=500)
@given(st.lists(st.sampled_from(ENGLISH), max_size=14), st.sampled_from(["PASS", "FAIL"]))
def test_the_first_looks_for_english_words_miss_nothing(pieces, verdict):
    text = "".join(pieces)
    assert list(contradictions.passfail_conflicts(text, verdict)) == every_conflict(text, verdict)


def test_the_prefix_tree_finds_what_the_word_list_finds():
    for low in ("la respuesta  no\taprobado", "no aprobadoX", "通过", "xx fallo", "nothing here", "réussi", ""):
        spelled = contradictions._forms(w for code, words in LANGUAGES.items() if code != "en"
                                        for kind in ("fail", "pass_") for w in words[kind])  # fmt: skip
        found = contradictions._any_foreign_word(low.isascii()).search(low) is not None
        assert found == (re.search(spelled, low) is not None), low
