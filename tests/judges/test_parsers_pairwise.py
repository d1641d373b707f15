"""Pairwise parser: exactly one [[A]], [[B]] or [[C]]; any second or disguised marker is unparsed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from juge.judges import combine_orders
from juge.judges.parsers import parse_pairwise


@pytest.mark.parametrize(
    "text, letter",
    [
        ("Assistant A follows the prompt; B refuses. [[A]]", "A"),
        ("B is correct, A miscounts.\n\n[[B]]", "B"),
        ("Both are equally good.\n[[C]]\n", "C"),
        ("[[B]]", "B"),
        ("Verdict: **[[A]]**", "A"),
        ("A uses list[0] and dict[[k]] style keys but B is right. [[B]]", "B"),
    ],
)
def test_valid(text: str, letter: str) -> None:
    result = parse_pairwise(text)
    assert result.outcome == "ok" and result.verdict == letter


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Both fine.",
        "A is better. [A]",
        "A is better. [[D]]",
        "I first thought [[A]] but now [[B]]",
        "[[A]] ... final: [[A]]",  # the same marker twice: still not one verdict
        "[[A]][[B]][[C]]",
        "[[a]]",
        "[[ A ]]",
        "[[tie]]",
        "[[[A]]]",
        "[[A]]]",
        "[[[B]]",
        "[[\u0410]]",  # Cyrillic A
        "[[\u0391]]",  # Greek Alpha
        "[[\u0392]]",  # Greek Beta
        "[[\u0421]]",  # Cyrillic Es
        "[[\uff21]]",  # fullwidth A
        "\uff3b\uff3bA\uff3d\uff3d",  # fullwidth brackets
        "[[\u200bA]]",
        "[\u200b[A]]",
        "[[A\u200d]]",
        "[[\u1d00]]",  # small capital A
        "[[A]] is what a lazy judge says; really [[\u0412]]",  # a real and a look-alike marker
        "[[B]] but [[ a ]]",
        "[[C]] or maybe [[tie]]",
    ],
)
def test_unparsed(text: str) -> None:
    result = parse_pairwise(text)
    assert result.outcome == "unparsed", result
    assert result.verdict is None and result.reason


def test_reasons() -> None:
    assert "no [[A]]" in parse_pairwise("Both fine.").reason
    assert "2 verdict markers" in parse_pairwise("[[A]] [[B]]").reason
    assert "look-alike" in parse_pairwise("[[\u0410]]").reason
    assert "disguised" in parse_pairwise("[[A]] [[\u0410]]").reason


def test_recorded_judge_outputs_parse_to_the_recorded_letter(sample_dir: Path) -> None:
    """The 1,760 recorded MT-Bench judge calls: every letter read back, both unparsed ones refused."""
    path = sample_dir / "judgments.jsonl"
    if not path.exists():
        pytest.skip("MT-Bench sample not available")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) == 1760
    mismatches = [r["item_id"] for r in rows if parse_pairwise(r["text"]).verdict != r["letter"]]
    assert mismatches == []
    assert sum(parse_pairwise(r["text"]).outcome == "unparsed" for r in rows) == 2


def test_letters_combine_over_both_orders() -> None:
    first = parse_pairwise("A is better. [[A]]").verdict  # order 12: answer 1
    second = parse_pairwise("B is better. [[B]]").verdict  # order 21: B is answer 1
    assert combine_orders(first, second) == "A"
    assert combine_orders(first, parse_pairwise("[[A]]").verdict) == "inconsistent"
    assert combine_orders(first, parse_pairwise("[[a]]").verdict) is None
