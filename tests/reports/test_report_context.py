"""The report's disagreement cards show the item's context (escaped) when the items carry one."""

from __future__ import annotations

import json

from juge.reports import build_report_data, render_report
from juge.reports.disagreements import read_items
from report_helpers import HOSTILE, pairwise_calibration


def items_with_context(tmp_path) -> dict:
    path = tmp_path / "items.jsonl"
    rows = [
        {
            "item_id": item,
            "question": "Q",
            "answer_1": "one",
            "answer_2": "two",
            "category": "writing",
            **({"context": "facts " + HOSTILE} if item == "item-all" else {}),
        }
        for item in ("item-all", "item-half", "item-two-thirds")
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return read_items(path)


def test_disagreement_cards_show_the_context_escaped(tmp_path):
    data = build_report_data(pairwise_calibration(), cases=items_with_context(tmp_path))
    html = render_report(data, "html")
    assert "facts &lt;script&gt;" in html and "<script" not in html.lower()
    # Only the card of the item with a context has a Context block.
    card = html.split('data-item="item-all"')[1].split("</article>")[0]
    assert '<div class="label">Context</div>' in card
    other = html.split('data-item="item-two-thirds"')[1].split("</article>")[0]
    assert "Context" not in other
    md = render_report(data, "md")
    assert "**Context:** facts &lt;script&gt;" in md and "<script" not in md
