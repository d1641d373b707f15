"""Second verdicts a reader would take as a verdict, found anywhere in a judge's answer.

A parser reads the one place its format puts the verdict. A judge (or an answer it was
shown) can still state another verdict elsewhere: on a line of its own, after "verdict",
"final answer", "so", in brackets or bold, in any case, spelling or script. Such an answer
says two things and must be `unparsed`. These functions find those statements on the
answer's skeleton (look-alikes folded, invisible characters dropped, digits of any script
made ASCII); ordinary prose ("it fails to mention the price") is not a statement, because a
verdict word counts only after a cue, between brackets or emphasis, or alone on its line,
and only when nothing but punctuation follows it in its clause.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from juge.judges.textnorm import skeleton

_DIGIT = re.compile(r"\d")  # str patterns: every Unicode decimal digit (Nd)


def fold(text: str) -> str:
    """The skeleton of `text` with every decimal digit (Arabic-Indic, Devanagari, ...) made ASCII."""
    folded = skeleton(text)
    if folded.isascii():
        return folded
    return _DIGIT.sub(lambda m: str(unicodedata.decimal(m.group(), 0)), folded)


# A separator a writer may put between the letters of a word to hide it: "F A I L", "p.a.s.s".
_SEP = r"[ .\-_*·'`]?"
# PASS and FAIL in any case, inflected or with digits for letters ("FA1L", "PA55ED").
_PASS = rf"p{_SEP}[a4@]{_SEP}[s5$]{_SEP}[s5$](?:ed|es|ing)?"
_FAIL = rf"f{_SEP}[a4@]{_SEP}[i1!|l]{_SEP}[l1|!](?:ed|s|ing|ure)?"
_PASSFAIL_WORD = rf"(?<![a-z0-9])(?:(?P<pass>{_PASS})|(?P<fail>{_FAIL}))(?![a-z0-9])"
# Nothing but punctuation or emphasis after the verdict until the clause ends.
_CLAUSE_END = r"(?![ \t]*[\w'’])"
_CUES = (
    r"verdicts?|final(?:\s+answer)?|so|thus|therefore|hence|result|decision|conclusion|"
    r"outcome|grade|grading|rating|overall|summary|short|but|actually|instead|rather|"
    r"mark|marked|marking|rate|rated|judge|judged|judgement|judgment|assessment|evaluation|"
    r"corrected|correction|revised|updated"
)
_FILLER = (
    r"is|was|be|would|should|will|must|it|this|that|the|answer|response|reply|output|a|an|"
    r"clear|clearly|definitely|certainly|i|i'd|i’d|id|as|my|our|final|verdict|here|now|then|"
    r"gets|get|receives|deserves|earns|am|are|going|to|give|with|one|its|it's|it’s|really|simply|"
    r"thing|call|verdict's"
)
_GAP = rf"(?:[^\w\n]|\b(?:{_FILLER})\b){{0,40}}?"
_OPEN = r"(?:\*\*|__|\*|_|`|\[|\{|<|«|【|⟦|〚|〖|〔|《|「|『|⟨|‹)"
_CLOSE = r"(?:\*\*|__|\*|_|`|\]|\}|>|»|】|⟧|〛|〗|〕|》|」|』|⟩|›)"

_PF_CUED = re.compile(rf"\b(?:{_CUES})\b{_GAP}{_PASSFAIL_WORD}{_CLAUSE_END}", re.IGNORECASE)
_PF_BRACKETED = re.compile(rf"{_OPEN}[ \t]*{_PASSFAIL_WORD}[ \t]*[.!:]?[ \t]*{_CLOSE}", re.IGNORECASE)
_PF_ANY = re.compile(_PASSFAIL_WORD, re.IGNORECASE)
# Words that may stand beside a verdict on a line that is nothing but a verdict.
_LABEL_WORDS = frozenset(
    (
        "verdict final answer result decision conclusion overall grade rating outcome so thus therefore "
        "hence my the is it this i say would corrected correction updated revised actually really true "
        "real wait no sorry on reflection second thought thoughts changed mind then instead rather "
        "verdicts label judgement judgment assessment evaluation"
    ).split()
)
_WORD = re.compile(r"[a-z]+", re.IGNORECASE)


def _passfail_value(match: re.Match[str]) -> str:
    return "PASS" if match.group("pass") is not None else "FAIL"


def passfail_statements(text: str) -> Iterator[tuple[str, str]]:
    """Each (verdict, how) a reader would take as a PASS/FAIL verdict in `text` (already folded)."""
    for line in text.split("\n"):
        found = list(_PF_ANY.finditer(line))
        if not found:
            continue
        rest = _PF_ANY.sub(" ", line)
        if all(w.lower() in _LABEL_WORDS for w in _WORD.findall(rest)):
            for match in found:
                yield _passfail_value(match), "a line that is only a verdict"
            continue
        for match in _PF_CUED.finditer(line):
            yield _passfail_value(match), "a verdict after a cue such as 'verdict' or 'so'"
        for match in _PF_BRACKETED.finditer(line):
            yield _passfail_value(match), "a verdict in brackets or emphasis"


# --- pairwise ---------------------------------------------------------------------

# Lower-case letters are multiple-choice options ("both select **c**") far more often than
# verdicts, so a letter counts in upper case only, except right after "verdict" or "winner".
_UPPER = r"(?-i:(?P<letter>[ABC]))"
_ANY_CASE = r"(?P<letter>[abc])"
_TIE = r"(?P<tie>tie|a\s+tie|draw)"
_BOUND_L, _BOUND_R = r"(?<![\w'’])", r"(?![\w'’])"
_STRONG_CUES = r"verdicts?|winner|final\s+answer|final\s+decision|decision|prefer|preferred|preference"
_WEAK_CUES = r"so|thus|therefore|hence|overall|but|actually|instead|rather|corrected|revised|updated|final"
_PAIR_FILLER = (
    r"is|was|be|would|should|will|must|it|this|that|the|my|our|final|verdict|clearly|definitely|certainly|"
    r"i|i'd|i’d|id|goes|go|to|answer|response|assistant|option|model|output|candidate|number|here|now|then|"
    r"it's|it’s|one|with|for"
)
_PAIR_GAP = rf"(?:[^\w\n]|\b(?:{_PAIR_FILLER})\b){{0,40}}?"
_PAIR_CUED = re.compile(
    rf"\b(?:(?:{_STRONG_CUES})\b{_PAIR_GAP}{_BOUND_L}(?:{_ANY_CASE}|{_TIE})"
    rf"|(?:{_WEAK_CUES})\b{_PAIR_GAP}{_BOUND_L}(?:{_UPPER.replace('letter', 'letter2')}|{_TIE.replace('tie', 'tie2', 1)}))"
    rf"{_BOUND_R}{_CLAUSE_END}",
    re.IGNORECASE,
)
_PAIR_BETTER = re.compile(
    rf"\b(?:assistant|answer|response|option|model|output|candidate)[\s*_]+{_UPPER}[\s*_]+(?:wins|"
    r"(?:is|was)\s+(?:clearly\s+|definitely\s+)?(?:better|superior|stronger|preferred|the\s+winner|the\s+better\s+one))"
    rf"[ \t*_]*[.!]?{_CLAUSE_END}",
    re.IGNORECASE,
)
_PAIR_BRACKETED = re.compile(
    rf"(?:\[|\[\[|\{{\{{|<<|\(\(|【|⟦|〚|〖|〔|《|「|『|⟨|«)[ \t]*{_BOUND_L}(?:{_UPPER}|{_TIE}){_BOUND_R}[ \t]*[.!]?[ \t]*"
    r"(?:\]|\]\]|\}\}|>>|\)\)|】|⟧|〛|〗|〕|》|」|』|⟩|»)",
    re.IGNORECASE,
)
# A line that is nothing but a verdict: "B", "**Verdict: B**", "Final verdict - tie".
# Not "Assistant B" alone: that is a heading.
_PAIR_LINE_WORDS = r"is|it|it's|it’s|the|my|our|i|say|would|be|clearly|definitely|then|now|here|one"
_PAIR_LINE = re.compile(
    rf"[^\w\n]*(?:(?:{_STRONG_CUES}|{_WEAK_CUES}|{_PAIR_LINE_WORDS})\b[^\w\n]*)*{_BOUND_L}(?:{_UPPER}|{_TIE}){_BOUND_R}[^\w\n]*",
    re.IGNORECASE,
)


def _pair_value(match: re.Match[str]) -> str:
    groups = match.groupdict()
    letter = groups.get("letter") or groups.get("letter2")
    return letter.upper() if letter else "C"


def pairwise_statements(text: str) -> Iterator[tuple[str, str]]:
    """Each (letter, how) a reader would take as a pairwise verdict in `text` (already folded)."""
    for line in text.split("\n"):
        match = _PAIR_LINE.fullmatch(line)
        if match:
            yield _pair_value(match), "a line that is only a verdict"
    for pattern, how in (
        (_PAIR_BRACKETED, "a verdict letter in brackets"),
        (_PAIR_CUED, "a verdict letter after a cue such as 'verdict' or 'so'"),
        (_PAIR_BETTER, "'answer X is better'"),
    ):
        for match in pattern.finditer(text):
            yield _pair_value(match), how


# --- scores -----------------------------------------------------------------------

_NUMBER = r"(?P<n>[0-9]+(?:\.[0-9]+)?)"
_SCORE_CUES = r"score|scores|rating|grade|final\s+answer|verdict|note|total|points|rate|rated|give|giving|mark"
_SCORE_FILLER = r"is|of|a|an|would|be|should|it|this|the|answer|response|my|final|overall|i|as|with|me|gets|get"
_SCORE_CUED = re.compile(
    rf"\b(?:{_SCORE_CUES})\b(?:[^\w\n]|\b(?:{_SCORE_FILLER})\b){{0,30}}?(?<![\w.]){_NUMBER}"
    r"(?:[ \t]*(?:/|out\s+of)[ \t]*[0-9]+)?[ \t]*[.!)*\]]*[ \t]*(?=$|\n)",
    re.IGNORECASE,
)


def score_statements(text: str) -> Iterator[float]:
    """Each number a reader would take as the score, stated at the end of a line after a cue."""
    for match in _SCORE_CUED.finditer(text):
        yield float(match.group("n"))
