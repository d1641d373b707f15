"""The parser contract (docs/security.md): the answers issue 27 found read as a verdict are unparsed, each
with the code of the rule that fired; their plain counterparts still parse."""

from __future__ import annotations

import json

import pytest

from juge.judges.parsers import PARSERS, parse_structured

CONFIG = {
    "passfail": {},
    "pairwise": {},
    "score": {"lo": 1, "hi": 5},
    "additive": {"n_items": 3},
    "criteria": {"criteria": {"correct": (1, 3), "tone": (0, 2)}},
}


@pytest.mark.parametrize(
    "setup, text, code",
    [
        ("passfail", "PASS\nThe response invents a price. Answer: FAIL", "second_verdict"),
        ("passfail", "PASS\nIt is a fail.", "opposite_word"),
        ("passfail", "PASS\nThe response does NOT have the property.", "opposite_word"),
        ("passfail", "FAIL\nThe response has the property.", "opposite_word"),
        ("passfail", "PASS\nThe price is invented, so this is not PASS.", "negated_verdict"),
        ("passfail", "PASS\nThe response does not pass.", "negated_verdict"),
        ("passfail", "FAIL\nOn a closer look it does not fail the check.", "negated_verdict"),
        ("passfail", "PASS\nThe reply would FAIL only if it named a price.", "opposite_word"),
        ("passfail", "PASS\nVeredicto: suspenso.", "opposite_word"),
        ("passfail", "PASS\nLa réponse invente un prix : échec.", "opposite_word"),
        ("passfail", "PASS\n回答编造了价格，不通过。", "opposite_word"),
        ("passfail", "PASS\nОтвет: НЕ ПРОЙДЕНО", "opposite_word"),
        ("passfail", "FAIL\nDie Antwort hat bestanden.", "opposite_word"),
        ("pairwise", "[[A]]\nB is better.", "opposite_word"),
        ("pairwise", "[[A]]\nB wins.", "opposite_word"),
        ("pairwise", "A is careful. B is better than A.\n[[A]]", "opposite_word"),
        ("pairwise", "[[A]]\nB es mejor.", "opposite_word"),
        ("pairwise", "[[A]]\n回答B更好。", "opposite_word"),
        ("pairwise", "[[A]]\nBoth are close and it is a tie.", "opposite_word"),
        ("pairwise", "[[C]]\nIt is not a tie: A is right.", "negated_verdict"),
        ("pairwise", "[[A]]\nA is not better.", "negated_verdict"),
        ("score", "**2**\nNOTE: 4", "second_verdict"),
        ("score", "2/5\nNOTE: 4", "second_verdict"),
        ("score", "The answer is partly right, I rate it 2/5 overall.\nNOTE: 4", "second_verdict"),
        ("score", "Puntuación: 2, por el precio inventado.\nNOTE: 4", "second_verdict"),
        ("score", "It is mostly right, but it does not deserve a 4.\nNOTE: 4", "negated_verdict"),
        ("additive", "Two items are met.\n**2**\nTotal: 3", "second_verdict"),
        ("criteria", 'Correct: 1/3\nThe tone is fine.\n{"correct": 3, "tone": 2}', "second_verdict"),
        ("criteria", 'The facts are wrong (**tone** = 0).\n{"correct": 3, "tone": 2}', "second_verdict"),
    ],
)
def test_a_second_verdict_in_the_explanation_is_unparsed_with_its_code(setup: str, text: str, code: str) -> None:
    result = PARSERS[setup](text, **CONFIG[setup])
    assert result.outcome == "unparsed", text
    assert result.code == code, result.reason


@pytest.mark.parametrize(
    "setup, text",
    [
        ("passfail", "PASS\nIt fails to mention the price, which the question did not ask for."),
        ("passfail", "PASS\nThe reply would fail only if it named a price, and it does not."),
        ("passfail", "PASS\nIt does not fail on any of the three facts."),
        ("passfail", "FAIL\nIt does not pass the check."),
        ("passfail", "FAIL\nThe response does not have the property."),
        ("passfail", "PASS\nThe response has the property."),
        ("passfail", "FAIL\nIt is a fail: the price is invented."),
        ("passfail", "PASS\nEl precio es correcto: aprobado."),
        ("pairwise", "Assistant B is better at formatting, but A is correct. [[A]]"),
        ("pairwise", "A reaches the conclusion that Phone B is superior, which is unsupported. [[A]]"),
        ("pairwise", "A is better than B.\n[[A]]"),
        ("pairwise", "A比B更好。\n[[A]]"),
        ("pairwise", "It is not a tie: A is right. [[A]]"),
        ("score", "It cites 2 sources out of the 5 available, which is enough.\nNOTE: 4"),
        ("score", "The answer is right. Score: 4\nNOTE: 4"),
        ("score", "2/5 of the claims needed a source, and all had one.\nNOTE: 4"),
        ("criteria", 'Correct: 3/3, tone: 2.\n{"correct": 3, "tone": 2}'),
    ],
)
def test_plain_answers_still_parse(setup: str, text: str) -> None:
    result = PARSERS[setup](text, **CONFIG[setup])
    assert result.outcome == "ok", result.reason


@pytest.mark.parametrize(
    "setup, answer, code",
    [
        ("pairwise", {"reasoning": "B is better.", "verdict": "A"}, "opposite_word"),
        ("pairwise", {"reasoning": "B gana.", "verdict": "A"}, "opposite_word"),
        ("passfail", {"verdict": "PASS", "reason": "It is a fail."}, "opposite_word"),
        ("passfail", {"verdict": "PASS", "reason": "Answer: FAIL"}, "second_verdict"),
        ("score", {"reasoning": "Score: 2.", "score": 4}, "second_verdict"),
        ("criteria", {"reasoning": "Correct: 1/3.", "scores": {"correct": 3, "tone": 2}}, "second_verdict"),
    ],
)
def test_the_structured_form_s_free_text_is_checked_the_same_way(setup: str, answer: dict, code: str) -> None:
    result = parse_structured(json.dumps(answer), setup, CONFIG[setup])
    assert result.outcome == "unparsed"
    assert result.code == code, result.reason
