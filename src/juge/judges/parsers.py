"""Strict verdict parsers: exactly the format, or `unparsed`.

Each parser is a pure function ``parse_xxx(text, **config) -> ParseResult``. It
accepts only the exact ASCII format its template asks for and fails closed on
anything else: a decorated verdict (``PASS.``, ``**PASS**``), a verdict inside
prose, look-alike or invisible characters (see `textnorm.skeleton`), a second,
different verdict, a missing JSON field, an empty output. Refusals are decided
by the provider (`Response.refused`), never here.

Line handling: lines are split on ``\\n`` only and only trailing spaces, tabs
and carriage returns are stripped from the verdict line, so a verdict glued to
another line by a Unicode line separator is not a verdict.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from juge.errors import InputError
from juge.fastjson import loads_unique
from juge.judges.contradictions import (
    criteria_conflicts,
    fold,
    pairwise_conflicts,
    pairwise_statements,
    passfail_conflicts,
    passfail_statements,
    score_conflicts,
    score_statements,
)
from juge.judges.textnorm import skeleton
from juge.lazy import lazy_pattern

Verdict = str | int | float | dict[str, Any]

# Bump when a parser reads the same text differently: a calibration measured with another parser has expired.
PARSER_VERSION = 2  # 2: explanations that disagree with the verdict in words are unparsed (issue 27)


# Why an answer is unparsed: one code per rule of the parser contract (docs/security.md, "Parser
# contract"). A stored reason starts with its code ("second_verdict: ..."), so a run's summary counts
# how often each rule fired without re-reading the answers.
REASON_CODES: dict[str, str] = {
    "empty": "the answer is empty",
    "format": "the verdict is not where the format puts it, or not in its exact form",
    "disguised": "the verdict is decorated, in another case, or spelled with look-alike or invisible characters",
    "no_reasoning": "no explanation or reasoning where the format asks for one",
    "bad_value": "a value outside the scale, or a criterion missing, unknown or not an integer",
    "second_verdict": "a second verdict: a line, a cue ('Answer: FAIL'), brackets, a second marker or JSON object",
    "negated_verdict": "the explanation negates the verdict ('not PASS', 'does not pass', 'is not a tie')",
    "opposite_word": "a verdict word that disagrees, in any listed language ('It is a fail', 'B wins', 'échec')",
    "structured": "a structured (JSON) answer with a field missing, extra or of the wrong type",
    "not_allowed": "a constrained answer that is not one of the allowed verdict strings",
    "cut": "the model stopped at max_tokens (finish_reason length): the cut may have taken what reverses it",
    "unknown": "an unparsed answer stored without a reason code (an older run, or imported)",
}


def reason_code(reason: str | None) -> str:
    """The code a stored reason starts with ("second_verdict: ..."), or ``unknown``."""
    code = (reason or "").split(":", 1)[0]
    return code if code in REASON_CODES else "unknown"


@dataclass(frozen=True)
class ParseResult:
    """What a parser read: `verdict` is set only when `outcome == "ok"`; `reason` says why not, starting
    with its code (one of `REASON_CODES`), which `code` holds alone."""

    outcome: Literal["ok", "unparsed"]
    verdict: Verdict | None = None
    reason: str | None = None

    @property
    def code(self) -> str | None:
        """The reason code of an unparsed result (None when ok)."""
        return None if self.outcome == "ok" else reason_code(self.reason)

    def __post_init__(self) -> None:
        if self.outcome == "ok" and self.verdict is None:
            raise ValueError("an ok parse needs a verdict")
        if self.outcome != "ok" and self.verdict is not None:
            raise ValueError("an unparsed result cannot carry a verdict")


def ok(verdict: Verdict) -> ParseResult:
    return ParseResult("ok", verdict, None)


def unparsed(code: str, detail: str) -> ParseResult:
    if code not in REASON_CODES:
        raise ValueError(f"unknown reason code {code!r}")
    return ParseResult("unparsed", None, f"{code}: {detail}")


_TRAILING = " \t\r"
_WORDS = lazy_pattern(r"[A-Za-z]+")


def _lines(text: str) -> list[str]:
    return [line.rstrip(_TRAILING) for line in text.split("\n")]


def _last_nonempty(lines: list[str]) -> int | None:
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip(_TRAILING + " "):
            return i
    return None


def _is_blank(text: str | None) -> bool:
    return text is None or not text.strip()


# --- PASS / FAIL -----------------------------------------------------------------

_PASSFAIL = ("PASS", "FAIL")


def _looks_like_verdict_line(line: str) -> bool:
    """A line that states PASS/FAIL on its own: 'FAIL', 'Verdict: PASS', '**fail**' (after skeleton)."""
    words = _WORDS.findall(skeleton(line))
    if len(words) == 1 and words[0].upper() in _PASSFAIL:
        return True
    return len(words) <= 3 and any(w in _PASSFAIL for w in words)


def parse_passfail(text: str, *, require_reason: bool = True) -> ParseResult:
    """First line exactly ``PASS`` or ``FAIL``; then (if `require_reason`) a sentence on the next line(s).

    Unparsed: empty output; a first line that is anything but the bare word (``PASS.``,
    ``**PASS**``, ``pass``, ``Verdict: PASS``, leading space, BOM, zero-width or look-alike
    characters); no explanation; a later line that is itself a verdict (``FAIL``, ``Verdict: FAIL``),
    which would make the output say two things.
    """
    if _is_blank(text):
        return unparsed("empty", "empty output")
    lines = _lines(text)
    first = lines[0]
    if first not in _PASSFAIL:
        words = _WORDS.findall(skeleton(first))
        if any(w.upper() in _PASSFAIL for w in words):
            return unparsed(
                "disguised",
                "first line is not exactly PASS or FAIL (decorated, lower case, in prose, "
                "or with hidden or look-alike characters)",
            )
        return unparsed("format", "first line is not PASS or FAIL")
    rest = lines[1:]
    if require_reason and _is_blank("\n".join(rest)):
        return unparsed("no_reasoning", "no explanation after the verdict")
    folded = fold("\n".join(rest))
    for line in folded.splitlines():
        if _looks_like_verdict_line(line):
            return unparsed("second_verdict", "a second verdict line after the first")
    for verdict, how in passfail_statements(folded):
        if verdict != first or how.startswith("a line"):
            return unparsed("second_verdict", f"a second verdict ({verdict}, {how}) after the first")
    for code, how in passfail_conflicts("\n".join(rest), first):
        return unparsed(code, f"{how} disagrees with the verdict {first}")
    return ok(first)


# --- score on a scale (and additive totals) -------------------------------------

_INT = r"(?:0|[1-9][0-9]*)"
_FLOAT = r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"


def _marker_mentions(marker: str) -> re.Pattern[str]:
    """Any mention of the marker followed by a number, loosely (for spotting a second value)."""
    words = _WORDS.findall(marker) or [re.escape(marker.strip())]
    between = r"[^\w\n]{0,6}"
    return re.compile(r"\b" + between.join(words) + between + r"([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)


def parse_score(
    text: str,
    *,
    lo: int = 1,
    hi: int = 5,
    marker: str = "NOTE:",
    rescale_from: Sequence[float] | None = None,
    require_reasoning: bool = True,
) -> ParseResult:
    """Reasoning first, then a last non-empty line exactly ``<marker> <n>``.

    `n` is an integer in ``[lo, hi]`` (ASCII digits, no sign, no leading zero). With
    ``rescale_from=(a, b)`` the judge writes a decimal ``x`` in ``[a, b]`` instead and the
    verdict is ``lo + (x - a) / (b - a) * (hi - lo)``, a float on the scale.
    Unparsed: empty; no reasoning before the marker (if `require_reasoning`); a last line that
    is not exactly the marker, one space and the number; out of range; a mention of the marker
    elsewhere (look-alikes folded) with a different number.
    """
    if _is_blank(text):
        return unparsed("empty", "empty output")
    lines = _lines(text)
    last = _last_nonempty(lines)
    assert last is not None
    number = _FLOAT if rescale_from is not None else _INT
    match = re.fullmatch(re.escape(marker) + " (" + number + ")", lines[last], flags=re.ASCII)
    if match is None:
        return unparsed("format", f"last line is not exactly '{marker} <number>'")
    raw = float(match.group(1)) if rescale_from is not None else int(match.group(1))
    if rescale_from is not None:
        a, b = float(rescale_from[0]), float(rescale_from[1])
        if not a <= raw <= b:
            return unparsed("bad_value", f"{raw:g} is outside {a:g}-{b:g}")
        value: int | float = lo + (raw - a) / (b - a) * (hi - lo)
    else:
        if not lo <= raw <= hi:
            return unparsed("bad_value", f"{raw} is outside {lo}-{hi}")
        value = raw
    before = "\n".join(lines[:last])
    if require_reasoning and _is_blank(before):
        return unparsed("no_reasoning", "no reasoning before the score")
    folded = fold(before)
    for mention in _marker_mentions(marker).finditer(folded):
        if float(mention.group(1)) != float(raw):
            return unparsed("second_verdict", f"two '{marker}' values: {mention.group(1)} and {match.group(1)}")
    for stated in score_statements(folded):
        if stated != float(raw):
            return unparsed("second_verdict", f"a second score ({stated:g}) before the '{marker}' line")
    top = float(rescale_from[1]) if rescale_from is not None else hi
    for code, how in score_conflicts(before, float(raw), top):
        return unparsed(code, f"{how}, besides '{match.group()}'")
    return ok(value)


def parse_additive(text: str, *, n_items: int, marker: str = "Total:", require_reasoning: bool = True) -> ParseResult:
    """One point per satisfied item; last line exactly ``Total: <n>`` with ``0 <= n <= n_items``."""
    return parse_score(text, lo=0, hi=n_items, marker=marker, require_reasoning=require_reasoning)


# --- several criteria as one JSON object ----------------------------------------


class _BadJSON(InputError, ValueError):
    """A JSON object with a key given twice (the answer is unparsed)."""


def strict_json_object(text: str) -> dict[str, Any]:
    """Parse one JSON object: no duplicate keys, no NaN/Infinity, nothing after it."""
    try:
        value = loads_unique(text, _BadJSON, _BadJSON)
    except _BadJSON:
        raise
    except (ValueError, RecursionError) as exc:
        raise _BadJSON(f"not valid JSON ({exc.__class__.__name__})") from None
    if not isinstance(value, dict):
        raise _BadJSON("not a JSON object")
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_criteria(
    text: str,
    *,
    criteria: Mapping[str, Sequence[int]],
    extra_keys: bool = False,
    require_reasoning: bool = True,
) -> ParseResult:
    """Reasoning, then one JSON object alone on the last non-empty line: ``{"name": n, ...}``.

    `criteria` maps each criterion to its ``(lo, hi)`` range. Every criterion must be present
    with a JSON integer in range (not ``true``, not ``3.0``, not ``"3"``); a missing criterion is
    never given a default. Extra keys are refused unless `extra_keys`. An earlier JSON object
    that scores the same criteria differently makes the output unparsed.
    """
    if _is_blank(text):
        return unparsed("empty", "empty output")
    lines = _lines(text)
    last = _last_nonempty(lines)
    assert last is not None
    line = lines[last]
    if not (line.startswith("{") and line.endswith("}")):
        return unparsed("format", "last line is not a JSON object")
    try:
        scores = strict_json_object(line)
    except _BadJSON as exc:
        return unparsed("format", f"last line: {exc}")
    missing = [name for name in criteria if name not in scores]
    if missing:
        return unparsed("bad_value", f"missing criteria: {', '.join(missing)}")
    extra = sorted(set(scores) - set(criteria))
    if extra and not extra_keys:
        return unparsed("bad_value", f"unknown keys: {', '.join(extra)}")
    for name, (lo, hi) in criteria.items():
        value = scores[name]
        if not _is_int(value):
            return unparsed("bad_value", f"'{name}' is not an integer")
        if not lo <= value <= hi:
            return unparsed("bad_value", f"'{name}' = {value} is outside {lo}-{hi}")
    verdict = {name: scores[name] for name in criteria}
    before = lines[:last]
    if require_reasoning and _is_blank("\n".join(before)):
        return unparsed("no_reasoning", "no reasoning before the scores")
    for other in _json_objects(fold("\n".join(before))):
        if other is None:
            return unparsed("second_verdict", "too many braces before the scores to check for a second JSON object")
        if any(name in other and other[name] != verdict[name] for name in criteria):
            return unparsed("second_verdict", "two JSON objects with different scores")
    for code, how in criteria_conflicts("\n".join(before), verdict):
        return unparsed(code, how)
    return ok(verdict)


_MAX_OBJECT_STARTS = 2000
_DECODER = json.JSONDecoder()


def _json_objects(text: str) -> Iterator[dict[str, Any] | None]:
    """Every JSON object in `text`, over any number of lines (None: too many '{' to try them all)."""
    starts = [m.start() for m in re.finditer(r"\{", text)]
    if len(starts) > _MAX_OBJECT_STARTS:
        yield None
        return
    covered = -1  # an object nested in one already read is part of it, not a second object
    for start in starts:
        if start < covered:
            continue
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            covered = end
            yield value


# --- pairwise -------------------------------------------------------------------

_PAIR_EXACT = lazy_pattern(r"(?<!\[)\[\[([ABC])\]\](?!\])")
_PAIR_LOOSE = lazy_pattern(r"\[\s*\[\s*(a|b|c|tie)\s*\]\s*\]", re.IGNORECASE)


def parse_pairwise(text: str) -> ParseResult:
    """Exactly one ``[[A]]``, ``[[B]]`` or ``[[C]]`` (tie) anywhere in the text; verdict is the letter.

    Any second marker, the same letter or another, makes the output unparsed: a judge that
    writes two markers has not given one verdict. Decorated or look-alike markers
    (``[[ A ]]``, ``[[a]]``, ``[[[A]]]``, Cyrillic ``А``, fullwidth brackets, zero-width
    characters inside) are not markers, and if one sits beside a real marker the output is
    unparsed too.
    """
    if _is_blank(text):
        return unparsed("empty", "empty output")
    exact = _PAIR_EXACT.findall(text)
    loose = _PAIR_LOOSE.findall(skeleton(text))
    if len(exact) > 1:
        return unparsed("second_verdict", f"{len(exact)} verdict markers: {', '.join(exact)}")
    if not exact:
        if loose:
            return unparsed("disguised", "verdict marker is decorated or uses look-alike or hidden characters")
        return unparsed("format", "no [[A]], [[B]] or [[C]] marker")
    if len(loose) != 1:
        return unparsed("second_verdict", "a second, disguised verdict marker")
    for letter, how in pairwise_statements(fold(text)):
        if letter != exact[0]:
            return unparsed("second_verdict", f"a second verdict ({letter}, {how}) besides [[{exact[0]}]]")
    for code, how in pairwise_conflicts(_PAIR_EXACT.sub(" ", text), exact[0]):
        return unparsed(code, f"{how} disagrees with [[{exact[0]}]]")
    return ok(exact[0])


# --- structured output (JSON schema) ----------------------------------------------


def structured_to_text(data: dict[str, Any], setup: str, config: Mapping[str, Any]) -> str:
    """Turn a structured answer into the text format so the same strict parser validates it.

    Raises ValueError when a field is missing, extra or of the wrong type.
    """

    def field(name: str, kind: type | tuple[type, ...]) -> Any:
        if name not in data:
            raise ValueError(f"missing field '{name}'")
        value = data[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(f"field '{name}' has the wrong type")
        return value

    expected = {
        "passfail": {"verdict", "reason"},
        "score": {"reasoning", "score"},
        "additive": {"reasoning", "total"},
        "criteria": {"reasoning", "scores"},
        "pairwise": {"reasoning", "verdict"},
    }[setup]
    if set(data) != expected:
        raise ValueError(f"fields must be exactly {sorted(expected)}")
    if setup == "passfail":
        verdict = field("verdict", str)
        if verdict not in _PASSFAIL:
            raise ValueError("field 'verdict' must be exactly PASS or FAIL")
        return f"{verdict}\n{field('reason', str)}"
    if setup == "pairwise":
        letter = field("verdict", str)
        if letter not in ("A", "B", "C"):
            raise ValueError("field 'verdict' must be exactly A, B or C")
        return f"{field('reasoning', str)}\n[[{letter}]]"
    if setup == "criteria":
        scores = field("scores", dict)
        return f"{field('reasoning', str)}\n{json.dumps(scores)}"
    number_kind: type | tuple[type, ...] = (int, float) if config.get("rescale_from") is not None else int
    key = "score" if setup == "score" else "total"
    value = field(key, number_kind)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"field '{key}' is not finite")
    marker = config.get("marker", "NOTE:" if setup == "score" else "Total:")
    return f"{field('reasoning', str)}\n{marker} {value}"


# Each takes the answer text and its setup's parser options as keywords.
PARSERS: dict[str, Callable[..., ParseResult]] = {
    "passfail": parse_passfail,
    "score": parse_score,
    "criteria": parse_criteria,
    "additive": parse_additive,
    "pairwise": parse_pairwise,
}


def parse_structured(text: str, setup: str, config: Mapping[str, Any]) -> ParseResult:
    """Parse a JSON answer given under a schema, then hold it to the setup's strict parser."""
    if _is_blank(text):
        return unparsed("empty", "empty output")
    try:
        data = strict_json_object(text.strip(" \t\r\n"))
        as_text = structured_to_text(data, setup, config)
    except ValueError as exc:
        return unparsed("structured", f"structured answer: {exc}")
    return PARSERS[setup](as_text, **config)
