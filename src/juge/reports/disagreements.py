"""The items where a judge (pairwise, or PASS/FAIL) and the people disagree most, for the report's
failure cases.

The calibration JSON lists, per judge key, the items whose verdict differs from the
human majority, with the vote counts and the judge's raw text in each order. This
module ranks them and, when the items file is given, adds the question, the context
(the facts a faithfulness verdict rests on), both answers and each rater's vote (the calibration JSON does not repeat dataset text).

Disagreement of an item = share of its human votes that differ from the judge's
label (an inconsistent verdict counts as a tie, as in every agreement figure).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from juge.calibration.results import Calibration, Disagreement
from juge.data.readers import read_cases, read_rows
from juge.data.records import Case
from juge.judges.pairwise import as_agreement_label, letter_meaning

ITEM_MAPPING = {"id": "item_id", "output_1": "answer_1", "output_2": "answer_2"}
ORDERS = ("12", "21")


def read_items(path: str | Path, mapping: Mapping[str, str] | None = None) -> dict[str, Case]:
    """Cases by id, their columns read with `mapping` (``--map``); without one the shared sample's
    ``item_id``/``answer_1``/``answer_2`` are accepted as is."""
    if mapping is None:
        first = read_rows(path)[0][1]
        mapping = None if "id" in first else ITEM_MAPPING
    cases = read_cases(path, mapping)
    return {c.id: c for c in cases}


def disagreement_share(verdict: str | None, vote_counts: dict[str, int]) -> float | None:
    """Share of the votes that differ from the judge's label; None without a verdict or votes."""
    label = as_agreement_label(verdict)  # type: ignore[arg-type]
    total = sum(vote_counts.values())
    if label is None or total == 0:
        return None
    return (total - vote_counts.get(label, 0)) / total


def _texts(row: Disagreement) -> list[dict[str, Any]]:
    if row.texts is None and row.text is not None:  # a single answer (PASS/FAIL): one call
        return [{"order": None, "letter": row.verdict, "text": row.text}]
    texts, letters = row.texts or {}, row.letters or {}
    return [
        {"order": o, "letter": letters.get(o), "means": letter_meaning(letters.get(o), o), "text": texts[o]}
        for o in ORDERS
        if texts.get(o) is not None
    ]


def select_disagreements(calibration: Calibration, *, top: int = 3) -> list[dict[str, Any]]:
    """Up to `top` items per judge key, largest disagreement first (ties: more votes, then item id).

    Keys without raw texts (baselines) are skipped: the section is for reading a judge's reasoning.
    """
    out: list[dict[str, Any]] = []
    for key, entry in calibration.judges.items():
        cards: list[dict[str, Any]] = []
        for row in entry.disagreements or []:
            texts = _texts(row)
            if not texts:
                continue
            counts = dict(row.votes)
            cards.append(
                {
                    "item_id": row.item_id,
                    "category": row.category,
                    "judge": key,
                    "verdict": row.verdict,
                    "majority": row.majority,
                    "disagreement": disagreement_share(row.verdict, counts),
                    "vote_counts": counts,
                    "votes": [],
                    "question": None,
                    "context": None,
                    "answer": None,
                    "answer_1": None,
                    "answer_2": None,
                    "judge_texts": texts,
                }
            )
        cards.sort(key=lambda c: (-(c["disagreement"] or 0.0), -sum(c["vote_counts"].values()), c["item_id"]))
        out.extend(cards[:top])
    return out


def attach_items(cards: list[dict[str, Any]], cases: dict[str, Case]) -> list[dict[str, Any]]:
    """Fill each card's question, context, answers and per-rater votes from the items (unknown ids stay as they are)."""
    for card in cards:
        case = cases.get(card["item_id"])
        if case is None:
            continue
        card["question"] = case.question
        card["context"] = case.context
        card["answer"] = case.output
        card["answer_1"] = case.output_1
        card["answer_2"] = case.output_2
        ratings = case.meta.get("human_ratings")
        if isinstance(ratings, list):
            card["votes"] = [
                {"rater_id": str(r["rater_id"]), "label": str(r["label"])}
                for r in ratings
                if isinstance(r, dict) and "rater_id" in r and "label" in r
            ]
    return cards
