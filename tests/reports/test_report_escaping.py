"""Every text that came from a dataset or a model is escaped in the HTML (SVG included) and the Markdown."""

from __future__ import annotations

import json

from juge.reports import build_report_data, render_report
from juge.reports.disagreements import read_items
from report_helpers import HOSTILE, pairwise_calibration, parse_html, policy_routing

TAGS_FROM_DATA = ("script", "img")


def hostile_calibration() -> dict:
    """The fixture with hostile text in a category, a judge key, versions, notes and the judge's raw texts."""
    cal = pairwise_calibration()
    bad_key = "evil/" + HOSTILE
    cal["judges"][bad_key] = cal["judges"].pop("chat-strong/pair-v2")
    cal["versions"]["judges"][bad_key] = cal["versions"]["judges"].pop("chat-strong/pair-v2")
    cal["versions"]["judges"][bad_key]["models"] = ["model " + HOSTILE]
    cal["versions"]["sources_sha256"][HOSTILE] = "sha " + HOSTILE
    cal["notes"].append("note " + HOSTILE)
    for judge in cal["judges"].values():
        judge["per_category"][HOSTILE] = judge["per_category"]["writing"]
        for d in judge["disagreements"]:
            d["texts"] = {"12": "raw 12 " + HOSTILE, "21": "raw 21 " + HOSTILE}
            d["category"] = HOSTILE
    cal["per_category"][HOSTILE] = cal["per_category"]["writing"]
    return cal


def hostile_items(tmp_path) -> dict:
    path = tmp_path / "items.jsonl"
    rows = [
        {
            "item_id": item,
            "question": "Q " + HOSTILE,
            "answer_1": "one " + HOSTILE,
            "answer_2": "two " + HOSTILE,
            "category": "writing",
            "human_ratings": [{"rater_id": "r " + HOSTILE, "label": "B"}],
        }
        for item in ("item-all", "item-half", "item-two-thirds")
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return read_items(path)


def test_html_escapes_every_dataset_and_model_text(tmp_path):
    cal = hostile_calibration()
    data = build_report_data(cal, cases=hostile_items(tmp_path), policy=policy_routing({HOSTILE: "person"}))
    html = render_report(data, "html")
    parsed = parse_html(html)
    assert not set(TAGS_FROM_DATA) & set(parsed.tags), "a dataset text became a tag"
    assert not [a for a in parsed.attributes if a[1].startswith("on")], "an event handler attribute was injected"
    assert "<script" not in html.lower() and "<img" not in html.lower()
    escaped = "&lt;script&gt;"
    # Each hostile place is present, escaped: header, tables, notes, disagreements, and SVG text.
    for visible in ("model ", "sha ", "note ", "raw 12 ", "raw 21 ", "Q ", "one ", "two ", "r ", "evil/"):
        assert visible + escaped in html, visible
    svg_texts = [chunk for chunk in html.split("<svg")[1:] if escaped in chunk.split("</svg>")[0]]
    assert svg_texts, "the hostile category or judge key should appear (escaped) inside a plot"
    # The category the policy sends to a person is marked in the plot and the table.
    assert "→ person · " + escaped in html
    cats = {r[0]: r for r in parsed.tables["table-categories"][1:]}
    assert cats[HOSTILE][1] == "to a person"


def test_judge_key_with_quotes_cannot_break_out_of_an_attribute():
    cal = pairwise_calibration()
    cal["judges"]['x" onmouseover="alert(1)'] = cal["judges"].pop("gpt4_2023")
    html = render_report(build_report_data(cal), "html")
    parsed = parse_html(html)
    assert not [a for a in parsed.attributes if a[1].startswith("on")], "an event handler attribute was injected"
    assert ("tr", "data-judge", 'x" onmouseover="alert(1)') in parsed.attributes
    assert 'data-judge="x&#34; onmouseover=&#34;alert(1)"' in html


def test_markdown_escapes_html_and_table_syntax(tmp_path):
    cal = hostile_calibration()
    cal["judges"]["pipe|judge/t"] = cal["judges"].pop("gpt4_2023")
    md = render_report(build_report_data(cal, cases=hostile_items(tmp_path)), "md")
    assert "<script" not in md and "<img" not in md
    assert "&lt;script&gt;" in md
    assert "pipe\\|judge/t" in md  # a pipe in a name does not split the table cell


def test_plots_show_a_judge_key_s_bidi_and_control_characters_instead_of_obeying_them():
    """The tables mark hidden characters (visible_html); matplotlib's SVG text kept U+202E and ESC acting."""
    cal = pairwise_calibration()
    cal["judges"]["chat\u202esmall\x1b[31m/x"] = cal["judges"].pop("chat-strong/pair-v2")
    html = render_report(build_report_data(cal), "html")
    assert "<svg" in html and "\u202e" not in html and "\x1b" not in html
    svg = html.split("<svg", 1)[1].split("</svg>")[0]
    assert "U+202E" in svg
