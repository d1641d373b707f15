"""Pin the pairwise calibration definitions of issue 3 on small hand-worked cases."""

from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score

from juge.calibration.pairtable import LONGER_ANSWER, build_pair_table, longer_answer_verdict, majority_label
from juge.calibration.pairwise import (
    Bootstrap,
    ceiling,
    inconsistent_patterns,
    majority_picks_longer,
    order_flip_rate,
    outcome_counts,
    pairwise_study,
    picks_longer,
    picks_longer_against_majority,
    reference_templates,
    self_consistency,
    verdict_counts,
    vs_majority,
    vs_people,
)
from juge.data.records import Case, HumanLabel, Judgment

BOOT = Bootstrap(n_resamples=200, seed=3)


def call(
    item: str,
    order: str,
    letter: str | None,
    outcome: str = "ok",
    judge: str = "j",
    template: str = "t",
    repeat: int = 0,
) -> Judgment:
    return Judgment(
        item_id=item,
        judge=judge,
        model="m-1",
        template=template,
        order=order,
        repeat=repeat,
        verdict=letter,
        outcome=outcome,
        text=f"{item} {order} says [[{letter}]]",
    )


def votes(item: str, *labels: str) -> list[HumanLabel]:
    return [HumanLabel(item_id=item, rater_id=f"r{k}", label=lab) for k, lab in enumerate(labels)]


@pytest.fixture()
def table():
    """Three items worked by hand.

    X: votes A, A, B (3 raters); answers 10 vs 20 chars (longer: B); judge 12=A, 21=B -> A.
    Y: votes tie, B (no majority); equal lengths; judge 12=A, 21=A -> inconsistent (first shown won both).
    Z: votes B, B; answers 30 vs 3 chars (longer: A); judge 12=B, 21 unparsed -> missing.
    """
    cases = [
        Case(id="X", category="c1", output_1="x" * 10, output_2="x" * 20, split="dev"),
        Case(id="Y", category="c1", output_1="y" * 5, output_2="y" * 5, split="dev"),
        Case(id="Z", category="c2", output_1="z" * 30, output_2="z" * 3, split="dev", reference="ref"),
    ]
    labels = votes("X", "A", "A", "B") + votes("Y", "tie", "B") + votes("Z", "B", "B")
    judgments = [
        call("X", "12", "A"),
        call("X", "21", "B"),
        call("Y", "12", "A"),
        call("Y", "21", "A"),
        call("Z", "12", "B"),
        call("Z", "21", None, outcome="unparsed"),
    ]
    return build_pair_table(cases, labels, judgments)


def test_majority_needs_strictly_most_votes() -> None:
    assert majority_label(["A", "A", "B"]) == "A"
    assert majority_label(["A", "B"]) is None
    assert majority_label(["A", "B", "tie", "tie"]) == "tie"
    assert majority_label(["A", "A", "B", "B", "tie"]) is None
    assert majority_label([]) is None


def test_longer_answer_baseline_equal_lengths_are_a_tie() -> None:
    assert longer_answer_verdict(5, 5) == "tie"
    assert longer_answer_verdict(6, 5) == "A"
    assert longer_answer_verdict(5, 6) == "B"


def test_ceiling_pools_all_rater_pairs_including_three_raters(table) -> None:
    fig = ceiling(table.items, BOOT)
    # X: (A,A) (A,B) (A,B) -> 1 of 3; Y: (tie,B) -> 0 of 1; Z: (B,B) -> 1 of 1.
    assert fig["n_pairs"] == 5
    assert fig["agreement"]["value"] == pytest.approx(2 / 5)
    assert fig["agreement"]["n"] == 5
    # Without ties: Y's pair drops out -> 2 of 4.
    assert fig["agreement_without_ties"]["value"] == pytest.approx(2 / 4)
    assert fig["agreement_without_ties"]["n"] == 4
    first, second = ["A", "A", "A", "tie", "B"], ["A", "B", "B", "B", "B"]
    assert fig["kappa"]["value"] == pytest.approx(cohen_kappa_score(first, second, labels=["A", "B", "tie"]))


def test_verdict_from_both_orders_inconsistent_and_missing(table) -> None:
    assert verdict_counts(table.items, "j/t") == {"A": 1, "B": 0, "tie": 0, "inconsistent": 1, "missing": 1}
    assert outcome_counts(table.items, "j/t") == {"ok": 5, "refused": 0, "unparsed": 1, "error": 0}
    by_id = {it.item_id: it for it in table.items}
    assert by_id["Y"].judges["j/t"].label == "tie"  # inconsistent counts as a tie
    assert by_id["Z"].judges["j/t"].verdict is None


def test_judge_vs_majority_excludes_items_without_majority_and_missing(table) -> None:
    fig = vs_majority(table.items, "j/t", BOOT)
    # Only X counts: Y has no majority, Z's verdict is missing.
    assert fig["agreement"] == {"value": 1.0, "low": 1.0, "high": 1.0, "n": 1}


def test_judge_vs_people_pools_every_vote_and_counts_inconsistent_as_tie(table) -> None:
    fig = vs_people(table.items, "j/t", BOOT)
    # X: A vs A, A, B -> 2 of 3; Y: tie vs tie, B -> 1 of 2; Z excluded (missing).
    assert fig["agreement"]["value"] == pytest.approx(3 / 5)
    assert fig["agreement"]["n"] == 5
    judge, people = ["A", "A", "A", "tie", "tie"], ["A", "A", "B", "tie", "B"]
    assert fig["kappa"]["value"] == pytest.approx(cohen_kappa_score(judge, people, labels=["A", "B", "tie"]))
    assert fig["agreement"]["low"] <= fig["agreement"]["value"] <= fig["agreement"]["high"]


def test_order_flip_rate_and_which_position_won(table) -> None:
    flip = order_flip_rate(table.items, "j/t", BOOT)
    assert (flip.value, flip.n) == (0.5, 2)  # 1 inconsistent of 2 items with a verdict
    assert inconsistent_patterns(table.items, "j/t") == {
        "n": 1,
        "shown_first_won_both": 1,
        "shown_second_won_both": 0,
        "tie_in_one_order": 0,
    }


def test_length_bias(table) -> None:
    # Judge: decisive only on X (A, the shorter) -> 0 of 1.
    assert (picks_longer(table.items, "j/t", BOOT).value, picks_longer(table.items, "j/t", BOOT).n) == (0.0, 1)
    # Majority: X says A (shorter), Z says B (shorter), Y has none -> 0 of 2.
    maj = majority_picks_longer(table.items, BOOT)
    assert (maj.value, maj.n) == (0.0, 2)
    # The longer-answer baseline always picks the longer; equal lengths (Y) are a tie and drop out.
    longer = picks_longer(table.items, LONGER_ANSWER, BOOT)
    assert (longer.value, longer.n) == (1.0, 2)
    assert verdict_counts(table.items, LONGER_ANSWER) == {"A": 1, "B": 1, "tie": 1, "inconsistent": 0, "missing": 0}
    # It contradicts the majority on X and Z, both times taking the longer answer.
    against = picks_longer_against_majority(table.items, LONGER_ANSWER, BOOT)
    assert (against.value, against.n) == (1.0, 2)


def test_tie_in_both_orders_and_refusal() -> None:
    cases = [Case(id="P", output_1="a", output_2="bb"), Case(id="Q", output_1="a", output_2="bb")]
    judgments = [
        call("P", "12", "C"),
        call("P", "21", "C"),
        call("Q", "12", "A"),
        call("Q", "21", None, outcome="refused"),
    ]
    table = build_pair_table(cases, votes("P", "tie", "tie") + votes("Q", "A"), judgments)
    assert verdict_counts(table.items, "j/t") == {"A": 0, "B": 0, "tie": 1, "inconsistent": 0, "missing": 1}
    assert order_flip_rate(table.items, "j/t", BOOT).value == 0.0


def test_absent_order_is_missing() -> None:
    # The judge was asked in both orders (on Q); P lacks order 21, so P's verdict is missing.
    cases = [Case(id=i, output_1="a", output_2="b") for i in ("P", "Q")]
    judgments = [call("P", "12", "A"), call("Q", "12", "A"), call("Q", "21", "B")]
    table = build_pair_table(cases, votes("P", "A") + votes("Q", "A"), judgments)
    assert verdict_counts(table.items, "j/t")["missing"] == 1
    assert table.items[0].judges["j/t"].verdict is None
    assert vs_people(table.items[:1], "j/t", BOOT)["agreement"]["value"] is None


def test_a_judge_asked_in_one_order_only_has_that_verdict_and_no_flip_rate() -> None:
    cases = [Case(id=i, output_1="a", output_2="b") for i in ("P", "Q")]
    table = build_pair_table(cases, votes("P", "A") + votes("Q", "B"), [call("P", "12", "A"), call("Q", "12", "A")])
    assert [it.judges["j/t"].verdict for it in table.items] == ["A", "A"]
    assert table.judges["j/t"].both_orders is False
    study = pairwise_study(table, split=None, boot=BOOT)
    assert study["judges"]["j/t"]["order_flip_rate"] is None  # never measured, so not 0
    assert study["judges"]["j/t"]["vs_people"]["agreement"]["value"] == 0.5


def test_self_consistency_counts_items_whose_letter_changed() -> None:
    cases = [Case(id=i, output_1="a", output_2="b") for i in ("P", "Q", "R")]
    judgments = [call(i, o, "A") for i in ("P", "Q", "R") for o in ("12", "21")]
    judgments += [call("P", "12", "B", repeat=1), call("Q", "12", "A", repeat=1)]
    table = build_pair_table(cases, votes("P", "A") + votes("Q", "A") + votes("R", "A"), judgments)
    est = self_consistency(table.items, "j/t", BOOT)
    assert (est.value, est.n) == (0.5, 2)  # P changed, Q did not; R was asked once
    # The verdict uses the first call (repeat 0) of each order.
    assert table.items[0].judges["j/t"].verdict == "inconsistent"


def test_reference_comparison_is_paired_on_items_with_both_verdicts() -> None:
    cases = [
        Case(id=f"i{k}", output_1="a", output_2="bb", reference="r" if k < 4 else None, category="math")
        for k in range(6)
    ]
    labels = [lab for k in range(6) for lab in votes(f"i{k}", "A", "A")]
    says_b = {"12": "B", "21": "A"}  # answer 2 better, in both orders
    says_a = {"12": "A", "21": "B"}
    plain = [
        call(f"i{k}", o, (says_b if k < 2 else says_a)[o], template="plain") for k in range(6) for o in ("12", "21")
    ]
    with_ref = [call(f"i{k}", o, says_a[o], template="ref") for k in range(4) for o in ("12", "21")]
    table = build_pair_table(cases, labels, plain + with_ref)
    assert reference_templates(table) == [("j/ref", "j/plain")]
    study = pairwise_study(table, split=None, boot=BOOT)
    (ref,) = study["reference"]
    assert ref["n_items"] == 4
    assert ref["vs_people_with"]["value"] == 1.0
    assert ref["vs_people_without"]["value"] == pytest.approx(4 / 8)  # i0, i1 wrong on the 4 shared items
    assert ref["difference"]["value"] == pytest.approx(0.5)
    assert ref["difference"]["low"] <= 0.5 <= ref["difference"]["high"]


def test_study_json_has_the_issue_keys(table) -> None:
    study = pairwise_study(table, split="dev", boot=BOOT).to_dict()
    assert {"split", "n_items", "n_votes", "n_raters", "ceiling", "n_without_majority", "judges", "versions"} <= set(
        study
    )
    assert study["split"] == "dev"
    assert (study["n_items"], study["n_votes"], study["n_raters"], study["n_without_majority"]) == (3, 7, 3, 1)
    assert set(study["ceiling"]) == {"agreement", "kappa", "krippendorff_alpha", "agreement_without_ties", "n_pairs"}
    assert set(study["judges"]) == {"j/t", LONGER_ANSWER}
    judge = study["judges"]["j/t"]
    assert {
        "verdict_counts",
        "vs_majority",
        "vs_people",
        "order_flip_rate",
        "picks_longer",
        "per_category",
        "outcomes",
    } <= set(judge)
    assert set(judge["vs_people"]) == {"agreement", "kappa"}
    assert set(judge["vs_people"]["agreement"]) == {"value", "low", "high", "n"}
    assert set(judge["per_category"]) == {"c1", "c2"}
    assert {"vs_people", "ceiling"} <= set(judge["per_category"]["c1"])
    assert judge["per_category"]["c1"]["ceiling"]["n_pairs"] == 4
    assert judge["per_category"]["c2"]["verdict_counts"]["missing"] == 1
    assert study["versions"]["judges"]["j/t"]["models"] == ["m-1"]
    assert study["versions"]["judges"]["j/t"]["template"] == "t"
    # Disagreements keep the raw text of each order (X agrees with its majority; Y has none; Z is missing).
    assert judge["disagreements"] == []
    assert study["judges"][LONGER_ANSWER]["disagreements"][0]["item_id"] == "X"


def test_disagreement_keeps_raw_texts() -> None:
    cases = [Case(id="P", output_1="a", output_2="b")]
    table = build_pair_table(cases, votes("P", "B", "B"), [call("P", "12", "A"), call("P", "21", "B")])
    (row,) = pairwise_study(table, split=None, boot=BOOT)["judges"]["j/t"]["disagreements"]
    assert row["majority"] == "B" and row["verdict"] == "A"
    assert row["letters"] == {"12": "A", "21": "B"}
    assert row["texts"]["21"] == "P 21 says [[B]]"


def test_split_selects_items(table) -> None:
    cases = [
        Case(id="D", output_1="a", output_2="b", split="dev"),
        Case(id="H", output_1="a", output_2="b", split="holdout"),
    ]
    t = build_pair_table(cases, votes("D", "A", "A") + votes("H", "B", "A", "A"))
    assert pairwise_study(t, split="holdout", boot=BOOT)["n_votes"] == 3
    assert pairwise_study(t, split=None, boot=BOOT)["n_items"] == 2


def test_judges_with_the_same_template_are_compared_on_shared_items() -> None:
    cases = [Case(id=f"i{k}", output_1="a", output_2="bb") for k in range(4)]
    labels = [lab for k in range(4) for lab in votes(f"i{k}", "A")]
    says_a, says_b = {"12": "A", "21": "B"}, {"12": "B", "21": "A"}
    good = [call(f"i{k}", o, says_a[o], judge="good") for k in range(4) for o in ("12", "21")]
    # "poor" is wrong on i0 and has no verdict on i3 (refused): only i0-i2 are shared.
    poor = [call(f"i{k}", o, (says_b if k == 0 else says_a)[o], judge="poor") for k in range(3) for o in ("12", "21")]
    poor += [call("i3", "12", None, outcome="refused", judge="poor"), call("i3", "21", "B", judge="poor")]
    study = pairwise_study(build_pair_table(cases, labels, good + poor), split=None, boot=BOOT)
    (diff,) = study["differences"]
    assert (diff["a"], diff["b"], diff["n_items"]) == ("good/t", "poor/t", 3)
    assert diff["vs_people_a"]["value"] == 1.0
    assert diff["vs_people_b"]["value"] == pytest.approx(2 / 3)
    assert diff["difference"]["value"] == pytest.approx(1 / 3)
    assert diff["difference"]["low"] <= 1 / 3 <= diff["difference"]["high"]
