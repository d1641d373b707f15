"""JSON on the per-call path: orjson where its result is the standard library's, `json` everywhere else.

orjson reads and writes several times faster than `json`, but it differs at the edges: it writes NaN and Infinity
as null (json writes NaN), serialises enums, dataclasses and datetimes on its own, refuses integers past 64 bits and
keys that are not strings, reads an integer past 64 bits as a float, and keeps the last of a key given twice. So it is
used only where the result cannot differ (the value checked plain, the document checked free of those cases, both
cheaply), and `json`, whose behaviour is the rule, handles the rest. Hashes (cache keys, template hashes) stay on
``json.dumps``: their bytes must never change. ``JUGE_FAST=0`` in the environment turns orjson off (and uvloop, see
`juge.engine.loop`); orjson not installed does the same.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - a core dependency; kept working without it
    orjson = None  # type: ignore[assignment]


# Read once (an environment look-up per call costs about as much as the JSON it would save); a benchmark or a
# test may set it.
enabled = os.environ.get("JUGE_FAST", "1") != "0"


def fast() -> bool:
    """Whether the fast paths are on (``JUGE_FAST`` was not ``0`` when juge was imported, or `enabled` was set)."""
    return enabled


def _orjson() -> Any:
    return orjson if enabled else None


_SCALARS = frozenset({str, int, bool, type(None)})


def _plain(value: Any) -> bool:
    """`value` holds only str-keyed dicts, lists, tuples, str, int, bool, None and finite floats (exact types):
    what orjson and json write alike, up to whitespace and the spelling of a float."""
    todo = [value]
    while todo:
        item = todo.pop()
        kind = type(item)
        if kind in _SCALARS:
            continue
        if kind is float:
            if not math.isfinite(item):
                return False
        elif kind is dict:
            for key in item:
                if type(key) is not str:
                    return False
            todo.extend(item.values())
        elif kind is list or kind is tuple:
            todo.extend(item)
        else:
            return False
    return True


def dump_bytes(value: Any, *, sort_keys: bool = False) -> bytes:
    """`value` as compact UTF-8 JSON: what ``json.dumps(value, ensure_ascii=False, sort_keys=sort_keys).encode()``
    writes, up to whitespace and a float's spelling (the same value read back); json's errors otherwise."""
    fast_json = _orjson()
    if fast_json is not None and _plain(value):
        try:
            return fast_json.dumps(value, option=fast_json.OPT_SORT_KEYS if sort_keys else 0)
        except TypeError:  # an integer past 64 bits, a lone surrogate: json decides
            pass
    return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys).encode()


def dump_text(value: Any, *, sort_keys: bool = False) -> str:
    """`dump_bytes` as text; a value that is not plain JSON is written by json with ``default=str``."""
    fast_json = _orjson()
    if fast_json is not None and _plain(value):
        try:
            return fast_json.dumps(value, option=fast_json.OPT_SORT_KEYS if sort_keys else 0).decode()
        except (TypeError, UnicodeDecodeError):
            pass
    return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=str)


# Each digit as 0, anything else as a space: 20 zeros in a row are perhaps an integer that orjson reads as a float
# (past 64 bits) where json reads an int (two C passes; a regex is several times slower on a whole answer).
_DIGITS = bytes.maketrans(bytes(range(256)), bytes(48 if 48 <= b <= 57 else 32 for b in range(256)))
_LONG_NUMBER = b"0" * 20


def parse_if_unique(raw: bytes | str) -> tuple[bool, Any]:
    """``(True, value)`` when `raw` is JSON that orjson reads exactly as ``json.loads`` would, with no object that has
    a key twice; ``(False, None)`` otherwise (invalid JSON, NaN, a duplicate key, a 20-digit number, orjson off): the
    caller then reads `raw` with `json`, whose result or error is the rule (a key twice: its DuplicateKeyError)."""
    fast_json = _orjson()
    if fast_json is None:
        return False, None
    try:
        value = fast_json.loads(raw)
    except fast_json.JSONDecodeError:
        return False, None
    # A key given twice: every key has a colon after it, and a colon inside a string is written as itself unless
    # escaped (\u003a, then json decides). Written back compactly, orjson's value has a colon per key it kept and
    # the colons of the strings it kept: as many as the document exactly when no key was dropped.
    data = raw.encode() if isinstance(raw, str) else raw  # orjson read it: no lone surrogate
    if b"\\u003" in data or _LONG_NUMBER in data.translate(_DIGITS):
        return False, None
    try:
        written = fast_json.dumps(value)
    except TypeError:  # nested past orjson's writing depth (it reads deeper)
        return False, None
    if data.count(b":") != written.count(b":"):
        return False, None
    return True, value


def loads_unique(
    raw: bytes | str,
    duplicate: Callable[[str], Exception],
    not_a_number: Callable[[str], Exception] | None = None,
) -> Any:
    """`raw` parsed as JSON (orjson where it reads exactly as `json` would); ``duplicate(message)`` is raised if an
    object has a key twice, and with `not_a_number` given, ``not_a_number(message)`` for NaN or Infinity. Other bad
    JSON raises as `json` does. The one reader of untrusted JSON where a key twice must not be read one way (model
    answers, server bodies); the caller names its own error (this module sits below juge.errors)."""
    parsed, value = parse_if_unique(raw)  # orjson refuses NaN, so a fast read never holds one

    if parsed:
        return value

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    raise duplicate(f"the key {key!r} appears twice in one object")
                seen.add(key)
        return out

    if not_a_number is None:
        return json.loads(raw, object_pairs_hook=unique)
    refuse = not_a_number

    def constant(name: str) -> Any:
        raise refuse(f"{name} is not a number")

    return json.loads(raw, object_pairs_hook=unique, parse_constant=constant)
