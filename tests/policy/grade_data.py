"""Small PASS/FAIL and score studies written to files, with figures worked out by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

MODEL = "grader-2026-01"
HASH = "abc123def456"


def _item(split: str, category: str, k: int, r1, r2, verdict, *, outcome: str = "ok"):
    item_id = f"{split}-{category}-{k}"
    case = {
        "id": item_id,
        "group": f"g-{item_id}",
        "category": category,
        "question": f"Question {item_id}?",
        "output": f"Answer to {item_id}.",
        "split": split,
    }
    labels = [{"item_id": item_id, "rater_id": "r1", "label": r1}, {"item_id": item_id, "rater_id": "r2", "label": r2}]
    call = {
        "item_id": item_id,
        "judge": "grader",
        "model": MODEL,
        "template": "tpl",
        "template_hash": HASH,
        "outcome": outcome,
        "verdict": verdict if outcome == "ok" else None,
        "text": f"{verdict}\nbecause" if outcome == "ok" else "garbled",
    }
    return case, labels, call


# Each dev item is written three times: a category of 10 items has too few to decide (fewer than 30 person
# pairs, juge.policy.decision) and goes to a person whatever its figures say. Three copies change no agreement,
# kappa or rate below, only the counts (three times those worked out per copy).
DEV_COPIES = 3


def rows(split: str, category: str, spec: list[tuple[int, tuple]], copies: int = 1) -> list[tuple]:
    """spec: (count, (r1, r2, judge verdict)) -> items numbered within the category, each ``copies`` times."""
    out, k = [], 0
    for count, (r1, r2, verdict) in spec:
        for _ in range(count * copies):
            out.append(_item(split, category, k, r1, r2, verdict))
            k += 1
    return out


# PASS/FAIL, dev (the counts per copy; DEV_COPIES copies of each item).
# billing: 4 x FF judge F, 5 x PP judge P, 1 x (P, F) judge F.
#   judge vs each person 19/20 = 0.950; people 9/10 = 0.900.
#   kappa judge (judge, human) FF=9 PP=10 FP=1: po .95, pe (10*9 + 10*11)/400 = .5 -> 0.900;
#   people (r1, r2) FF=4 PP=5 PF=1: po .9, pe (4*5 + 6*5)/100 = .5 -> 0.800.
#   failures caught 9/9 = 1.000; people (ordered pairs) 8/9 = 0.889. false flags 1/11 = 0.091. -> judge.
# refunds: 3 x FF judge F, 1 x FF judge P, 4 x PP judge P, 2 x (F, P) judge P.
#   agreement 16/20 = 0.800 vs 8/10 = 0.800; kappa 0.600 vs (0.8 - 0.48) / 0.52 = 0.615 (gap -0.015);
#   failures caught 6/10 = 0.600 below people's 8/10 = 0.800 -> person (on failures caught alone).
# shipping: 2 x FF judge F, 2 x (F, P) judge P, 6 x PP judge P.
#   agreement 18/20 = 0.900 vs 0.800; kappa (0.9 - 0.62) / 0.38 = 0.737 vs (0.8 - 0.56) / 0.44 = 0.545;
#   failures caught 4/6 = 0.667, people 4/6 = 0.667: not below -> judge; with --min-recall 0.7 -> person.
PASSFAIL_DEV = (
    rows(
        "dev",
        "billing",
        [(4, ("FAIL", "FAIL", "FAIL")), (5, ("PASS", "PASS", "PASS")), (1, ("PASS", "FAIL", "FAIL"))],
        DEV_COPIES,
    )
    + rows(
        "dev",
        "refunds",
        [
            (3, ("FAIL", "FAIL", "FAIL")),
            (1, ("FAIL", "FAIL", "PASS")),
            (4, ("PASS", "PASS", "PASS")),
            (2, ("FAIL", "PASS", "PASS")),
        ],
        DEV_COPIES,
    )
    + rows(
        "dev",
        "shipping",
        [(2, ("FAIL", "FAIL", "FAIL")), (2, ("FAIL", "PASS", "PASS")), (6, ("PASS", "PASS", "PASS"))],
        DEV_COPIES,
    )
)
# PASS/FAIL, holdout.
# billing: 2 x FF judge P, 2 x FF judge F, 6 x PP judge P: judge 16/20 = 0.800 vs people 1.000, gap -0.200:
#   NOT HELD. shipping: as on dev: held. refunds: a person decides, stands.
# Also one shipping item whose judgment is unparsed (a person first) and one item of a category the policy
# never saw (a person: category not calibrated).
PASSFAIL_HOLDOUT = (
    rows(
        "holdout",
        "billing",
        [(2, ("FAIL", "FAIL", "PASS")), (2, ("FAIL", "FAIL", "FAIL")), (6, ("PASS", "PASS", "PASS"))],
    )
    + rows("holdout", "refunds", [(2, ("FAIL", "FAIL", "FAIL")), (3, ("PASS", "PASS", "PASS"))])
    + rows(
        "holdout",
        "shipping",
        [(2, ("FAIL", "FAIL", "FAIL")), (2, ("FAIL", "PASS", "PASS")), (6, ("PASS", "PASS", "PASS"))],
    )
    + [_item("holdout", "shipping", 99, "PASS", "PASS", None, outcome="unparsed")]
    + rows("holdout", "gifts", [(1, ("PASS", "PASS", "PASS"))])
)

# Scores 1-5, dev (the counts per copy; DEV_COPIES copies of each item).
# answers: 4 x (5,5) judge 5, 3 x (4,5) judge 4, 3 x (2,1) judge 2, 2 x (1,1) judge 1, 2 x (3,4) judge 3.
# advice: 4 x (5,5) judge 1, 4 x (1,1) judge 5, 2 x (3,3) judge 3.
# Threshold from the labels: people's pass/fail agreement at t = 2: 21/24 (the three (2,1) pairs split),
# t = 3: 24/24 (kappa 1), t = 4: 22/24 ((3,4) split), t = 5: 21/24 ((4,5) split) -> 3.
# answers at 3: judge 28/28 = 1.000, people 14/14 = 1.000 -> within; weighted kappa checked with sklearn.
# advice at 3: judge 4/20 = 0.200 vs people 1.000 -> person.
SCORE_DEV = rows(
    "dev", "answers", [(4, (5, 5, 5)), (3, (4, 5, 4)), (3, (2, 1, 2)), (2, (1, 1, 1)), (2, (3, 4, 3))], DEV_COPIES
) + rows("dev", "advice", [(4, (5, 5, 1)), (4, (1, 1, 5)), (2, (3, 3, 3))], DEV_COPIES)
SCORE_HOLDOUT = rows(
    "holdout", "answers", [(4, (5, 5, 5)), (3, (4, 5, 4)), (3, (2, 1, 2)), (2, (1, 1, 1)), (2, (3, 4, 3))]
) + rows("holdout", "advice", [(2, (5, 5, 5)), (2, (1, 1, 1))])


def write_study(folder: Path, item_rows: list[tuple]) -> tuple[Path, Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    items, labels, judgments = folder / "items.jsonl", folder / "labels.jsonl", folder / "judgments.jsonl"
    items.write_text("".join(json.dumps(c) + "\n" for c, _, _ in item_rows))
    labels.write_text("".join(json.dumps(lab) + "\n" for _, labs, _ in item_rows for lab in labs))
    judgments.write_text("".join(json.dumps(j) + "\n" for _, _, j in item_rows))
    return items, labels, judgments
