"""`summarize` reads a run item by item (cases, judgments and check results side by side, in item
order): its counts must be those of the definition applied to the whole run at once."""

import random
from collections import Counter
from pathlib import Path

import pytest

from juge.data.records import Case, Judgment
from juge.judges.pairwise import combine_orders
from juge.runs.summary import summarize
from juge.store import Store
from juge.verdicts import case_outcomes, expected_judges


def random_run(store: Store, rng: random.Random) -> str:
    ids = [f"{rng.choice('abcXYZé')}{i}" for i in range(120)]
    cases = [
        Case(id=i, question="q", output_1="x", output_2="y")
        if rng.random() < 0.3
        else Case(id=i, question="q", output="o")
        for i in ids
    ]
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
    for case in cases:
        if rng.random() < 0.8:
            store.save_checks(run_id, case.id, {"len": (rng.random() < 0.9, None), "re": (rng.random() < 0.95, "r")})
        if case.is_pair:
            for order in ("12", "21"):
                if rng.random() < 0.9:
                    ok = rng.random() < 0.9
                    store.save_judgment(
                        run_id, judgment(run_id, case.id, "pair", rng.choice("ABC") if ok else None, ok, order)
                    )
            continue
        for name, values in (("pf", ["PASS", "FAIL", "maybe"]), ("score", [1, 2, 3, 4, 5])):
            for repeat in range(2):
                if rng.random() < 0.85:
                    ok = rng.random() < 0.9
                    store.save_judgment(
                        run_id,
                        judgment(run_id, case.id, name, rng.choice(values) if ok else None, ok, None, repeat, rng),
                    )
    store.save_checks(run_id, "orphan", {"len": (False, None)})  # a result of no case of the run
    return run_id


def judgment(run_id, item, judge, verdict, ok, order, repeat=0, rng=None) -> Judgment:
    return Judgment(
        run_id=run_id,
        item_id=item,
        judge=judge,
        model=f"m-{judge}",
        template="t",
        template_hash="h",
        order=order,
        repeat=repeat,
        text="",
        verdict=verdict,
        outcome="ok" if ok else "unparsed",
        cost=None if rng is not None and rng.random() < 0.1 else 0.5,
    )


class J:
    def __init__(self, name: str, setup: str):
        self.name, self.setup = name, setup


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("min_score", [None, 3.0])
@pytest.mark.parametrize("with_judges", [True, False])
def test_streamed_summary_matches_the_whole_run_definition(tmp_path: Path, seed: int, min_score, with_judges) -> None:
    judges = [J("pf", "passfail"), J("score", "score"), J("pair", "pairwise")]
    with Store(tmp_path / "j.db") as store:
        run_id = random_run(store, random.Random(seed))
        s = summarize(store, run_id, judges if with_judges else None, min_score)
        cases, judgments, checks = store.run_cases(run_id), store.judgments(run_id), store.check_results(run_id)
    counted_names = {"pf"} | ({"score"} if min_score is not None else set())
    setups = [(j.name, j.setup) for j in judges]
    outcomes = case_outcomes(
        [c.id for c in cases],
        [j for j in judgments if j.judge in counted_names],
        checks,
        threshold=min_score,
        expected=expected_judges(cases, counted_names),
    )
    tally = Counter(o.verdict for o in outcomes.values())
    assert (s["cases_passed"], s["cases_failed"], s["cases_missing"]) == (
        tally["pass"],
        tally["fail"],
        tally["missing"],
    )
    assert s["n_cases"] == len(cases)
    for name in ("pf", "score", "pair"):
        mine = [j for j in judgments if j.judge == name]
        assert s["judges"][name]["n"] == len(mine)
        assert s["judges"][name]["outcomes"]["unparsed"] == sum(j.outcome == "unparsed" for j in mine)
        assert s["judges"][name]["verdicts"] == dict(
            sorted(Counter(str(j.verdict) for j in mine if j.outcome == "ok").items())
        )
        assert s["judges"][name]["setup"] == dict(setups)[name]
    letters: dict = {}
    for j in judgments:
        if j.judge == "pair":
            letters.setdefault((j.item_id, j.repeat), {})[j.order] = j.verdict if j.outcome == "ok" else None
    pairs = Counter(combine_orders(o.get("12"), o.get("21")) or "missing" for o in letters.values())
    assert s["judges"]["pair"]["pair_verdicts"] == {
        k: pairs.get(k, 0) for k in ("A", "B", "tie", "inconsistent", "missing")
    }
    assert s["checks"]["len"]["n"] == sum("len" in r for r in checks.values())
    assert s["cost"]["judges"] == pytest.approx(
        sum(j.cost for j in judgments if j.cost is not None and j.outcome != "error")
    )
    assert s["cost"]["unpriced"] == sum(j.cost is None for j in judgments)
    assert s["not_counted"] == ([] if min_score is not None else ["score"])
