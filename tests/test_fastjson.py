"""orjson on the per-call path reads and writes what `json` would, or hands the case to `json`.

The reference for every case is the standard library as juge used it before: ``json.loads`` with the
duplicate-key hook (a server's answer, a verdict's JSON), ``json.dumps(ensure_ascii=False)`` (the request body,
with ``sort_keys`` and ``default=str`` for the call log). Values and errors are compared by type and repr, so an
int read as a float, NaN written as null, or a key given twice read one way would fail here.
"""

from __future__ import annotations

import enum
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from juge import fastjson
from juge.judges import judge_from_dict
from juge.judges.parsers import strict_json_object
from juge.providers.base import DuplicateKeyError, json_with_unique_keys


@pytest.fixture(params=[True, False], ids=["orjson", "json"])
def fast(request, monkeypatch):
    monkeypatch.setattr(fastjson, "enabled", request.param)
    return request.param


def outcome(read: Any, raw: Any) -> tuple[str, str]:
    try:
        value = read(raw)
    except Exception as exc:  # the kind of error is what must match
        return "error", type(exc).__name__ + (str(exc) if isinstance(exc, DuplicateKeyError) else "")
    return "value", repr(value)


def _first_repeat(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # The rule written independently of juge's: the first key seen twice is named.
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise DuplicateKeyError(f"the key {key!r} appears twice in one object")
        seen.add(key)
    return dict(pairs)


def reference(raw: bytes | str) -> Any:
    return json.loads(raw, object_pairs_hook=_first_repeat)


# JSON documents written by hand, so that objects can hold a key twice, colons sit inside strings, numbers run past
# 64 bits, strings are escaped or not, and whitespace varies.
keys = st.sampled_from(["a", "b", "a:", ":", "é", "\u003a", "k\\"])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=st.sampled_from('ab:"\\é\n{}[],\u2028'), max_size=8),
)


def write(value: Any, ascii_only: bool, space: str) -> str:
    if isinstance(value, tuple):  # an object: (key, value) pairs, a key maybe twice
        members = (
            f"{json.dumps(k, ensure_ascii=ascii_only)}{space}:{space}{write(v, ascii_only, space)}" for k, v in value
        )
        return "{" + f",{space}".join(members) + "}"
    if isinstance(value, list):
        return "[" + f",{space}".join(write(v, ascii_only, space) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.lists(st.tuples(keys, inner), max_size=4).map(tuple)),
    max_leaves=12,
)


@settings(max_examples=400)
@given(documents, st.booleans(), st.sampled_from(["", " ", "\n "]), st.booleans())
def test_a_document_is_read_as_json_reads_it_with_the_duplicate_key_hook(value, ascii_only, space, as_bytes):
    raw: bytes | str = write(value, ascii_only, space)
    if as_bytes:
        raw = raw.encode()
    assert outcome(json_with_unique_keys, raw) == outcome(reference, raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 1, "a": 2}',
        b'{"x": {"a": "1:2:3", "a": 2}}',  # the dropped value had colons of its own
        b'{"a": 1, "b": {"a": 1}, "b": 2}',
        b'{"a\\u003a": 1, "a:": 2}',  # the same key, written two ways
        b'{"\\u0061": 1, "a": 2}',
        '{"é": 1, "\\u00e9": 2}',
        b'{"a": [1, {"k": 1, "k": 1}]}',
        b"[123456789012345678901234567890]",  # orjson would read a float
        b'{"n": -18446744073709551616}',
        b'{"n": NaN}',
        b"[Infinity, -Infinity]",
        b"[1e400]",
        b'"\\ud800"',  # a lone surrogate: json reads it, orjson refuses
        b"\xef\xbb\xbf{}",  # a BOM
        '{"a": 1}'.encode("utf-16"),  # json.loads reads UTF-16 bytes
        b'{"a": 1',
        b"",
        b"[" * 2000 + b"]" * 2000,  # deeper than orjson reads
        b"[" * 500 + b"]" * 500,  # deeper than orjson writes
    ],
    ids=lambda raw: repr(raw[:40]),
)
def test_the_edge_cases_are_json_s(raw, fast):
    assert outcome(json_with_unique_keys, raw) == outcome(reference, raw)


def test_a_duplicate_key_is_refused_whichever_reader_runs(fast):
    with pytest.raises(DuplicateKeyError, match="'a' appears twice"):
        json_with_unique_keys(b'{"choices": [{"message": {"content": "PASS", "a": 1, "a": 2}}]}')


@pytest.fixture
def orjson_on(monkeypatch):
    pytest.importorskip("orjson")
    monkeypatch.setattr(fastjson, "enabled", True)  # whatever JUGE_FAST says


def test_a_completion_is_read_by_orjson(orjson_on):
    raw = b'{"id": "x", "choices": [{"message": {"content": "ok: PASS"}}], "usage": {"prompt_tokens": 3}}'
    assert fastjson.parse_if_unique(raw) == (True, json.loads(raw))


@pytest.mark.parametrize(
    "text", ['{"verdict": "PASS", "verdict": "FAIL"}', '{"score": NaN}', '{"a": 1} x', "[1]", '{"a": {"b": 1, "b": 1}}']
)
def test_a_verdict_s_json_is_refused_as_before(text, fast):
    def before(raw: str) -> Any:
        monkey = fastjson.enabled
        fastjson.enabled = False
        try:
            return strict_json_object(raw)
        finally:
            fastjson.enabled = monkey

    assert outcome(strict_json_object, text) == outcome(before, text)


class Colour(enum.Enum):
    RED = "red"


class Name(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        {"model": "m", "messages": [{"role": "user", "content": "é «x» \u2028"}], "temperature": 0.7, "max_tokens": 9},
        {"t": math.nan},
        {"t": [math.inf, -math.inf]},
        {1: "an int key"},
        {"n": 2**70},
        {"s": "\ud800"},
        {"c": Colour.RED},
        {"s": Name("sub")},
        ("a", 1, 1e-7, 1e17, -0.0),
    ],
)
@pytest.mark.parametrize("sort_keys", [False, True])
def test_a_value_is_written_as_json_writes_it(value, sort_keys, fast):
    def was(write: Any) -> tuple[str, Any]:
        try:
            text = write()
        except Exception as exc:
            return "error", type(exc).__name__
        return "value", repr(json.loads(text))

    assert was(lambda: fastjson.dump_bytes(value, sort_keys=sort_keys)) == was(
        lambda: json.dumps(value, ensure_ascii=False, sort_keys=sort_keys).encode()
    )
    assert was(lambda: fastjson.dump_text(value, sort_keys=sort_keys)) == was(
        lambda: json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=str)
    )


def test_non_finite_numbers_are_written_as_json_writes_them_not_as_null():
    assert fastjson.dump_bytes({"t": math.nan}) == b'{"t": NaN}'


def test_sorted_keys_come_out_sorted_and_compact(orjson_on):
    assert fastjson.dump_text({"b": 1, "a": [None, True]}, sort_keys=True) == '{"a":[null,true],"b":1}'


def test_a_template_hash_is_unchanged():
    judge = judge_from_dict(
        {
            "name": "helpful",
            "setup": "passfail",
            "model": "m",
            "description": "The answer does what the customer asked.",
        }
    )
    assert judge.template_hash == "6acde5bccda6"
