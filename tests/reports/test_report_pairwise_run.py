"""`juge report --run` on a run whose judges are all pairwise: pair verdicts, not pass/fail."""

from __future__ import annotations

from juge.data.records import Case, Judgment
from juge.reports import render_report
from juge.reports.runs import build_run_data
from juge.runs.summary import summarize
from juge.store import Store
from report_helpers import HOSTILE, parse_html

# item -> (letter, outcome, text) in order 12 and in order 21
SCRIPT = {
    "p0": (("A", "ok", "first [[A]]"), ("B", "ok", "second [[B]]")),  # A (consistent)
    "p1": (("A", "ok", "pos 12 " + HOSTILE), ("A", "ok", "pos 21 " + HOSTILE)),  # inconsistent
    "p2": ((None, "unparsed", "unreadable " + HOSTILE), ("C", "ok", "tie [[C]]")),  # missing
    "p3": (("C", "ok", "tie [[C]]"), ("C", "ok", "tie [[C]]")),  # tie
}


def pairwise_run(store: Store, *, done: bool) -> str:
    cases = [Case(id=i, question="Q " + i, output_1="one " + HOSTILE, output_2="two", category="c") for i in SCRIPT]
    store.create_run(
        dataset_hash="d" * 64,
        juge_version="t",
        cases=cases,
        run_id="pw",
        config={"judges": [{"name": "cmp", "setup": "pairwise"}]},
    )
    for item, orders in SCRIPT.items():
        for order, (letter, outcome, text) in zip(("12", "21"), orders):
            store.save_judgment(
                "pw",
                Judgment(
                    item_id=item,
                    judge="cmp",
                    model="m",
                    template="t",
                    order=order,
                    verdict=letter,
                    outcome=outcome,
                    text=text,
                ),
            )
    if done:
        store.finish_run("pw", summarize(store, "pw"))
    return "pw"


def test_pairwise_run_report_shows_pair_verdicts_and_the_inconsistent_and_missing_pairs(tmp_path) -> None:
    for done in (True, False):
        with Store(tmp_path / f"j{done}.db") as store:
            data = build_run_data(store, pairwise_run(store, done=done))
        assert data["pairwise_only"]
        assert data["pair_verdicts"] == [
            {"judge": "cmp", "n_pairs": 4, "A": 1, "B": 0, "tie": 1, "inconsistent": 1, "missing": 1}
        ]
        assert [(p["item_id"], p["verdict"]) for p in data["pair_problems"]] == [
            ("p1", "inconsistent"),
            ("p2", "missing"),
        ]
        html = render_report(data, "html")
        parsed = parse_html(html)
        assert "script" not in parsed.tags and "<script" not in html.lower()
        assert "cases passed" not in html.lower() and "missing a verdict" not in html and "per pair" not in html
        rows = parsed.tables["table-pair-verdicts"]
        assert rows[0] == ["Judge", "pairs", "A", "B", "tie", "inconsistent", "missing"]
        assert rows[1] == ["cmp", "4", "1", "0", "1", "1", "1"]
        # Both orders' raw texts of the inconsistent pair and of the missing one, escaped.
        for text in ("pos 12 ", "pos 21 ", "unreadable ", "one "):
            assert text + "&lt;script&gt;" in html, text
        assert 'data-item="p0"' not in html and 'data-item="p3"' not in html
        # Pair verdict shares are of pairs (1 of 4), not of the 8 calls.
        judge_rows = {r[0]: r for r in parsed.tables["table-judge-1"][1:]}
        assert judge_rows["verdict A"][2] == "25.0 %"
        md = render_report(data, "md")
        assert "Cases passed" not in md and "per pair" not in md and "<script" not in md
        assert "| cmp | 4 | 1 | 0 | 1 | 1 | 1 |" in md
        assert "pos 21 &lt;script&gt;" in md and "unreadable &lt;script&gt;" in md
