"""Score and additive parsers: reasoning, then a last line exactly '<marker> <n>' in range."""

from __future__ import annotations

import pytest

from juge.judges.parsers import parse_additive, parse_score


@pytest.mark.parametrize(
    "text, kwargs, verdict",
    [
        ("Clear and correct.\nNOTE: 5", {}, 5),
        ("Partly right.\nNOTE: 1\n\n  \n", {}, 1),
        ("Reasoning.\r\nNOTE: 3\r\n", {}, 3),
        ("It mentions NOTE: 4 twice, consistently.\nNOTE: 4", {}, 4),
        ("Note: the answer skips a step.\nNOTE: 2", {}, 2),
        ("Fine.\nTotal rating: 4", {"lo": 1, "hi": 4, "marker": "Total rating:"}, 4),
        ("Three-level scale.\nNOTE: 3", {"lo": 1, "hi": 3}, 3),
        ("Zero allowed on 0-2.\nNOTE: 0", {"lo": 0, "hi": 2}, 0),
    ],
)
def test_valid_scores(text: str, kwargs: dict, verdict: int) -> None:
    result = parse_score(text, **kwargs)
    assert result.outcome == "ok"
    assert result.verdict == verdict and type(result.verdict) is int


@pytest.mark.parametrize(
    "text, kwargs",
    [
        ("", {}),
        ("\n\n", {}),
        ("NOTE: 4", {}),  # no reasoning
        ("Good.\nNOTE: 6", {}),
        ("Good.\nNOTE: 0", {}),
        ("Good.\nNOTE: 4", {"lo": 1, "hi": 3}),
        ("Good.\nNOTE: -1", {"lo": 0, "hi": 5}),
        ("Good.\nNOTE: +4", {}),
        ("Good.\nNOTE: 04", {}),
        ("Good.\nNOTE: 4.0", {}),
        ("Good.\nNOTE: 4/5", {}),
        ("Good.\nNOTE: four", {}),
        ("Good.\nNOTE:4", {}),
        ("Good.\nNOTE:  4", {}),
        ("Good.\n NOTE: 4", {}),
        ("Good.\nnote: 4", {}),
        ("Good.\n**NOTE: 4**", {}),
        ("Good.\nNOTE: **4**", {}),
        ("Good.\nNOTE: 4.", {}),
        ("Good.\nNOTE: 4 (good)", {}),
        ("Good.\nNOTE: 4\nThanks!", {}),  # marker not on the last line
        ("Good. NOTE: 4", {}),
        # look-alike or hidden characters
        ("Good.\nNOTE: \uff14", {}),  # fullwidth digit
        ("Good.\nNOTE: \u0664", {}),  # Arabic-Indic digit
        ("Good.\nN\u041eTE: 4", {}),  # Cyrillic O
        ("Good.\nNOTE: 4\u200b", {}),
        ("Good.\n\ufeffNOTE: 4", {}),
        ("Good.\nNOTE:\u00a04", {}),
        ("Good.\nNOTE: 4\n\u200b", {}),  # an invisible last line
        # two markers with different values
        ("NOTE: 2\nOn reflection it is better.\nNOTE: 4", {}),
        ("My first take was **NOTE:** 2.\nNOTE: 4", {}),
        ("First NOTE : 5, but no.\nNOTE: 4", {}),
        ("\uff2e\uff2f\uff34\uff25: 5 was tempting.\nNOTE: 4", {}),
        ("Would be Total rating: 2.\nTotal rating: 3", {"lo": 1, "hi": 4, "marker": "Total rating:"}),
        # wrong marker
        ("Good.\nScore: 4", {}),
        ("Good.\nNOTE: 4", {"marker": "Total rating:"}),
    ],
)
def test_unparsed_scores(text: str, kwargs: dict) -> None:
    result = parse_score(text, **kwargs)
    assert result.outcome == "unparsed", result
    assert result.verdict is None and result.reason


def test_reasons() -> None:
    assert "outside 1-5" in parse_score("x\nNOTE: 9").reason
    assert "two" in parse_score("NOTE: 2\nx\nNOTE: 3").reason
    assert "reasoning" in parse_score("NOTE: 3").reason


def test_reasoning_can_be_optional() -> None:
    assert parse_score("NOTE: 3", require_reasoning=False).verdict == 3


@pytest.mark.parametrize(
    "written, expected",
    [("0", 1.0), ("10", 4.0), ("5", 2.5), ("7.5", 1 + 0.75 * 3), ("2.25", 1 + 0.225 * 3)],
)
def test_float_rescaled_from_0_10(written: str, expected: float) -> None:
    result = parse_score(
        f"Reasoning.\nTotal rating: {written}", lo=1, hi=4, marker="Total rating:", rescale_from=(0, 10)
    )
    assert result.outcome == "ok"
    assert result.verdict == pytest.approx(expected)


@pytest.mark.parametrize("written", ["10.5", "-1", "11", "7.", ".5", "7,5", "1e1", "07.5", "nan", "inf"])
def test_float_mode_rejects(written: str) -> None:
    result = parse_score(
        f"Reasoning.\nTotal rating: {written}", lo=1, hi=4, marker="Total rating:", rescale_from=(0, 10)
    )
    assert result.outcome == "unparsed"


def test_integer_mode_rejects_a_decimal_even_when_whole() -> None:
    assert parse_score("x\nNOTE: 3.0").outcome == "unparsed"
    assert parse_score("x\nNOTE: 3.0", rescale_from=(0, 10)).outcome == "ok"


@pytest.mark.parametrize(
    "text, n_items, verdict",
    [
        ("1. yes\n2. no\n3. yes\nTotal: 2", 3, 2),
        ("None satisfied.\nTotal: 0", 3, 0),
        ("All five.\nTotal: 5", 5, 5),
    ],
)
def test_additive_valid(text: str, n_items: int, verdict: int) -> None:
    assert parse_additive(text, n_items=n_items).verdict == verdict


@pytest.mark.parametrize(
    "text",
    [
        "x\nTotal: 4",
        "x\nTotal: -1",
        "x\nTotal: 2.5",
        "x\ntotal: 2",
        "Total: 2",
        "Total: 1\nx\nTotal: 2",
        "x\nTotal: 2 points",
        "",
    ],
)
def test_additive_unparsed(text: str) -> None:
    assert parse_additive(text, n_items=3).outcome == "unparsed"


def test_additive_marker_is_configurable() -> None:
    assert parse_additive("x\nPoints: 2", n_items=3, marker="Points:").verdict == 2
    assert parse_additive("x\nTotal: 2", n_items=3, marker="Points:").outcome == "unparsed"
