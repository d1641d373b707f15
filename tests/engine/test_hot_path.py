"""The per-call hot path's shortcuts give the results of the long way round.

Each judge call computes a cache key, renders a prompt, logs the call, caches the answer and
parses it; the cheaper ways these are done (bench/throughput.py) must not change what is
stored or decided: the cache key of a request made by an earlier juge, the skeleton a parser
refuses by, the rows a call leaves in the store.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from juge.engine import cache_key
from juge.judges import textnorm
from juge.judges.render import render_blocks
from juge.providers.base import Request
from juge.store import Store


def test_cache_key_is_the_sha256_of_the_request_json_earlier_caches_were_keyed_by():
    request = Request(
        messages=({"role": "system", "content": "Judge strictly."}, {"role": "user", "content": "Is 2+2=4? «oui» é"}),
        model="gpt-4o-mini",
        temperature=0.0,
        max_tokens=256,
    )
    by_hand = (
        '["openai", "gpt-4o-mini", [{"content": "Judge strictly.", "role": "system"}, '
        '{"content": "Is 2+2=4? «oui» é", "role": "user"}], '
        '{"allowed": null, "json_schema": null, "max_tokens": 256, "temperature": 0.0}, 0]'
    )
    assert cache_key("openai", request) == hashlib.sha256(by_hand.encode()).hexdigest()
    assert cache_key("openai", request) == "9726ddf710e366ca0355dfeab74936ffbd06f0ac09b9a9efa318cc0aaf1f8e78"


def test_cache_key_of_a_structured_constrained_repeat_is_pinned():
    request = Request(
        messages=({"role": "user", "content": "Score it"},),
        model="m",
        temperature=0.7,
        max_tokens=16,
        json_schema={"type": "object", "properties": {"score": {"type": "integer"}}},
        allowed=("1", "2"),
        meta={"item_id": "x"},
    )  # meta is not part of the key
    assert cache_key("openai@http://127.0.0.1:8000/v1", request, 3) == (
        "b5f351cabb27e31580b721021bd9ee6a8b75d3fa6a590d9c8c01e236611679b6"
    )


def unicode_skeleton(text: str) -> str:
    """textnorm.skeleton's general path, for any text (the reference for its ASCII shortcut)."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(
        ch for ch in decomposed if ch in ("\n", "\t") or unicodedata.category(ch) not in {"Cf", "Cc", "Mn", "Me"}
    )
    return unicodedata.normalize("NFKC", kept.translate(str.maketrans(textnorm.HOMOGLYPHS)))


@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=200))
def test_skeleton_of_ascii_text_is_the_unicode_skeleton(text):
    assert textnorm.skeleton(text) == unicode_skeleton(text)


def test_skeleton_of_ascii_drops_controls_but_keeps_newlines_and_tabs():
    assert textnorm.skeleton("PA\x00S\x7fS\r\n\treason\x1b") == "PASS\n\treason"
    assert textnorm.skeleton("ＰＡＳＳ\u200b") == "PASS"  # not ASCII: the general path


def test_blocks_rendered_in_one_context_do_not_see_each_others_assignments():
    source = (
        '{% block system %}{% set who = "system" %}{{ who }} {{ name }}{% endblock %}'
        '{% block user %}{{ who | default("unset") }} {{ name }}{% endblock %}'
    )
    variables = {"name": "Ada"}
    prompt = render_blocks(source, variables)
    assert (prompt.system, prompt.user) == ("system Ada", "unset Ada")
    assert variables == {"name": "Ada"}


def rows(db, table: str, columns: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f"SELECT {columns} FROM {table} ORDER BY rowid").fetchall()
    finally:
        conn.close()


def test_an_answered_call_is_its_cache_entry_encoded_once(tmp_path):
    request = {"messages": [{"role": "user", "content": "é?"}], "model": "m", "meta": {"item_id": "a"}}
    response = {
        "text": "PASS\nfine",
        "model": "m",
        "tokens_in": 3,
        "tokens_out": 2,
        "refused": False,
        "refusal_reason": None,
        "distribution": {"PASS": 0.9},
        "truncated": False,
    }
    for name, cache in (("cached.db", True), ("uncached.db", False)):
        with Store(tmp_path / name) as store:
            store.log_call(
                run_id="r",
                cache_key="k",
                provider="p",
                model="m",
                attempt=1,
                request=request,
                response=response,
                error=None,
                status=None,
                latency=0.25,
                payer="a|j||0",
                cache=cache,
            )
            store.log_call(
                run_id="r",
                cache_key="k2",
                provider="p",
                model="m",
                attempt=0,
                request=request,
                response=None,
                error="HTTP 500",
                status=500,
                latency=0.1,
                cache=cache,
            )
    call_columns = "run_id, cache_key, provider, model, attempt, request, response, error, status, latency, payer"
    calls = rows(tmp_path / "cached.db", "calls", call_columns)
    # The stored JSON is json's up to whitespace (orjson writes it compactly, see juge.fastjson).
    assert [(*c[:5], *(None if t is None else json.loads(t) for t in c[5:7]), *c[7:]) for c in calls] == [
        (
            "r",
            "k",
            "p",
            "m",
            1,
            request,
            response,
            None,
            None,
            0.25,
            "a|j||0",
        ),
        (
            "r",
            "k2",
            "p",
            "m",
            0,
            request,
            None,
            "HTTP 500",
            500,
            0.1,
            None,
        ),
    ]
    assert rows(tmp_path / "uncached.db", "calls", call_columns) == calls
    # The cache entry is the answered call's response, byte for byte; a failed attempt caches nothing.
    assert rows(tmp_path / "cached.db", "cache", "key, provider, model, response") == [("k", "p", "m", calls[0][6])]
    assert rows(tmp_path / "uncached.db", "cache", "key") == []
    with Store(tmp_path / "cached.db") as store:
        assert store.cache_get("k") == response and store.cache_get("k2") is None
