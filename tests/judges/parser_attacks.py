"""The parser attack corpus: hostile judge answers for every setup, on both sides.

`MUST_FAIL[setup]` holds answers that state a second verdict contradicting the one in the
format's place (own line, after a cue, in brackets or bold, any case, spelling or script,
look-alike or fullwidth characters, digits of other scripts, an earlier JSON object over
several lines): each must be `unparsed`. `MUST_PARSE[setup]` holds hostile-looking answers a
reader would still read as one verdict (the verdict word in ordinary prose, a restatement
that agrees, multiple-choice letters, numbers that are not scores): each must parse to
the verdict in the format's place (`written_verdict`). Built from phrasings times disguises, and for the
parser contract (docs/security.md) from templates times languages times positions, so that each list is
long (>= 300 contradictions per setup) and every phrasing meets every disguise, language and position.
"""

from __future__ import annotations

import json

ZW = "\u200b"


def _fullwidth(word: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in word)


def _math_bold(word: str) -> str:
    out = []
    for c in word:
        if "A" <= c <= "Z":
            out.append(chr(0x1D400 + ord(c) - ord("A")))
        elif "a" <= c <= "z":
            out.append(chr(0x1D41A + ord(c) - ord("a")))
        else:
            out.append(c)
    return "".join(out)


_CYRILLIC = str.maketrans({"A": "\u0410", "B": "\u0412", "C": "\u0421", "P": "\u0420", "S": "\u0405", "I": "\u0406"})
_GREEK = str.maketrans({"A": "\u0391", "B": "\u0392", "P": "\u03a1", "I": "\u0399"})

WORD_DISGUISES = {
    "plain": lambda w: w,
    "lower": str.lower,
    "title": str.title,
    "fullwidth": _fullwidth,
    "cyrillic": lambda w: w.translate(_CYRILLIC),
    "greek": lambda w: w.translate(_GREEK),
    "zero_width": lambda w: ZW.join(w),
    "spaced": lambda w: " ".join(w),
    "math_bold": _math_bold,
}
VERB_FORMS = {"FAIL": ["fails", "failed", "FA1L"], "PASS": ["passes", "passed", "PA55"]}

# --- PASS / FAIL: the first line says PASS ----------------------------------------

PASSFAIL_CONTRADICTIONS = [
    "PASS\nThe hours are right.\n{w}",
    "PASS\nThe hours are right.\nVerdict: {w}",
    "PASS\nThe answer is wrong, so: {w}",
    "PASS\nOn reflection, the final verdict is {w}.",
    "PASS\nThe hours are right.\nFinal answer: {w}",
    "PASS\nThe hours are right. [{w}]",
    "PASS\nThe hours are right, but on a closer read **{w}**.",
    "PASS\nThe price is invented. Therefore {w}.",
    "PASS\nCorrection: {w}",
    "PASS\nIt looked fine at first, but {w}.",
    "PASS\nThe price is invented; I would mark it {w}.",
    "PASS\nThe price is invented \u3010{w}\u3011",
    "PASS\nThe price is invented \u27e6{w}\u27e7",
    "PASS\nOverall: {w}!",
    "PASS\nThe price is invented, so the final decision is {w}.",
]
PASSFAIL_PROSE = [
    "PASS\nIt fails to mention the price, which the question did not ask for.",
    "PASS\nThe reply would {w} only if it named a price, and it does not.",
    "PASS\nA {w} here would be too harsh: the hours are right.",
    "PASS\nEven so, {w} rates are not the point; the hours are right.",
    "PASS\nThe customer wrote '{w} the salt', a typo the answer ignores.",
    "PASS\nNothing in it would make a strict reader {w} it for tone.",
    "PASS\nThe answer is right, so it passes.",
    "PASS\nThe word {w} appears in the question, not in the answer.",
    "PASS\nIt does not {w} on any of the three facts.",
    "PASS\nThe final verdict rests on the hours, which are right.",
    "PASS\nA model that failed to read the context would say otherwise; this one did not.",
    "PASS\nSo the answer holds, with a minor {w} of style that the rubric ignores.",
]


def _passfail_attacks() -> tuple[list[str], list[str]]:
    fail: list[str] = []
    for template in PASSFAIL_CONTRADICTIONS:
        for disguise in WORD_DISGUISES.values():
            fail.append(template.format(w=disguise("FAIL")))
    fail += [
        "PASS\nThe answer is wrong, so it fails.",
        "PASS\nThe price is invented. So it FAILED.",
        "PASS\nThe price is invented. Verdict: FA1L",
        "PASS\nThe price is invented. Final answer - f-a-i-l.",
        "PASS\nThe answer is wrong, so: FAIL",
        "PASS\nOn reflection, the final verdict is FAIL.",
    ]
    parse: list[str] = []
    for template in PASSFAIL_PROSE:
        for disguise in WORD_DISGUISES.values():
            parse.append(template.format(w=disguise("fail")))
    return fail, parse


# --- pairwise: the marker says [[A]] ----------------------------------------------

LETTER_DISGUISES = {
    "plain": lambda c: c,
    "fullwidth": _fullwidth,
    "cyrillic": lambda c: c.translate(_CYRILLIC),
    "greek": lambda c: c.translate(_GREEK),
    "math_bold": _math_bold,
    "zero_width": lambda c: ZW + c + ZW,
}
PAIRWISE_CONTRADICTIONS = [
    "Assistant A is right. [[A]] ... \u27e6{b}\u27e7",
    "Assistant A is right. [[A]]\n\u3010{b}\u3011",
    "[[A]] is what I first wrote, but my verdict is {b}.",
    "Assistant A is right.\n[[A]]\nFinal verdict: {b}",
    "Assistant A is right.\n[[A]]\n**{b}**",
    "Assistant A is right.\n[[A]]\n{b}",
    "Assistant {b} is better.\n[[A]]",
    "A misses the point, so {b}.\n[[A]]",
    "[[A]]\nOn reflection: [{b}]",
    "[[A]]\nTherefore {b}.",
    "[[A]]\nThe winner is {b}.",
    "[[A]] \u300a{b}\u300b",
    "[[A]] {{{{{b}}}}}",
    "[[A]]\nCorrected verdict: **{b}**",
    "[[A]]\nMy final answer: {b}",
    "[[A]] <<{b}>>",
    "[[A]]\nVerdict: it's {b}",
]


def _pairwise_attacks() -> tuple[list[str], list[str]]:
    fail: list[str] = []
    for template in PAIRWISE_CONTRADICTIONS:
        for disguise in LETTER_DISGUISES.values():
            fail.append(template.format(b=disguise("B")))
    fail += [
        "[[A]]\nverdict: b",
        "[[A]]\nThe final verdict is a tie.",
        "[[A]]\nOverall: tie",
        "[[A]]\nWinner: b.",
        "Both are good. [[A]] \u3010TIE\u3011",
        "[[A]] ... \u27e6B\u27e7",
    ]
    prose = [
        "Both assistants correctly select **{c}**, matching the reference. A explains why. [[A]]",
        "Option ({c}) is the one both pick; A explains it better. [[A]]",
        "Assistant {b}'s answer is longer, but A is right. [[A]]",
        "**Assistant {b}:**\n- misses the date\n\n[[A]]",
        "{b} fails to cite the source; A cites it. [[A]]",
        "Answer {b}\nLists three wrong dates.\n[[A]]",
        "The tie-breaker is accuracy, and A is accurate. [[A]]",
        "A is correct, so A wins. [[A]]",
        "Assistant A is better.\n[[A]]",
        "Plan {b} in the answer is wrong; A chose plan C. [[A]]",
        "The question asks for items a, b and c; only A lists them. [[A]]",
        "{b} and C are both incomplete; A is complete. [[A]]",
        "Verdict follows. A gets the units right. [[A]]",
        "It is not a tie: A is right and {b} is wrong. [[A]]",
        "Assistant {b} is better at formatting, but A is correct. [[A]]",
        "Assistant {b} is better formatted but wrong.\n[[A]]",
        "My verdict: [[A]]",
    ]
    parse: list[str] = []
    for template in prose:
        for disguise in LETTER_DISGUISES.values():
            parse.append(template.format(b=disguise("B"), c=disguise("c")))
    return fail, parse


# --- score (1-5, last line NOTE: 4) and additive (0-3, last line Total: 3) --------

DIGIT_SCRIPTS = {
    "ascii": 0x30,
    "arabic_indic": 0x660,
    "extended_arabic_indic": 0x6F0,
    "devanagari": 0x966,
    "bengali": 0x9E6,
    "thai": 0xE50,
    "nko": 0x7C0,
    "fullwidth": 0xFF10,
    "math_bold": 0x1D7CE,
    "tibetan": 0xF20,
}


def _digits(n: int, zero: int) -> str:
    return "".join(chr(zero + int(d)) for d in str(n))


SCORE_CONTRADICTIONS = [
    "The answer is partly right.\n{m} {d}\nOn reflection it is better.\n{m} {n}",
    "The answer is partly right.\n**{m}** {d}\n{m} {n}",
    "The answer is partly right, final score: {d}\n{m} {n}",
    "The answer is partly right.\nScore: {d}/5\n{m} {n}",
    "The answer is partly right. I give it a {d}.\n{m} {n}",
    "The answer is partly right.\nRating: {d} out of 5\n{m} {n}",
    "The answer is partly right.\n{lower} {d}\n{m} {n}",
    "The answer is partly right.\nMy verdict: {d}\n{m} {n}",
    "The answer is partly right.\nFinal answer: {d}.\n{m} {n}",
    "The answer is partly right ({m} {d}).\n{m} {n}",
    "The answer is partly right.\nIt gets a score of {d}\n{m} {n}",
]
SCORE_PROSE = [
    "A score of {d} would mean the answer is wrong, but it is right.\n{m} {n}",
    "Score {d}: wrong. Score {n}: right with one slip.\n{m} {n}",
    "It lists {d} prices and all of them are right.\n{m} {n}",
    "Level {d} describes a partial answer; this one is complete.\n{m} {n}",
    "The reply says the shop opens at {d} and closes at 18.\n{m} {n}",
    "The answer is right. Final score: {n}\n{m} {n}",
    "The answer is right; {m} {n} is what I give.\n{m} {n}",
    "It cites {d} sources out of the 5 available, which is enough.\n{m} {n}",
    "Only {d} of the answer's claims need checking.\n{m} {n}",
    "Step {d} of the recipe is right, and so is the rest.\n{m} {n}",
]


def _score_attacks(marker: str, n: int, other: int) -> tuple[list[str], list[str]]:
    fail: list[str] = []
    for template in SCORE_CONTRADICTIONS:
        for zero in DIGIT_SCRIPTS.values():
            fail.append(template.format(m=marker, lower=marker.lower(), n=n, d=_digits(other, zero)))
    parse: list[str] = []
    for template in SCORE_PROSE:
        for zero in DIGIT_SCRIPTS.values():
            digits = _digits(other, zero)
            parse.append(template.format(m=marker, n=n, d=digits).replace(f"{n}\n{marker}", f"{n}\n{marker}"))
    # A restatement that agrees, in any script, is not a contradiction.
    for zero in DIGIT_SCRIPTS.values():
        parse.append(f"The answer is right.\n{marker} {_digits(n, zero)}\n{marker} {n}")
    return fail, parse


# --- criteria: last line {"correct": 3, "tone": 2} --------------------------------

CRITERIA_LAST = '{"correct": 3, "tone": 2}'


def _criteria_attacks() -> tuple[list[str], list[str]]:
    fail: list[str] = []
    wrong = [{"correct": 1, "tone": 2}, {"correct": 3, "tone": 0}, {"correct": 2}, {"tone": 1}]
    for obj in wrong:
        for indent in (None, 0, 1, 2, 4, "\t"):
            spread = json.dumps(obj, indent=indent)
            fail.append(f"Reasoning: facts wrong, tone fine.\n{spread}\nOn second thought:\n{CRITERIA_LAST}")
            fail.append(f"Reasoning.\n```json\n{spread}\n```\n{CRITERIA_LAST}")
            fail.append(f"Reasoning.\n{_fullwidth(spread)}\n{CRITERIA_LAST}")
            wide = spread.replace("1", "\u0661").replace("0", "\u0660").replace("2", "\u0662")
            fail.append(f"Reasoning.\n{wide}\n{CRITERIA_LAST}")
            fail.append(f"Reasoning. Draft {spread} then final:\n{CRITERIA_LAST}")
    parse: list[str] = []
    fine = [
        {"correct": 3, "tone": 2},
        {"correct": 3},
        {"tone": 2},
        {"other": 1},
        {"scale": {"correct": [1, 3]}},
    ]
    for obj in fine:
        for indent in (None, 0, 1, 2, 4, "\t"):
            spread = json.dumps(obj, indent=indent)
            parse.append(f"Reasoning.\n{spread}\n{CRITERIA_LAST}")
            parse.append(f"Reasoning.\n```json\n{spread}\n```\n{CRITERIA_LAST}")
            parse.append(f"Reasoning.\n{_fullwidth(spread)}\n{CRITERIA_LAST}")
    for prose in (
        "The set {a, b} is right.",
        "Braces { and } appear in the code.",
        "A template like {name} is fine.",
        "An unclosed { brace.",
        '{"correct": 1, "tone"',
    ):
        parse.append(f"{prose}\n{CRITERIA_LAST}")
    return fail, parse


# --- the parser contract (docs/security.md): statements in words, in every listed language, at every position ---
#
# Each template is a sentence of the explanation; `_place` puts it at the start, in the middle, at the end or on
# a line of its own, between two neutral sentences. A contradiction template states the other verdict or negates
# this one; an agreeing template says the same thing about the verdict the answer gives.

NEUTRAL = ("The hours match the context.", "The tone is polite.")
POSITIONS = ("start", "middle", "end", "own_line")


def _place(sentence: str, position: str) -> str:
    first, second = NEUTRAL
    return {
        "start": f"{sentence} {first} {second}",
        "middle": f"{first} {sentence} {second}",
        "end": f"{first} {second} {sentence}",
        "own_line": f"{first}\n{sentence}\n{second}",
    }[position]


def _language_words() -> dict[str, dict[str, list[str]]]:
    """Per language but English: the first two words of each list in the contract's vocabulary."""
    from juge.judges.vocabulary import LANGUAGES

    return {
        code: {kind: list(words[kind])[:2] for kind in ("pass_", "fail", "better", "tie", "score")}  # type: ignore[literal-required]
        for code, words in LANGUAGES.items()
        if code != "en"
    }


_UNSPACED = ("zh", "ja", "ko")
PASSFAIL_STATED = {  # {o}: the other verdict word in lower case, {O}: in capitals, {v}/{V}: this verdict's
    "Answer: {O}",
    "It is a {o}.",
    "This is a {o}, to be honest.",
    "I would give it a {o}.",
    "Overall the response is a {o}.",
    "In short, {O}.",
    "This is not {V}.",
    "The response does not {v}.",
    "It does not {v} the check.",
    "It should not {v}.",
}
PASSFAIL_AGREED = {
    "It is a {v}.",
    "This is {V}, to be honest.",
    "I would give it a {v}.",
    "This is not a {o}.",
    "The response does not {o}.",
    "It would {o} only if it named a price, and it does not.",
    "A {o} here would be too harsh.",
    "It does not {o} to mention the hours.",
}
PROPERTY = {"PASS": "The response has the property.", "FAIL": "The response does NOT have the property."}


def _contract_passfail() -> tuple[list[str], list[str]]:
    fail: list[str] = []
    parse: list[str] = []
    languages = _language_words()
    for verdict, other in (("PASS", "FAIL"), ("FAIL", "PASS")):
        words = {"v": verdict.lower(), "V": verdict, "o": other.lower(), "O": other}
        for position in POSITIONS:
            for template in sorted(PASSFAIL_STATED):
                fail.append(f"{verdict}\n" + _place(template.format(**words), position))
            for template in sorted(PASSFAIL_AGREED):
                parse.append(f"{verdict}\n" + _place(template.format(**words), position))
            fail.append(f"{verdict}\n" + _place(PROPERTY[other], position))
            parse.append(f"{verdict}\n" + _place(PROPERTY[verdict], position))
            for lists in languages.values():
                for word in lists["fail" if other == "FAIL" else "pass_"]:
                    fail.append(f"{verdict}\n" + _place(f"Resultado: {word}.", position))
                for word in lists["fail" if verdict == "FAIL" else "pass_"]:
                    parse.append(f"{verdict}\n" + _place(f"Resultado: {word}.", position))
    return fail, parse


PAIR_STATED = {  # {x}: the other letter, {l}: the verdict's letter
    "{x} is better.",
    "{x} wins.",
    "Assistant {x} is the better one.",
    "{x} is better than {l}.",
    "Overall, {x} is superior.",
    "Response {x} comes out ahead.",
    "{l} is not better.",
    "{l} does not win.",
}
PAIR_AGREED = {
    "{l} is better.",
    "{l} wins.",
    "{l} is better than {x}.",
    "{x} is not better.",
    "Assistant {x} is better at formatting, but {l} is correct.",
    "It reaches the conclusion that Phone {x} is superior, which is unsupported.",
    "{x} fails to cite the source.",
}
PAIR_MARKER_PLACES = ("after", "before")


def _pair_answer(body: str, letter: str, where: str) -> str:
    return f"{body}\n[[{letter}]]" if where == "after" else f"[[{letter}]]\n{body}"


def _said_better(code: str, letter: str, phrase: str) -> str:
    """`letter` is the better answer, in the word order of language `code`."""
    return (
        f"{letter}{phrase}。"
        if code in ("zh", "ja")
        else f"{letter}{phrase}다."
        if code == "ko"
        else f"{letter} {phrase}."
    )


def _contract_pairwise() -> tuple[list[str], list[str]]:
    fail: list[str] = []
    parse: list[str] = []
    languages = _language_words()
    for letter, other in (("A", "B"), ("B", "A")):
        for where in PAIR_MARKER_PLACES:
            for position in POSITIONS:
                for template in sorted(PAIR_STATED):
                    fail.append(_pair_answer(_place(template.format(x=other, l=letter), position), letter, where))
                for template in sorted(PAIR_AGREED):
                    parse.append(_pair_answer(_place(template.format(x=other, l=letter), position), letter, where))
                fail.append(_pair_answer(_place("Both are close and it is a tie.", position), letter, where))
                for code, lists in languages.items():
                    for phrase in lists["better"]:
                        fail.append(_pair_answer(_place(_said_better(code, other, phrase), position), letter, where))
                        parse.append(_pair_answer(_place(_said_better(code, letter, phrase), position), letter, where))
                    for tie in lists["tie"][:1]:
                        fail.append(_pair_answer(_place(f"({tie})", position), letter, where))
    for position in POSITIONS:  # a tie given, a letter said to be better or the tie negated
        fail.append(_pair_answer(_place("A is better.", position), "C", "after"))
        fail.append(_pair_answer(_place("It is not a tie.", position), "C", "after"))
        parse.append(_pair_answer(_place("Neither is better; it is a tie.", position), "C", "after"))
    return fail, parse


SCORE_STATED = {  # {d}: another score, {n}: the verdict's, {hi}: the scale's top
    "**{d}**",
    "{d}/{hi}",
    "I rate it {d}/{hi} overall.",
    "({d} out of {hi})",
    "Score: {d}",
    "Rating: **{d}**.",
    "It does not deserve a {n}.",
    "Not a {n}, really.",
}
SCORE_AGREED = {
    "**{n}**",
    "{n}/{hi}",
    "I rate it {n}/{hi} overall.",
    "Score: {n}",
    "It deserves a {n}.",
    "{d}/{hi} of the claims needed a source, and all had one.",
    "It cites {d} sources out of the {hi} available.",
    "It does not deserve a {d}.",
}


def _contract_score(marker: str, n: int, other: int, hi: int) -> tuple[list[str], list[str]]:
    fail: list[str] = []
    parse: list[str] = []
    languages = _language_words()
    for script in ("ascii", "arabic_indic", "devanagari"):
        d = _digits(other, DIGIT_SCRIPTS[script])
        for position in POSITIONS:
            for template in sorted(SCORE_STATED):
                fail.append(_place(template.format(d=d, n=n, hi=hi), position) + f"\n{marker} {n}")
            for template in sorted(SCORE_AGREED):
                parse.append(_place(template.format(d=d, n=n, hi=hi), position) + f"\n{marker} {n}")
            for lists in languages.values():
                for word in lists["score"][:1]:
                    fail.append(_place(f"{word}: {d}", position) + f"\n{marker} {n}")
                    parse.append(_place(f"{word}: {n}", position) + f"\n{marker} {n}")
    return fail, parse


def _contract_criteria() -> tuple[list[str], list[str]]:
    fail: list[str] = []
    parse: list[str] = []
    spellings = (str.lower, str.title, str.upper)
    stated = ("{name}: {v}", "{name}: {v}/3", "**{name}** = {v}", "{name} = {v}.", "({name}: {v})")
    for spell in spellings:
        for script in ("ascii", "arabic_indic", "devanagari"):
            for position in POSITIONS:
                for template in stated:
                    for name, wrong, right in (("correct", 1, 3), ("tone", 0, 2)):
                        said = template.format(name=spell(name), v=_digits(wrong, DIGIT_SCRIPTS[script]))
                        fail.append(_place(said, position) + f"\n{CRITERIA_LAST}")
                        agreed = template.format(name=spell(name), v=_digits(right, DIGIT_SCRIPTS[script]))
                        parse.append(_place(agreed, position) + f"\n{CRITERIA_LAST}")
    return fail, parse


def build() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    must_fail: dict[str, list[str]] = {}
    must_parse: dict[str, list[str]] = {}
    must_fail["passfail"], must_parse["passfail"] = _passfail_attacks()
    must_fail["pairwise"], must_parse["pairwise"] = _pairwise_attacks()
    must_fail["score"], must_parse["score"] = _score_attacks("NOTE:", 4, 2)
    must_fail["additive"], must_parse["additive"] = _score_attacks("Total:", 3, 1)
    must_fail["criteria"], must_parse["criteria"] = _criteria_attacks()
    contract = {
        "passfail": _contract_passfail(),
        "pairwise": _contract_pairwise(),
        "score": _contract_score("NOTE:", 4, 2, 5),
        "additive": _contract_score("Total:", 3, 1, 3),
        "criteria": _contract_criteria(),
    }
    for setup, (fail, parse) in contract.items():
        must_fail[setup] += fail
        must_parse[setup] += parse
    dedupe = {setup: list(dict.fromkeys(texts)) for setup, texts in must_fail.items()}
    return dedupe, {setup: list(dict.fromkeys(texts)) for setup, texts in must_parse.items()}


MUST_FAIL, MUST_PARSE = build()
VERDICT = {"passfail": "PASS", "pairwise": "A", "score": 4, "additive": 3, "criteria": {"correct": 3, "tone": 2}}


def written_verdict(setup: str, text: str) -> object:
    """The verdict in the format's place of an answer of this corpus (every MUST_PARSE answer must parse to it):
    the first line, the marker's letter, the last line's number or JSON object."""
    if setup == "passfail":
        return text.split("\n", 1)[0]
    if setup == "pairwise":
        return text[text.index("[[") + 2]
    last = text.rstrip("\n").rsplit("\n", 1)[-1]
    return json.loads(last) if setup == "criteria" else int(last.rsplit(" ", 1)[-1])


CONFIG = {
    "passfail": {},
    "pairwise": {},
    "score": {"lo": 1, "hi": 5},
    "additive": {"n_items": 3},
    "criteria": {"criteria": {"correct": (1, 3), "tone": (0, 2)}},
}
