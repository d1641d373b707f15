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

import functools
import re
import unicodedata
from collections.abc import Iterable, Iterator

from juge.judges.textnorm import skeleton
from juge.judges.vocabulary import LANGUAGES
from juge.lazy import lazy_pattern

_DIGIT = lazy_pattern(r"\d")  # str patterns: every Unicode decimal digit (Nd)


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
    r"answer|verdicts?|final(?:\s+answer)?|so|thus|therefore|hence|result|decision|conclusion|"
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

_PF_CUED = lazy_pattern(rf"\b(?:{_CUES})\b{_GAP}{_PASSFAIL_WORD}{_CLAUSE_END}", re.IGNORECASE)
_PF_BRACKETED = lazy_pattern(rf"{_OPEN}[ \t]*{_PASSFAIL_WORD}[ \t]*[.!:]?[ \t]*{_CLOSE}", re.IGNORECASE)
_PF_ANY = lazy_pattern(_PASSFAIL_WORD, re.IGNORECASE)
# Words that may stand beside a verdict on a line that is nothing but a verdict.
_LABEL_WORDS = frozenset(
    (
        "verdict final answer result decision conclusion overall grade rating outcome so thus therefore "
        "hence my the is it this i say would corrected correction updated revised actually really true "
        "real wait no sorry on reflection second thought thoughts changed mind then instead rather "
        "verdicts label judgement judgment assessment evaluation"
    ).split()
)
_WORD = lazy_pattern(r"[a-z]+", re.IGNORECASE)


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
_PAIR_CUED = lazy_pattern(
    rf"\b(?:(?:{_STRONG_CUES})\b{_PAIR_GAP}{_BOUND_L}(?:{_ANY_CASE}|{_TIE})"
    rf"|(?:{_WEAK_CUES})\b{_PAIR_GAP}{_BOUND_L}(?:{_UPPER.replace('letter', 'letter2')}|{_TIE.replace('tie', 'tie2', 1)}))"
    rf"{_BOUND_R}{_CLAUSE_END}",
    re.IGNORECASE,
)
_PAIR_BETTER = lazy_pattern(
    rf"\b(?:assistant|answer|response|option|model|output|candidate)[\s*_]+{_UPPER}[\s*_]+(?:wins|"
    r"(?:is|was)\s+(?:clearly\s+|definitely\s+)?(?:better|superior|stronger|preferred|the\s+winner|the\s+better\s+one))"
    rf"[ \t*_]*[.!]?{_CLAUSE_END}",
    re.IGNORECASE,
)
_PAIR_BRACKETED = lazy_pattern(
    rf"(?:\[|\[\[|\{{\{{|<<|\(\(|【|⟦|〚|〖|〔|《|「|『|⟨|«)[ \t]*{_BOUND_L}(?:{_UPPER}|{_TIE}){_BOUND_R}[ \t]*[.!]?[ \t]*"
    r"(?:\]|\]\]|\}\}|>>|\)\)|】|⟧|〛|〗|〕|》|」|』|⟩|»)",
    re.IGNORECASE,
)
# A line that is nothing but a verdict: "B", "**Verdict: B**", "Final verdict - tie".
# Not "Assistant B" alone: that is a heading.
_PAIR_LINE_WORDS = r"is|it|it's|it’s|the|my|our|i|say|would|be|clearly|definitely|then|now|here|one"
_PAIR_LINE = lazy_pattern(
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
_SCORE_CUED = lazy_pattern(
    rf"\b(?:{_SCORE_CUES})\b(?:[^\w\n]|\b(?:{_SCORE_FILLER})\b){{0,30}}?(?<![\w.]){_NUMBER}"
    r"(?:[ \t]*(?:/|out\s+of)[ \t]*[0-9]+)?[ \t]*[.!)*\]]*[ \t]*(?=$|\n)",
    re.IGNORECASE,
)


def score_statements(text: str) -> Iterator[float]:
    """Each number a reader would take as the score, stated at the end of a line after a cue."""
    for match in _SCORE_CUED.finditer(text):
        yield float(match.group("n"))


# --- the parser contract's further rules: opposite words, negations, other languages ------------------
#
# Each function takes the explanation (everything but the verdict's own place) and yields (code, how)
# for each statement that disagrees with `verdict`; the code is one of juge.judges.parsers.REASON_CODES.


def lowered(text: str) -> str:
    """`text` case-folded, then folded as `fold` does (Cyrillic "НЕ" and "не" meet), for the word lists."""
    return fold(text.casefold())


def _forms(words: Iterable[str]) -> str:
    """The alternation of `words` as lowered, longest first, a space standing for any run of spaces ("" for none)."""
    forms = sorted({lowered(w) for w in words}, key=len, reverse=True)
    return "|".join(re.escape(f).replace(r"\ ", r"\s+") for f in forms)


def _word_pattern(words: Iterable[str], bounded: bool) -> re.Pattern[str] | None:
    body = _forms(words)
    if not body:
        return None
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)" if bounded else f"(?:{body})")


_UNSPACED = frozenset(("zh", "ja", "ko"))  # no spaces between words: a listed word counts inside a longer one


@functools.cache
def _vocabulary(kind: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(language, pattern) for each language but English whose list `kind` is not empty."""
    out = []
    for code, words in LANGUAGES.items():
        if code == "en":
            continue
        pattern = _word_pattern(words[kind], bounded=code not in _UNSPACED)  # type: ignore[literal-required]
        if pattern is not None:
            out.append((code, pattern))
    return tuple(out)


_Tree = dict[str, "_Tree"]


def _trie(forms: Iterable[str]) -> str:
    """A pattern that finds a match wherever one of `forms` (as `_forms` spells them) occurs: the forms as a
    prefix tree, so a scan tries a few characters at each place, not every word. A form that continues a
    shorter one is left out (where it occurs, the shorter one does too): for `search`, not for the match."""
    end = ""
    root: _Tree = {}
    for form in forms:
        node = root
        for token in re.findall(r" +|[^ ]", form):  # a run of spaces is one token, any white space (`_forms`)
            if end in node:
                break
            node = node.setdefault(" " if token[0] == " " else token, {})
        else:
            node.clear()
            node[end] = {}

    def alternation(node: _Tree) -> str:
        if end in node:
            return ""
        parts = [(r"\s+" if t == " " else re.escape(t)) + alternation(child) for t, child in sorted(node.items())]
        if not parts:
            return "(?!)"  # no form: nothing matches
        return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"

    return alternation(root)


@functools.cache
def _any_foreign_word(ascii_only: bool = False) -> re.Pattern[str]:
    """Every listed PASS and FAIL word of every language but English, unbounded: no match means none of the
    bounded patterns matches either (one scan, not 26). With `ascii_only`, the words written in ASCII only: the
    others cannot occur in an ASCII text."""
    forms = {
        lowered(w)
        for code, words in LANGUAGES.items()
        if code != "en"
        for kind in ("fail", "pass_")
        for w in words[kind]
    }
    return re.compile(_trie(f for f in forms if f.isascii() or not ascii_only))


def _foreign_passfail(low: str) -> Iterator[tuple[str, str]]:
    """(PASS or FAIL, the word) for each listed verdict word of another language in `low` (see `lowered`).

    FAIL phrases are read first and blanked out, so the PASS word inside "no aprobado" or "不通过" is
    not read again as a PASS."""
    if not _any_foreign_word(low.isascii()).search(low):
        return
    for language, pattern in _vocabulary("fail"):
        found = False
        for match in pattern.finditer(low):
            found = True
            yield "FAIL", f"{LANGUAGES[language]['name']} '{match.group()}'"
        if found:  # nothing to blank otherwise: a second scan of the answer saved per language
            low = pattern.sub(lambda m: " " * len(m.group()), low)
    for language, pattern in _vocabulary("pass_"):
        for match in pattern.finditer(low):
            yield "PASS", f"{LANGUAGES[language]['name']} '{match.group()}'"


_EN = LANGUAGES["en"]
_UPPER_PASS = r"P[ .\-_*·]?[A4@][ .\-_*·]?[S5$][ .\-_*·]?[S5$](?:ED|ES|ING)?"
_UPPER_FAIL = r"F[ .\-_*·]?[A4@][ .\-_*·]?[I1!|L][ .\-_*·]?[L1|!](?:ED|S|ING|URE)?"
_CAPITALS = {
    verdict: lazy_pattern(rf"(?<![A-Za-z0-9]){word}(?![A-Za-z0-9])")
    for verdict, word in (("PASS", _UPPER_PASS), ("FAIL", _UPPER_FAIL))
}
_SUBJECT = r"(?:it|this|that|which|the\s+(?:answer|response|reply|output|submission|result|verdict))"
_NEGATOR = (
    r"(?:not|never|no\s+longer|cannot|can['’]t|won['’]t|doesn['’]t|didn['’]t|isn['’]t|wasn['’]t|don['’]t|"
    r"shouldn['’]t|wouldn['’]t|fails\s+to|failed\s+to)"
)
_NEG_FILLER = (
    r"(?:(?:a|an|the|really|quite|actually|yet|be|been|get|receive|earn|deserve|merit|truly|clearly|even)\s+)*"
)
# What may follow a verdict word in a statement about the answer: "does not pass the check".
_OBJECT = r"(?:\s+(?:the\s+|this\s+|our\s+)?(?:check|test|rubric|criterion|criteria|bar|muster|review|evaluation|grade|it|this))?"


_PROPERTY_WORDS = "property|criterion"
_PROPERTY = lazy_pattern(_PROPERTY_WORDS, re.IGNORECASE)


@functools.cache
def _en_passfail(verdict: str) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(a statement that the answer is `verdict`, its negation, the property had or lacked) in English, and what
    the first two cannot match without: one of `verdict`'s words (with the same flags; a scan of a few letters
    that spares most answers the two long ones)."""
    words = _EN["pass_"] if verdict == "PASS" else _EN["fail"]
    word = "(?:" + "|".join(sorted(words, key=len, reverse=True)) + ")"
    shortest = [w for w in words if not any(o != w and o in w for o in words)]  # "pass" is in "passed"
    word_in = lazy_pattern("|".join(map(re.escape, shortest)), re.IGNORECASE)
    stated = lazy_pattern(
        rf"\b{_SUBJECT}\s+(?:(?:is|was|['’]s|would\s+be|should\s+be|must\s+be|remains|counts\s+as|gets|deserves|"
        rf"earns|receives|merits|clearly|definitely|simply|a|an)\s*)+{word}{_CLAUSE_END}"
        rf"|\b{_SUBJECT}\s+(?:clearly\s+|definitely\s+|simply\s+)?{word}{_OBJECT}[ \t]*[.!;]?{_CLAUSE_END}"
        rf"|\b(?:give|giving|gives|mark|marking|marks|rate|rating|rates)\s+(?:it|this)\s+(?:a\s+|an\s+)?{word}{_CLAUSE_END}",
        re.IGNORECASE,
    )
    negated = lazy_pattern(rf"\b{_NEGATOR}\s+{_NEG_FILLER}{word}{_OBJECT}[ \t]*[.!;]?{_CLAUSE_END}", re.IGNORECASE)
    has = r"(?:has|have|does\s+have|shows|possesses|meets|satisfies)"
    lacks = (
        r"(?:does\s+not\s+have|doesn['’]t\s+have|lacks|does\s+not\s+show|doesn['’]t\s+show|does\s+not\s+meet|"
        r"doesn['’]t\s+meet|fails\s+to\s+have)"
    )
    prop = rf"\s+the\s+(?:{_PROPERTY_WORDS})(?:\s+[\"'“‘][^\"'”’\n]{1, 80}[\"'”’])?[ \t]*[.!;]?"
    own = has if verdict == "PASS" else lacks
    prop_stated = lazy_pattern(rf"\b{_SUBJECT}\s+(?:clearly\s+|definitely\s+)?{own}{prop}{_CLAUSE_END}", re.IGNORECASE)
    return stated, negated, prop_stated, word_in


def passfail_conflicts(text: str, verdict: str) -> Iterator[tuple[str, str]]:
    """(code, how) for each statement in a PASS/FAIL answer's explanation `text` that disagrees
    with `verdict`: the other verdict in capitals anywhere, in any wording; the other verdict stated or
    this one negated in English; a listed verdict word of another language that disagrees."""
    other = "FAIL" if verdict == "PASS" else "PASS"
    folded = fold(text)
    for match in _CAPITALS[other].finditer(folded):
        yield "opposite_word", f"'{match.group()}' in capitals"
    # Each English pattern runs only where what it cannot match without occurs (the same matches, fewer scans).
    stated, _, prop, other_word = _en_passfail(other)
    if other_word.search(folded):
        for match in stated.finditer(folded):
            yield "opposite_word", f"'{match.group().strip()}'"
    if _PROPERTY.search(folded):
        for match in prop.finditer(folded):
            yield "opposite_word", f"'{match.group().strip()}'"
    _, negated, _, own_word = _en_passfail(verdict)
    if own_word.search(folded):
        for match in negated.finditer(folded):
            yield "negated_verdict", f"'{match.group().strip()}'"
    for said, how in _foreign_passfail(lowered(text)):
        if said != verdict:
            yield "opposite_word", how


# --- pairwise: "B is better", "B wins", "B es mejor", "B更好", a tie, and their negations --------------

_THAN = r"(?:than|que|als|чем|di|dari|daripada|من|से)"
_LETTER_L, _LETTER_R = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"
# What may stand before a letter that is the subject of "is better": the start of a clause, a word that
# names an answer (in several languages), or a connective; not another noun ("Phone A is superior").
_BEFORE_PUNCT = frozenset("\n.!?;:,([*-–—")
_BEFORE_WORDS = frozenset(
    (
        "assistant answer response option model output candidate so thus therefore hence overall but and think "
        "believe conclude say clearly then because since that asistente respuesta opción réponse assistente "
        "risposta resposta opção antwort ответ вариант ассистент jawaban yanıt cevap उत्तर الإجابة المساعد"
    ).split()
)
_LAST_WORD = lazy_pattern(r"([\w'’]+)[ \t]+$")
_PAIR_NOUN = r"(?:(?:assistant|answer|response|option|model|output|candidate)\s+)?"


def _starts_a_clause(text: str, at: int) -> bool:
    """Whether the letter at `at` may be the subject of its clause (see _BEFORE_WORDS)."""
    before = text[max(0, at - 40) : at]
    stripped = before.rstrip(" \t")
    if not stripped:
        return at - len(before) == 0 or text[at - len(before) - 1] == "\n"
    if stripped[-1] in _BEFORE_PUNCT:
        return True
    word = _LAST_WORD.search(before)
    return word is not None and word.group(1).lower() in _BEFORE_WORDS


@functools.cache
def _better_patterns() -> tuple[re.Pattern[str], ...]:
    """A letter (group 'letter') said to be the better answer: one pattern for the languages written with
    spaces (the letter must start its clause, see `_starts_a_clause`), one per language without."""
    out = []
    spaced: set[str] = set()
    for code, words in LANGUAGES.items():
        forms = {lowered(w) for w in words["better"]}
        if code not in _UNSPACED:
            spaced |= forms
            continue
        body = "|".join(re.escape(f).replace(r"\ ", r"\s+") for f in sorted(forms, key=len, reverse=True))
        # "B更好", "回答B更好", "Bの方が良い", "B가 더 낫다"; not "A比B更好" (A is better than B) or "Bより".
        gap = r"[^\n。，,.;；!?！？比]{0,6}?" if code == "zh" else r"\s?"
        out.append(re.compile(rf"(?<!比){_LETTER_L}(?P<letter>[ABC]){_LETTER_R}{gap}(?:{body})"))
    body = "|".join(re.escape(f).replace(r"\ ", r"\s+") for f in sorted(spaced, key=len, reverse=True))
    than = rf"(?:\s+{_THAN}\s+{_PAIR_NOUN}[ABC]{_LETTER_R})?"
    out.insert(
        0,
        re.compile(
            rf"{_LETTER_L}(?-i:(?P<letter>[ABC])){_LETTER_R}(?:['’]s)?\s+"
            rf"(?:clearly\s+|definitely\s+|overall\s+)?(?:{body}){than}[ \t*_]*[.!;]?{_CLAUSE_END}",
            re.IGNORECASE,
        ),
    )
    return tuple(out)


_EN_TIE = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in _EN["tie"])
_TIE_STATED = lazy_pattern(
    rf"\b{_SUBJECT}\s+(?:is|was|['’]s|would\s+be|must\s+be|ends\s+in|comes\s+down\s+to)\s+(?:a\s+|an?\s+)?"
    rf"(?:clear\s+|real\s+)?(?:{_EN_TIE}){_CLAUSE_END}",
    re.IGNORECASE,
)
_PAIR_NEGATED = lazy_pattern(
    rf"{_LETTER_L}(?-i:(?P<letter>[ABC])){_LETTER_R}\s+(?:is\s+not|isn['’]t|is\s+no|was\s+not|wasn['’]t|does\s+not|"
    rf"doesn['’]t|did\s+not|didn['’]t)\s+(?:really\s+|clearly\s+)?(?:better|superior|preferred|the\s+better(?:\s+one|"
    rf"\s+answer|\s+response)?|the\s+winner|win)(?:\s+{_THAN}\s+{_PAIR_NOUN}[ABC]{_LETTER_R})?[ \t]*[.!;]?{_CLAUSE_END}"
    rf"|\b(?:not|isn['’]t|is\s+no|wasn['’]t)\s+(?:a\s+)?(?P<tie>tie|draw){_CLAUSE_END}",
    re.IGNORECASE,
)


def pairwise_conflicts(text: str, letter: str) -> Iterator[tuple[str, str]]:
    """(code, how) for each statement in a pairwise answer `text` (its marker left out) that
    disagrees with `letter`: another letter said to be better or to win (in any listed language), a tie
    stated when the verdict is not C (a listed tie word of another language anywhere), or the verdict
    negated ("A is not better", "it is not a tie")."""
    folded = fold(text)
    low = lowered(text)
    for i, pattern in enumerate(_better_patterns()):
        for match in pattern.finditer(folded):
            said = match.group("letter").upper()
            if said != letter and (i > 0 or _starts_a_clause(folded, match.start())):
                yield "opposite_word", f"'{match.group().strip()}'"
    if letter != "C":
        for match in _TIE_STATED.finditer(folded):
            yield "opposite_word", f"'{match.group().strip()}'"
        for language, pattern in _vocabulary("tie"):
            for match in pattern.finditer(low):
                yield "opposite_word", f"{LANGUAGES[language]['name']} '{match.group()}'"
    for match in _PAIR_NEGATED.finditer(folded):
        said = "C" if match.group("tie") else match.group("letter").upper()
        if said == letter and (match.group("tie") or _starts_a_clause(folded, match.start())):
            yield "negated_verdict", f"'{match.group().strip()}'"


# --- scores: "**2**", "2/5", "Puntuación: 2", "Correct: 1/3", "not a 4" -------------------------------------

_NUM = r"(?P<n>[0-9]+(?:\.[0-9]+)?)"
_LINE_SCORE = lazy_pattern(rf"[^\w\n]*{_NUM}(?:[ \t]*(?:/|out\s+of)[ \t]*[0-9]+)?[^\w\n]*", re.IGNORECASE)
# "2/5 of the claims", "2 out of 5 facts": a count, not a score (a word that is not a noun may follow a score).
_NOT_A_COUNT = (
    r"(?![ \t]+(?!(?:overall|total|in|for|because|since|as|and|but|so|from|on|at|given|would|is|seems|i|it|this|"
    r"then|which|here|now)\b)[a-z])"
)
# A number in bold or underlined, anywhere: "I give it **2**".
_EMPHASISED = lazy_pattern(
    rf"(?<![\w*])(?:\*\*|__)[ \t]*{_NUM}(?:[ \t]*(?:/|out\s+of)[ \t]*[0-9]+)?[ \t]*(?:\*\*|__)(?![\w*])"
)
_UNIT = r"(?:[ \t]*(?:分|点|점|points?|pts|баллов|балла|балл))?"


@functools.cache
def _score_labelled() -> re.Pattern[str]:
    words = {lowered(w) for lang in LANGUAGES.values() for w in lang["score"]}
    body = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(
        rf"(?<!\w)(?:{body})(?:\*\*|__)?[ \t]*[:：=][ \t]*(?:\*\*|__)?[ \t]*{_NUM}"
        rf"(?:[ \t]*(?:/|out\s+of)[ \t]*[0-9]+)?{_UNIT}(?![0-9A-Za-z]|\.[0-9])",
    )


def score_conflicts(text: str, value: float, hi: float | None = None) -> Iterator[tuple[str, str]]:
    """(code, how) for each second score in a score answer's reasoning `text` that differs from
    `value`: a line that is only a number ("**2**", "2/5"); "n/hi" or "n out of hi" with the scale's top
    `hi` (not "2/5 of the claims"); a number in bold ("I give it **2**"); a listed score word of any language, a colon and a number
    ("Puntuación: 2", "评分：2分"); or `value` negated ("not a 4", "does not deserve a 4")."""
    folded = fold(text)
    for line in folded.split("\n"):
        match = _LINE_SCORE.fullmatch(line)
        if match and float(match.group("n")) != value:
            yield "second_verdict", f"a line that is only a score ({line.strip()})"
    for match in _EMPHASISED.finditer(folded):
        if float(match.group("n")) != value:
            yield "second_verdict", f"a second score in emphasis ({match.group().strip()})"
    if hi is not None:
        top = re.escape(f"{hi:g}")
        fraction = re.compile(rf"(?<![\w./]){_NUM}[ \t]*(?:/|out\s+of)[ \t]*{top}(?![\w/]|\.[0-9]){_NOT_A_COUNT}")
        for match in fraction.finditer(folded):
            if float(match.group("n")) != value:
                yield "second_verdict", f"a second score ({match.group().strip()})"
    for match in _score_labelled().finditer(lowered(text)):
        if float(match.group("n")) != value:
            yield "second_verdict", f"a second score ({match.group().strip()})"
    negated = re.compile(
        rf"\b{_NEGATOR}\s+{_NEG_FILLER}(?:(?:score|rating|grade|of|worth)\s+)*(?P<n>[0-9]+(?:\.[0-9]+)?)"
        rf"(?:[ \t]*(?:/|out\s+of)[ \t]*[0-9]+)?(?![\w]|\.[0-9])[ \t]*[.!;]?{_CLAUSE_END}",
        re.IGNORECASE,
    )
    for match in negated.finditer(folded):
        if float(match.group("n")) == value:
            yield "negated_verdict", f"'{match.group().strip()}'"


def criteria_conflicts(text: str, verdict: dict[str, int]) -> Iterator[tuple[str, str]]:
    """(code, how) for each criterion scored again in the reasoning with another value: its name, a colon
    or '=', a number ("Correct: 1/3", "**tone** = 0")."""
    for name, value in verdict.items():
        spelled = r"[\s_-]".join(re.escape(part) for part in re.split(r"[\s_-]+", name))
        pattern = re.compile(
            rf"(?<![\w\"']){spelled}(?:\*\*|__)?[ \t]*[:=][ \t]*(?:\*\*|__)?[ \t]*(?P<n>[0-9]+)(?:[ \t]*/[ \t]*[0-9]+)?(?!\w|\.[0-9])",
            re.IGNORECASE,
        )
        for match in pattern.finditer(fold(text)):
            if int(match.group("n")) != value:
                yield "second_verdict", f"'{name}' scored again ({match.group().strip()})"
