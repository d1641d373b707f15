"""Property tests: no input yields a verdict unless it is exactly the format.

Each parser is checked against an independent oracle written from the format's
definition (a plain regex or a direct check), on two kinds of input: text built
from fragments that sit close to the format (verdict words, markers, look-alike
and invisible characters, markdown), and near misses made by mutating valid
outputs one character at a time.
"""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parser_attacks import LETTER_DISGUISES, PAIRWISE_CONTRADICTIONS, PASSFAIL_CONTRADICTIONS, WORD_DISGUISES

from juge.judges.parsers import parse_criteria, parse_pairwise, parse_passfail, parse_score

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

HOSTILE_CHARS = [
    "\u200b",
    "\u200c",
    "\u200d",
    "\u2060",
    "\ufeff",
    "\u00ad",
    "\u202e",
    "\u00a0",
    "\u2028",
    "\u0085",
    "\u0410",
    "\u0412",
    "\u0421",
    "\u0420",
    "\u0405",
    "\u0391",
    "\u0392",
    "\u03a1",
    "\u0399",
    "\uff21",
    "\uff30",
    "\uff14",
    "\u0664",
    "\u0301",
    "*",
    "_",
    ".",
    ":",
    "`",
    "#",
    " ",
    "\t",
    "\r",
    "\n",
]
FRAGMENTS = [
    "PASS",
    "FAIL",
    "pass",
    "Fail",
    "NOTE:",
    "NOTE: ",
    "Note:",
    "Total rating:",
    "Total:",
    "[[",
    "]]",
    "[",
    "]",
    "A",
    "B",
    "C",
    "a",
    "[[A]]",
    "[[B]]",
    "[[C]]",
    "0",
    "1",
    "3",
    "4",
    "5",
    "6",
    "10",
    "4.5",
    "-",
    "+",
    "{",
    "}",
    '"correct"',
    '"tone"',
    ": ",
    ", ",
    "true",
    "null",
    "The answer is fine",
    "\n",
    " ",
    *HOSTILE_CHARS,
]
near_format_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3)), max_size=14).map("".join)
any_text = st.one_of(st.text(), near_format_text)


def first_line(text: str) -> str:
    return text.split("\n", 1)[0].rstrip(" \t\r")


# --- PASS / FAIL ------------------------------------------------------------------

PASSFAIL_FORMAT = re.compile(r"(PASS|FAIL)[ \t\r]*\n(?s:.*)\S(?s:.*)", re.ASCII)


@FUZZ
@given(any_text)
def test_passfail_ok_only_for_the_exact_format(text: str) -> None:
    result = parse_passfail(text)
    if result.outcome == "ok":
        assert PASSFAIL_FORMAT.fullmatch(text)
        assert result.verdict == first_line(text)
    else:
        assert result.verdict is None


valid_passfail = st.builds(
    lambda verdict, sentence: f"{verdict}\n{sentence}",
    st.sampled_from(["PASS", "FAIL"]),
    st.sampled_from(["The answer is supported by the context.", "It names a wrong price.", "Fine."]),
)


@FUZZ
@given(valid_passfail, st.integers(0, 5), st.sampled_from(HOSTILE_CHARS + list("Pp!?")))
def test_passfail_near_misses_in_the_verdict_line(text: str, position: int, char: str) -> None:
    mutated = text[:position] + char + text[position:]
    result = parse_passfail(mutated)
    assert (result.outcome == "ok") == (
        first_line(mutated) in ("PASS", "FAIL") and bool(mutated.split("\n", 1)[1].strip())
    )


@FUZZ
@given(
    valid_passfail, st.sampled_from(["PASS", "FAIL", "Verdict: FAIL", "**PASS**", "fail", "F\u0410IL"]), st.booleans()
)
def test_passfail_a_second_verdict_line_is_unparsed(text: str, second: str, at_end: bool) -> None:
    lines = text.split("\n")
    lines.insert(len(lines) if at_end else 1, second)
    assert parse_passfail("\n".join(lines)).outcome == "unparsed"


# --- score ----------------------------------------------------------------------

SCORE_LINE = re.compile(r"NOTE: (0|[1-9][0-9]*)", re.ASCII)


@FUZZ
@given(any_text)
def test_score_ok_only_for_the_exact_format(text: str) -> None:
    result = parse_score(text, lo=1, hi=5)
    if result.outcome == "ok":
        lines = [line for line in text.split("\n") if line.strip()]
        match = SCORE_LINE.fullmatch(lines[-1].rstrip(" \t\r"))
        assert match and 1 <= int(match.group(1)) <= 5
        assert result.verdict == int(match.group(1))
        assert len(lines) >= 2  # reasoning came first
    else:
        assert result.verdict is None


valid_score = st.builds(lambda n: f"The answer is mostly right.\nNOTE: {n}", st.integers(1, 5))


@FUZZ
@given(valid_score, st.integers(0, 12), st.sampled_from(HOSTILE_CHARS + list("0123456789.-+N")))
def test_score_near_misses_on_the_last_line(text: str, back: int, char: str) -> None:
    position = len(text) - back
    mutated = text[:position] + char + text[position:]
    result = parse_score(mutated, lo=1, hi=5)
    lines = [line.rstrip(" \t\r") for line in mutated.split("\n")]
    lines = [line for line in lines if line.strip()]
    match = SCORE_LINE.fullmatch(lines[-1])
    expected_ok = bool(match) and 1 <= int(match.group(1)) <= 5 and len(lines) >= 2 and "NOTE" not in lines[0]
    assert (result.outcome == "ok") == expected_ok, (mutated, result)


@FUZZ
@given(
    st.integers(1, 5),
    st.integers(1, 5),
    st.sampled_from(["NOTE: {}", "**NOTE:** {}", "NOTE : {}", "note: {}", "\uff2e\uff2f\uff34\uff25: {}"]),
)
def test_score_two_markers_agree_or_unparsed(first: int, last: int, form: str) -> None:
    text = f"{form.format(first)} at first.\nThen I looked again.\nNOTE: {last}"
    result = parse_score(text)
    assert result.outcome == ("ok" if first == last else "unparsed")


# --- criteria -------------------------------------------------------------------

CRITERIA = {"correct": (1, 3), "tone": (0, 2)}
json_values = st.one_of(
    st.integers(-2, 5), st.booleans(), st.none(), st.floats(allow_nan=False), st.text(max_size=2), st.just(2.0)
)
json_objects = st.dictionaries(st.sampled_from(["correct", "tone", "extra", "Correct"]), json_values, max_size=4)


def criteria_oracle(obj: dict) -> bool:
    if set(obj) != set(CRITERIA):
        return False
    return all(type(obj[k]) is int and lo <= obj[k] <= hi for k, (lo, hi) in CRITERIA.items())


@FUZZ
@given(json_objects)
def test_criteria_ok_exactly_when_every_field_is_an_integer_in_range(obj: dict) -> None:
    result = parse_criteria("Reasoning per criterion.\n" + json.dumps(obj), criteria=CRITERIA)
    assert (result.outcome == "ok") == criteria_oracle(obj)
    if result.outcome == "ok":
        assert result.verdict == obj


@FUZZ
@given(any_text)
def test_criteria_arbitrary_text_ok_only_with_a_valid_last_line(text: str) -> None:
    result = parse_criteria(text, criteria=CRITERIA)
    if result.outcome == "ok":
        last = [line for line in text.split("\n") if line.strip()][-1].rstrip(" \t\r")
        assert criteria_oracle(json.loads(last))


# --- pairwise -------------------------------------------------------------------

PAIR_MARKER = re.compile(r"\[\[[ABC]\]\]")


@FUZZ
@given(any_text)
def test_pairwise_ok_only_with_exactly_one_marker(text: str) -> None:
    result = parse_pairwise(text)
    if result.outcome == "ok":
        found = PAIR_MARKER.findall(text)
        assert found == [f"[[{result.verdict}]]"]
    else:
        assert result.verdict is None


@FUZZ
@given(
    st.text(max_size=40),
    st.sampled_from("ABC"),
    st.text(max_size=40),
    st.sampled_from(["[[A]]", "[[B]]", "[[C]]", "[[\u0410]]", "[[ B ]]", "[[c]]", "[[\u200bA]]", "[[tie]]"]),
    st.booleans(),
)
def test_pairwise_any_second_marker_is_unparsed(
    before: str, letter: str, after: str, second: str, second_first: bool
) -> None:
    marker = f"[[{letter}]]"
    text = f"{second} {before} {marker} {after}" if second_first else f"{before} {marker} {after} {second}"
    assert parse_pairwise(text).outcome == "unparsed"


@FUZZ
@given(st.sampled_from("ABC"), st.integers(0, 3), st.sampled_from(HOSTILE_CHARS + ["[", "]", "a", "b"]))
def test_pairwise_near_misses_inside_the_marker(letter: str, position: int, char: str) -> None:
    marker = f"[[{letter}]]"
    mutated = marker[: position + 1] + char + marker[position + 1 :]
    assert parse_pairwise(f"Reasoning. {mutated}").outcome == "unparsed"


# --- contradictions in any disguise (the attack corpus's phrasings, fuzzed) ---------

filler_line = st.sampled_from(["The hours are right.", "It names the bakery.", "", "Tone is polite."])


@FUZZ
@given(
    st.sampled_from(PASSFAIL_CONTRADICTIONS),
    st.sampled_from(sorted(WORD_DISGUISES)),
    st.lists(filler_line, max_size=3),
    st.sampled_from(["PASS", "FAIL"]),
)
def test_passfail_a_contradiction_in_any_disguise_is_unparsed(
    template: str, disguise: str, filler: list[str], first: str
) -> None:
    other = "FAIL" if first == "PASS" else "PASS"
    body = template.format(w=WORD_DISGUISES[disguise](other)).replace("PASS\n", "", 1)
    text = "\n".join([first, "A reason.", *filler, body])
    assert parse_passfail(text).outcome == "unparsed", text


@FUZZ
@given(
    st.sampled_from(PAIRWISE_CONTRADICTIONS),
    st.sampled_from(sorted(LETTER_DISGUISES)),
    st.sampled_from([("A", "B"), ("A", "C"), ("B", "A")]),
)
def test_pairwise_a_contradiction_in_any_disguise_is_unparsed(
    template: str, disguise: str, letters: tuple[str, str]
) -> None:
    marker, other = letters
    text = template.replace("[[A]]", f"[[{marker}]]").replace("Assistant A", f"Assistant {marker}")
    text = text.format(b=LETTER_DISGUISES[disguise](other))
    assert parse_pairwise(text).outcome == "unparsed", text
