"""Panels (issue 25): judges voting as one, measured like one judge whose calls are its members' calls."""

from __future__ import annotations

import numpy as np
import pytest

import juge
from juge.calibration.panel import Panel, aggregate_verdicts, panel_calls, parse_panels
from juge.calibration.source import study_source
from juge.data.records import RecordedCall
from juge.errors import InputError


def test_aggregations_by_hand():
    assert aggregate_verdicts(["A", "A", "B"], 3, "majority") == "A"
    assert aggregate_verdicts(["A", "B", None], 3, "majority") is None  # a tie: a person decides
    assert aggregate_verdicts(["A", "A", None], 3, "majority") == "A"  # two of three
    assert aggregate_verdicts(["A", None, None], 3, "majority") is None  # one of three is no majority
    assert aggregate_verdicts(["PASS", "PASS", "PASS"], 3, "unanimous") == "PASS"
    assert aggregate_verdicts(["PASS", "PASS", None], 3, "unanimous") is None
    assert aggregate_verdicts([4, 5, 2], 3, "mean") == pytest.approx(11 / 3)
    assert aggregate_verdicts([4, 5, 2], 3, "median") == 4
    assert aggregate_verdicts([4, 5, None], 3, "median") is None  # every member's score is needed


def test_parse_panels_and_its_errors():
    assert parse_panels("jury=a,b,c; duo=a,b:unanimous") == (
        Panel("jury", ("a", "b", "c"), "majority"), Panel("duo", ("a", "b"), "unanimous"),
    )  # fmt: skip
    for bad in ("jury", "jury=a", "jury=a,a", "jury=a,b:vote", "j/x=a,b", "x=a,b;x=a,c"):
        with pytest.raises(InputError, match="--panel"):
            parse_panels(bad)


def _call(judge: str, item: str, verdict: str | None, order: str | None = None, tokens: int = 10) -> RecordedCall:
    return RecordedCall(item, judge, f"{judge}-model", "t", "h", order, 0, "", verdict,  # type: ignore[arg-type]
                        "ok" if verdict else "refused", tokens_in=tokens, tokens_out=tokens)  # fmt: skip


def test_panel_calls_per_order_with_summed_tokens_and_no_verdict_unparsed():
    calls = [_call("a", "i1", "A", "12"), _call("b", "i1", "A", "12"), _call("c", "i1", "B", "12"),
             _call("a", "i1", "B", "21"), _call("b", "i1", None, "21"), _call("c", "i1", "A", "21")]  # fmt: skip
    out = {c.order: c for c in panel_calls(calls, Panel("jury", ("a", "b", "c")))}
    assert out["12"].verdict == "A" and out["12"].outcome == "ok" and out["12"].judge == "jury"
    assert out["12"].template == "majority" and out["12"].tokens_in == 30
    assert out["21"].verdict is None and out["21"].outcome == "unparsed"  # B, none, A: no majority
    assert out["12"].model.startswith("panel: a/t (a-model) + b/t (b-model)")  # its members, listed
    with pytest.raises(InputError, match="no judgment by 'd'"):
        panel_calls(calls, Panel("jury", ("a", "d")))


def test_a_panel_of_three_independent_judges_agrees_with_people_more_than_any_member():
    """Simulated: 400 PASS/FAIL items, three raters each right 85 % of the time, three judges each right 70 %,
    errors independent. Majority of three is right 78.4 % of the time: it agrees with each person more often
    than any member, and calibrate reports it as one judge (its members in its model)."""
    rng = np.random.default_rng(7)
    n = 400
    truth = rng.random(n) < 0.5
    word = {True: "PASS", False: "FAIL"}
    items = [{"id": f"i{k}", "question": "q", "output": "x"} for k in range(n)]
    labels = [{"item_id": f"i{k}", "rater_id": f"r{r}", "label": word[bool(truth[k] ^ (rng.random() > 0.85))]}
              for k in range(n) for r in range(3)]  # fmt: skip
    judgments = [{"item_id": f"i{k}", "judge": j, "model": f"{j}-2026", "prompt": "t", "outcome": "ok", "text": "x",
                  "letter": word[bool(truth[k] ^ (rng.random() > 0.7))]}
                 for j in ("a", "b", "c") for k in range(n)]  # fmt: skip
    source = study_source(items=items, labels=labels, judgments=judgments, panels="jury=a,b,c", kind="passfail")
    cal = juge.calibrate(source=source, resamples=20).to_dict()
    agreement = {k: v["agreement"]["value"] for k, v in cal["judges"].items()}
    kappa = {k: v["kappa"]["value"] for k, v in cal["judges"].items()}
    assert set(agreement) == {"a/t", "b/t", "c/t", "jury/majority"}
    assert agreement["jury/majority"] > max(agreement[m] for m in ("a/t", "b/t", "c/t"))
    assert kappa["jury/majority"] > max(kappa[m] for m in ("a/t", "b/t", "c/t"))
    assert "a/t" in str(cal["versions"]) and "jury" in str(cal["versions"])


def test_ties_tie_makes_a_split_among_members_who_all_answered_a_tie():
    assert aggregate_verdicts(["A", "B"], 2, "majority", "tie") == "C"
    assert aggregate_verdicts(["A", "B", "C"], 3, "majority", "tie") == "C"
    assert aggregate_verdicts(["A", "B", None], 3, "majority", "tie") is None  # a member without a verdict
    assert aggregate_verdicts(["A", "A", "B"], 3, "unanimous", "tie") == "C"
    assert aggregate_verdicts(["A", "A", "B"], 3, "majority", "tie") == "A"
    assert parse_panels("duo=a,b:majority:tie") == (Panel("duo", ("a", "b"), "majority", "tie"),)
    with pytest.raises(InputError, match="--panel"):
        parse_panels("duo=a,b:majority:coin")


def test_readme_quotes_the_sample_panel_on_the_items_it_settles():
    """README's unanimous pair on the sample: its figure rests on fewer items than its members', as the text says."""
    from pathlib import Path

    demo = juge.demo_path("items.jsonl").parent
    source = study_source(items=demo / "items.jsonl", judgments=demo / "judgments.jsonl",
                          panels="both=chat-small/pair-v2,chat-strong/pair-v2:unanimous")  # fmt: skip
    cal = juge.calibrate(source=source, resamples=50).to_dict()["judges"]

    def people(key: str) -> str:
        return f"{cal[key]['vs_people']['agreement']['value']:.3f}"

    panel = cal["both/unanimous"]
    missing = panel["verdict_counts"]["missing"]
    n_members = {cal[k]["vs_people"]["agreement"]["n"] for k in ("chat-small/pair-v2", "chat-strong/pair-v2")}
    text = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8").split())
    assert (
        f"agrees with each person {people('both/unanimous')} (n={panel['vs_people']['agreement']['n']} pairs) on "
        f"the {panel['n_items'] - missing} items it gives a verdict (the other {missing}: its members disagreed), "
        f"against {people('chat-small/pair-v2')} and {people('chat-strong/pair-v2')} (n={n_members.pop()}) for its "
        f"members alone on all {panel['n_items']}"
    ) in text
    assert not n_members


def test_recorded_calls_refuse_a_rule_their_verdicts_do_not_suit():
    """--panel reads recorded calls, which carry no setup: mean of letters left every call unsettled (a silent
    all-unparsed judge), and :tie on PASS/FAIL judges gave the pairwise tie C as a PASS/FAIL verdict."""
    letters = [_call("a", "i1", "A", "12"), _call("b", "i1", "B", "12")]
    with pytest.raises(InputError, match="mean needs score judges"):
        panel_calls(letters, Panel("jury", ("a", "b"), "mean"))
    words = [_call("a", "i1", "PASS"), _call("b", "i1", "FAIL")]
    with pytest.raises(InputError, match=":tie is for pairwise"):
        panel_calls(words, Panel("jury", ("a", "b"), "majority", "tie"))
    assert [c.verdict for c in panel_calls(letters, Panel("jury", ("a", "b"), "majority", "tie"))] == ["C"]


def test_a_panel_named_as_a_judge_is_refused():
    """As [[panels]] refuse it: chat-small/majority would read as one more prompt of the judge chat-small."""
    calls = [_call("a", "i1", "A", "12"), _call("b", "i1", "B", "12")]
    with pytest.raises(InputError, match="a judge already has that name"):
        panel_calls(calls, Panel("a", ("a", "b")))
