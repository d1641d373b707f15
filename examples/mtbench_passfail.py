"""The embedded MT-Bench sample read as a PASS/FAIL study: "is answer 1 the better one?".

A person's vote for answer 1 is PASS, for answer 2 or a tie FAIL; each judge's verdict likewise, from its call
with answer 1 shown first (order 12, the plain prompt). Writes items.jsonl, labels.jsonl and judgments.jsonl to
the folder given (default ``mtbench-passfail``), for ``juge plan`` or ``juge policy derive``:

    python examples/mtbench_passfail.py pf
    juge plan --items pf/items.jsonl --labels pf/labels.jsonl --judgments pf/judgments.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import juge


def write_study(folder: str | Path) -> Path:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    items = [json.loads(line) for line in juge.demo_path("items.jsonl").read_text().splitlines()]
    calls = [json.loads(line) for line in juge.demo_path("judgments.jsonl").read_text().splitlines()]
    cases = [
        {"id": it["item_id"], "group": str(it["question_id"]), "category": it["category"], "split": it["split"],
         "question": it["question"], "output": it["answer_1"]}
        for it in items
    ]  # fmt: skip
    labels = [
        {"item_id": it["item_id"], "rater_id": r["rater_id"], "label": "PASS" if r["label"] == "A" else "FAIL"}
        for it in items
        for r in it["human_ratings"]
    ]
    verdicts = [
        {"item_id": c["item_id"], "judge": c["judge"], "model": c["model"], "template": "answer-1-wins",
         "outcome": "ok", "verdict": "PASS" if c["letter"] == "A" else "FAIL", "text": c["letter"]}
        for c in calls
        if c["order"] == "12" and c["prompt"] == "pair-v2" and c["outcome"] == "ok"
    ]  # fmt: skip
    for name, rows in (("items", cases), ("labels", labels), ("judgments", verdicts)):
        (out / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return out


if __name__ == "__main__":
    print(f"wrote {write_study(sys.argv[1] if len(sys.argv) > 1 else 'mtbench-passfail')}")
