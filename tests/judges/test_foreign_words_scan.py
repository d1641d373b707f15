"""The one-scan look for another language's verdict words finds what the 26 per-language scans find."""

from __future__ import annotations

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
