"""Deterministic, named checks: the cheapest grader that works.

A check reads a case and the output under test and returns `CheckResult(passed, reason)`;
`run_checks` returns `{name: CheckResult}`. A failed check is a failure whatever a judge
says; reports show both.

Built-in kinds (configured in the eval file's `[[checks]]` tables):

=================  =====================================================================
kind               options
=================  =====================================================================
json               -                      output parses as JSON
required_fields    fields = [...]         output is a JSON object with these keys
one_of             field?, values = [...] the output (or a JSON field of it) is in the set
range              field?, min?, max?     the output (or a JSON field) is a number in range
length             max_chars?, min_chars?, max_words?
regex              pattern, flags?        the pattern matches somewhere
no_regex           pattern, flags?        the pattern matches nowhere
forbidden_words    words = [...]          none of the words occurs (whole word, any case)
exact_match        normalize = true       output equals the case's reference
python             function = "mod:fn"    your own check: fn(case, output) -> bool | (bool, reason)
=================  =====================================================================

Register a check in code with `@register_check("name")`; the eval file then uses `kind = "name"`.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import sys
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from juge.data.records import Case
from juge.errors import InputError


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    reason: str | None = None  # why it failed; None when it passed


CheckFn = Callable[[Case, str], CheckResult]
CheckFactory = Callable[..., CheckFn]

_FACTORIES: dict[str, CheckFactory] = {}


class CheckConfigError(InputError, ValueError):
    """A check whose kind or options are wrong."""


def _factory(kind: str) -> Callable[[CheckFactory], CheckFactory]:
    def deco(f: CheckFactory) -> CheckFactory:
        _FACTORIES[kind] = f
        return f

    return deco


def register_check(kind: str) -> Callable[[Callable[[Case, str], Any]], Callable[[Case, str], Any]]:
    """Register a user check `fn(case, output) -> bool | (bool, reason)` under `kind`."""

    def deco(fn: Callable[[Case, str], Any]) -> Callable[[Case, str], Any]:
        _FACTORIES[kind] = lambda **_: _wrap_user(fn, kind)
        return fn

    return deco


def _wrap_user(fn: Callable[[Case, str], Any], name: str) -> CheckFn:
    def check(case: Case, output: str) -> CheckResult:
        result = fn(case, output)
        if isinstance(result, CheckResult):
            return result
        if isinstance(result, tuple):
            ok, reason = result
            return CheckResult(bool(ok), None if ok else str(reason))
        if isinstance(result, bool):
            return CheckResult(result, None if result else f"{name} returned False")
        raise TypeError(f"check {name!r} returned {type(result).__name__}; return bool or (bool, reason)")

    return check


def _json_value(output: str, field: str | None) -> tuple[bool, Any, str | None]:
    if field is None:
        return True, output.strip(), None
    try:
        obj = json.loads(output)
    except json.JSONDecodeError as exc:
        return False, None, f"not valid JSON ({exc.msg})"
    if not isinstance(obj, dict) or field not in obj:
        return False, None, f"no field {field!r}"
    return True, obj[field], None


@_factory("json")
def _json(**_: Any) -> CheckFn:
    """The output parses as JSON."""

    def check(case: Case, output: str) -> CheckResult:
        try:
            json.loads(output)
        except json.JSONDecodeError as exc:
            return CheckResult(False, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
        return CheckResult(True)

    return check


@_factory("required_fields")
def _required_fields(*, fields: list[str]) -> CheckFn:
    """The output is a JSON object holding each of `fields`."""

    def check(case: Case, output: str) -> CheckResult:
        try:
            obj = json.loads(output)
        except json.JSONDecodeError as exc:
            return CheckResult(False, f"not valid JSON ({exc.msg})")
        if not isinstance(obj, dict):
            return CheckResult(False, "not a JSON object")
        missing = [f for f in fields if f not in obj]
        return CheckResult(not missing, f"missing field(s): {', '.join(missing)}" if missing else None)

    return check


@_factory("one_of")
def _one_of(*, values: list[Any], field: str | None = None) -> CheckFn:
    """The output (or its JSON `field`) is one of `values`."""

    def check(case: Case, output: str) -> CheckResult:
        ok, value, why = _json_value(output, field)
        if not ok:
            return CheckResult(False, why)
        if value in values:
            return CheckResult(True)
        return CheckResult(False, f"{value!r} is not one of {values}")

    return check


@_factory("range")
def _range(*, min: float | None = None, max: float | None = None, field: str | None = None) -> CheckFn:
    """The output (or its JSON `field`) is a number within [`min`, `max`]."""

    def check(case: Case, output: str) -> CheckResult:
        ok, value, why = _json_value(output, field)
        if not ok:
            return CheckResult(False, why)
        if isinstance(value, bool):
            return CheckResult(False, f"{value!r} is not a number")
        try:
            number = float(value)
        except (TypeError, ValueError):
            return CheckResult(False, f"{value!r} is not a number")
        if number != number:  # NaN
            return CheckResult(False, "NaN is not a number in range")
        if min is not None and number < min:
            return CheckResult(False, f"{number:g} < {min:g}")
        if max is not None and number > max:
            return CheckResult(False, f"{number:g} > {max:g}")
        return CheckResult(True)

    return check


@_factory("length")
def _length(*, max_chars: int | None = None, min_chars: int | None = None, max_words: int | None = None) -> CheckFn:
    """The output's length is within the bounds given, in characters or words."""

    def check(case: Case, output: str) -> CheckResult:
        n = len(output)
        if max_chars is not None and n > max_chars:
            return CheckResult(False, f"{n} characters > {max_chars}")
        if min_chars is not None and n < min_chars:
            return CheckResult(False, f"{n} characters < {min_chars}")
        if max_words is not None and (w := len(output.split())) > max_words:
            return CheckResult(False, f"{w} words > {max_words}")
        return CheckResult(True)

    return check


def _compile(pattern: str, flags: str) -> re.Pattern[str]:
    value = 0
    for ch in flags:
        value |= {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}[ch]
    return re.compile(pattern, value)


@_factory("regex")
def _regex(*, pattern: str, flags: str = "") -> CheckFn:
    """`pattern` (a regular expression; `flags` such as "i") matches somewhere in the output."""
    rx = _compile(pattern, flags)

    def check(case: Case, output: str) -> CheckResult:
        return CheckResult(True) if rx.search(output) else CheckResult(False, f"no match for /{pattern}/")

    return check


@_factory("no_regex")
def _no_regex(*, pattern: str, flags: str = "") -> CheckFn:
    """`pattern` matches nowhere in the output."""
    rx = _compile(pattern, flags)

    def check(case: Case, output: str) -> CheckResult:
        m = rx.search(output)
        return CheckResult(False, f"matched /{pattern}/: {m.group(0)!r}") if m else CheckResult(True)

    return check


def _fold(text: str) -> str:
    # NFKC folds full-width and compatibility forms, so "Ｃｒｕｍｂｌ" counts as "Crumbl".
    return unicodedata.normalize("NFKC", text).casefold()


@_factory("forbidden_words")
def _forbidden_words(*, words: list[str]) -> CheckFn:
    """None of `words` occurs in the output (whole words, any case)."""
    rx = re.compile(r"(?<!\w)(" + "|".join(re.escape(_fold(w)) for w in words) + r")(?!\w)")

    def check(case: Case, output: str) -> CheckResult:
        found = sorted(set(rx.findall(_fold(output))))
        return CheckResult(not found, f"forbidden: {', '.join(found)}" if found else None)

    return check


def _normalise(text: str) -> str:
    return " ".join(_fold(text).split()).strip(" .")


@_factory("exact_match")
def _exact_match(*, normalize: bool = True) -> CheckFn:
    """The output equals the case's reference (with `normalize`: case, runs of spaces and a closing period aside)."""

    def check(case: Case, output: str) -> CheckResult:
        if case.reference is None:
            return CheckResult(False, "case has no reference")
        a, b = (_normalise(output), _normalise(case.reference)) if normalize else (output, case.reference)
        return CheckResult(a == b, None if a == b else "differs from the reference")

    return check


@_factory("python")
def _python(*, function: str, base_dir: str | None = None) -> CheckFn:
    """Your own check, `function = "module:fn"`: fn(case, output) returns a bool or (bool, reason)."""
    module_name, _, attr = function.partition(":")
    if not attr:
        raise CheckConfigError(f"function must look like 'module:function', got {function!r}")
    if base_dir and base_dir not in sys.path:
        sys.path.insert(0, base_dir)
    try:
        fn = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise CheckConfigError(f"cannot load {function!r}: {exc}") from None
    return _wrap_user(fn, function)


@dataclass(frozen=True)
class Check:
    name: str
    kind: str
    fn: CheckFn


def make_check(spec: Mapping[str, Any], base_dir: Path | None = None) -> Check:
    """Build a check from its config table: `kind`, optional `name`, and the kind's options."""
    options = dict(spec)
    kind = options.pop("kind", None)
    if not kind:
        raise CheckConfigError("a check needs a 'kind'")
    name = options.pop("name", None) or kind
    if kind not in _FACTORIES:
        raise CheckConfigError(f"unknown check kind {kind!r}; known: {', '.join(sorted(_FACTORIES))}")
    if kind == "python" and base_dir is not None:
        options.setdefault("base_dir", str(base_dir))
    factory = _FACTORIES[kind]
    known = [p for p in inspect.signature(factory).parameters if p != "base_dir"]
    unknown = [k for k in options if k not in known and k != "base_dir"]
    if unknown and not any(p.kind is p.VAR_KEYWORD for p in inspect.signature(factory).parameters.values()):
        raise CheckConfigError(
            f"check {name!r} ({kind}): unknown option(s) {', '.join(map(repr, unknown))};"
            f" {kind} takes: {', '.join(known) or 'no options'}"
        )
    try:
        fn = factory(**options)
    except TypeError as exc:
        raise CheckConfigError(f"check {name!r} ({kind}): {exc}") from None
    except re.error as exc:
        raise CheckConfigError(f"check {name!r}: bad pattern: {exc}") from None
    return Check(name=name, kind=kind, fn=fn)


def run_checks(checks: list[Check], case: Case, output: str) -> dict[str, CheckResult]:
    """Run every check; a check that raises fails with the exception as its reason."""
    results: dict[str, CheckResult] = {}
    for check in checks:
        try:
            results[check.name] = check.fn(case, output)
        except Exception as exc:  # a user's check must not stop the run
            results[check.name] = CheckResult(False, f"check raised {type(exc).__name__}: {exc}")
    return results


# The kinds juge ships, before any plugin or test registers its own (docs/eval-file.md lists these).
BUILTIN_KINDS: tuple[str, ...] = tuple(_FACTORIES)
