"""Find the items where a pairwise judge and the people disagree most, from the raw files.

Used when the calibration JSON carries no disagreement examples: `juge report
--items items.jsonl --judgments judgments.jsonl` reads the cases (shared sample
layout: ``item_id``, ``question``, ``answer_1``, ``answer_2``, ``human_ratings``)
and the recorded judge calls (``judge``, ``prompt`` or ``template``, ``order``,
``letter`` or ``verdict``, ``outcome``, ``text``).

Disagreement of an item = share of its human votes that differ from the judge's
verdict (both orders combined by `juge.judges.pairwise.combine_orders`; an
inconsistent verdict counts as a tie, as in every agreement figure). Items whose
verdict is missing are not examples of disagreement: they are counted elsewhere.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from juge.data.readers import read_cases, read_labels, read_rows
from juge.data.records import Case
from juge.errors import input_error
from juge.judges.pairwise import as_agreement_label, combine_orders

ITEM_MAPPING = {"id": "item_id", "output_1": "answer_1", "output_2": "answer_2"}


def read_items(path: str | Path) -> list[Case]:
    """Pairwise cases; the shared sample's ``item_id``/``answer_1``/``answer_2`` are accepted as is."""
    rows = read_rows(path)
    mapping = ITEM_MAPPING if rows and "id" not in rows[0][1] else None
    return read_cases(path, mapping)


def votes_of(case: Case) -> list[dict[str, str]]:
    """The human votes embedded in a case (``human_ratings`` in the shared sample)."""
    ratings = case.meta.get("human_ratings") or []
    return [
        {"rater_id": str(r["rater_id"]), "label": str(r["label"])}
        for r in ratings
        if isinstance(r, dict) and "rater_id" in r and "label" in r
    ]


def read_judge_calls(path: str | Path) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """``{(judge key, item id): {order: call}}``; the first call per order is kept (repeats ignored)."""
    calls: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    for line, row in read_rows(path):
        for name in ("item_id", "judge", "order", "outcome"):
            if row.get(name) in (None, ""):
                raise input_error(path, "required field is missing", line=line, field=name)
        template = row.get("template") or row.get("prompt")
        if not template:
            raise input_error(path, "required field is missing (template or prompt)", line=line, field="template")
        order = str(row["order"])
        if order not in ("12", "21"):
            raise input_error(path, f"order must be '12' or '21', got {order!r}", line=line, field="order")
        letter = row.get("letter", row.get("verdict"))
        if row["outcome"] != "ok" or letter not in ("A", "B", "C"):
            letter = None
        key = (f"{row['judge']}/{template}", str(row["item_id"]))
        calls[key].setdefault(
            order, {"order": order, "letter": letter, "outcome": str(row["outcome"]), "text": str(row.get("text") or "")}
        )
    return calls


def find_disagreements(
    cases: list[Case],
    calls: dict[tuple[str, str], dict[str, dict[str, Any]]],
    *,
    split: str | None = None,
    judges: list[str] | None = None,
    top: int = 3,
) -> list[dict[str, Any]]:
    """The `top` items per judge with the largest share of human votes against the judge's verdict."""
    by_id = {c.id: c for c in cases if split is None or c.split in (None, split)}
    per_judge: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (judge, item_id), orders in calls.items():
        case = by_id.get(item_id)
        if case is None or (judges is not None and judge not in judges):
            continue
        votes = votes_of(case)
        verdict = combine_orders(orders.get("12", {}).get("letter"), orders.get("21", {}).get("letter"))
        if verdict is None or not votes:
            continue
        label = as_agreement_label(verdict)
        share = sum(v["label"] != label for v in votes) / len(votes)
        if share == 0:
            continue
        per_judge[judge].append(
            {
                "item_id": case.id,
                "category": case.category,
                "judge": judge,
                "verdict": verdict,
                "disagreement": share,
                "question": case.question,
                "answer_1": case.output_1,
                "answer_2": case.output_2,
                "votes": votes,
                "judge_texts": [orders[o] for o in ("12", "21") if o in orders],
            }
        )
    out = []
    for judge in sorted(per_judge):
        ranked = sorted(per_judge[judge], key=lambda x: (-x["disagreement"], -len(x["votes"]), x["item_id"]))
        out.extend(ranked[:top])
    return out


def disagreements_from_files(
    items: str | Path,
    judgments: str | Path,
    *,
    labels: str | Path | None = None,
    split: str | None = None,
    judges: list[str] | None = None,
    top: int = 3,
) -> list[dict[str, Any]]:
    """Read the files and find the disagreements (see `find_disagreements`)."""
    cases = read_items(items)
    if labels is not None:
        by_item: dict[str, list[dict[str, str]]] = defaultdict(list)
        for label in read_labels(labels):
            by_item[label.item_id].append({"rater_id": label.rater_id, "label": str(label.label)})
        cases = [c.model_copy(update={"meta": {**c.meta, "human_ratings": by_item.get(c.id, [])}}) for c in cases]
    return find_disagreements(cases, read_judge_calls(judgments), split=split, judges=judges, top=top)
