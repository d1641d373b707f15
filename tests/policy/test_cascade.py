"""Cascades (issue 25): chat-small -> chat-strong -> person, derived on dev and tested once on holdout.

The simulation draws scripted judges of known accuracy-by-confidence and checks the stated guarantee over
repeated dev/holdout draws, on the very functions derive and the holdout test use (cascade_walk, cascade_assign).
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

import juge
from juge.errors import InputError
from juge.policy.cascade import cascade_assign, cascade_walk, item_costs, read_prices
from juge.policy.guarantee import fixed_sequence_threshold
from juge.policy.route import route_item

PRICES = {"gpt-6-luna": {"input": 0.15, "output": 0.6}, "gpt-6.1-sol": {"input": 2.5, "output": 10.0}}


@pytest.fixture(scope="module")
def cascade_policy(sample_dir: Path) -> juge.PolicyResult:
    return juge.policy.derive(
        items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl",
        cascade="chat-small,chat-strong", target=0.65, resamples=50,
    )  # fmt: skip


@pytest.fixture(scope="module")
def sample_dir() -> Path:  # module scope for the derived policy (the conftest one is per test)
    from conftest import PACKAGED_SAMPLE, SHARED_SAMPLE

    return SHARED_SAMPLE if (SHARED_SAMPLE / "items.jsonl").exists() else PACKAGED_SAMPLE


def test_cascade_on_the_sample_sums_to_the_holdout_and_is_cheaper(cascade_policy, sample_dir, tmp_path):
    c = cascade_policy.cascade
    assert c is not None and [s.judge for s in c.stages] == ["chat-small/pair-v2", "chat-strong/pair-v2"]
    assert c.stage_confidence == pytest.approx(0.95)  # Bonferroni over two stages at 0.9
    assert c.n_person + sum(s.n_decided for s in c.stages) == c.n_items == 155
    assert c.stages[1].n_reaching == c.n_items - c.stages[0].n_decided
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(cascade_policy.to_dict()), encoding="utf-8")
    test = juge.policy.test(
        path, items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl", db=tmp_path / "j.db",
        prices=PRICES, resamples=50,
    )  # fmt: skip
    h = test.to_dict()["cascade"]
    decided = [s["n_decided"] for s in h["stages"]]
    assert sum(decided) + h["n_person"] == h["n_items"] == 165
    assert sum(decided) == test.decisions["judge"]
    assert h["cost"]["unit"] == "USD" and h["cost"]["unpriced_models"] == []
    assert 0 < h["cost"]["cascade_per_item"] < h["cost"]["last_stage_alone_per_item"]
    g = h["guarantee"]
    assert g["n_covered"] == sum(decided) and g["allowed_disagreement"] == pytest.approx(0.35)
    assert g["held"] == (g["disagreement"]["value"] <= 0.35)
    assert h["vs_majority"]["value"] == pytest.approx(1 - g["disagreement"]["value"])
    assert test.held == g["held"]
    # A category the cascade leaves to people has no holdout figure; its reason must not blame dev (it had some).
    empty = [c for c, row in test.per_category.items() if row.holdout_gap.gap is None]
    assert empty and all("on dev" not in test.per_category[c].conclusion.holdout_reason for c in empty)
    # A stage routed on holdout decides only items at or above its dev threshold, in its categories.
    for item in test.items:
        if item.route == "judge":
            stage = c.stages[item.stage - 1]
            assert stage.guarantee.threshold is not None and item.confidence >= stage.guarantee.threshold
            assert cascade_policy.cascade.stages[item.stage - 1].categories[item.category].decision == "judge"


def test_cost_counts_only_the_stages_an_item_reached(cascade_policy, sample_dir):
    """By hand on three items: an item decided at stage 1 pays stage 1's two calls; a person's item pays every
    stage that may decide its category; the strong judge alone pays its own calls on every item."""
    from juge.data.adapters import read_recorded_judgments

    calls = read_recorded_judgments(sample_dir / "judgments.jsonl")
    items = [json.loads(line) for line in (sample_dir / "items.jsonl").read_text().splitlines()]
    by_id = {it["item_id"]: it for it in items if it["split"] == "holdout"}
    routed = [route_item(cascade_policy, i, by_id[i]["category"], [j for j in calls if j.item_id == i]) for i in by_id]
    one = next(d for d in routed if d.stage == 1)
    cost = item_costs([one], cascade_policy, calls, PRICES)
    own = [j for j in calls if j.item_id == one.item_id and f"{j.judge}/{j.template}" == one.template]
    by_hand = sum(j.tokens_in * 0.15 + j.tokens_out * 0.6 for j in own) / 1e6
    assert len(own) == 2 and cost["cascade_per_item"] == pytest.approx(by_hand)
    strong = cascade_policy.cascade.stages[1].templates_by_category[one.category]
    strong_calls = [j for j in calls if j.item_id == one.item_id and f"{j.judge}/{j.template}" == strong]
    assert cost["last_stage_alone_per_item"] == pytest.approx(
        sum(j.tokens_in * 2.5 + j.tokens_out * 10 for j in strong_calls) / 1e6
    )
    assert item_costs([one], cascade_policy, calls, {})["unit"] == "tokens"  # the sample's models have no price


def test_read_prices_checks_rows_as_the_eval_file(tmp_path):
    good = tmp_path / "p.toml"
    good.write_text('[prices]\n"gpt-6-luna" = { input = 0.15, output = 0.6 }\n', encoding="utf-8")
    assert read_prices(good) == {"gpt-6-luna": {"input": 0.15, "output": 0.6}}
    bad = tmp_path / "bad.toml"
    bad.write_text('[prices]\n"x" = { input = -1, output = 2 }\n', encoding="utf-8")
    with pytest.raises(InputError, match="prices.x.input"):
        read_prices(bad)


def test_cascade_refuses_the_guarantee_rule_and_an_unknown_judge(sample_dir):
    common = {"items": sample_dir / "items.jsonl", "judgments": sample_dir / "judgments.jsonl", "resamples": 10}
    with pytest.raises(InputError, match="--cascade"):
        juge.policy.derive(cascade="chat-small,chat-strong", rule="guarantee", **common)
    with pytest.raises(InputError, match="no such judge"):
        juge.policy.derive(cascade="chat-small,nobody", **common)
    with pytest.raises(InputError, match="twice"):
        juge.policy.derive(cascade="chat-small,chat-small", **common)


def test_walk_by_hand_second_stage_sees_only_what_the_first_left():
    # Stage 1 is sure and right on items 0-29 (k=0, n=30: U = 1 - 0.05**(1/30) < 0.1 at level 0.95);
    # it may not decide items 30-59, which stage 2 decides (30 items, no error) and item 60 is wrong for both.
    s1 = [1.0] * 30 + [None] * 30 + [1.0]
    s2 = [1.0] * 61
    w1 = [False] * 30 + [None] * 30 + [True]
    w2 = [True] * 30 + [False] * 30 + [True]  # stage 2 is wrong on stage 1's items: it never sees them
    walks, stage_of = cascade_walk([s1, s2], [w1, w2], target=0.9, confidence=0.9)
    assert walks[0].n_items == 31 and walks[0].threshold is None  # 1 error in 31: U > 0.1
    walks, stage_of = cascade_walk([s1[:60], s2[:60]], [w1[:60], w2[:60]], target=0.9, confidence=0.9)
    assert walks[0].threshold == 1.0 and walks[1].n_items == 30 and walks[1].disagreements == 0
    assert stage_of == [0] * 30 + [1] * 30
    assert walks[0].upper_bound == pytest.approx(1 - 0.05 ** (1 / 30))


def _draw(rng: np.random.Generator, n: int, grid: np.ndarray, p_wrong: list[np.ndarray]):
    """n items; per judge an independent confidence level and a wrong verdict with that level's probability."""
    levels = [rng.integers(0, len(grid), size=n) for _ in p_wrong]
    conf = [grid[lv] for lv in levels]
    wrong = [rng.random(n) < p[lv] for p, lv in zip(p_wrong, levels)]
    return conf, wrong


def test_simulated_guarantee_holds_and_the_cascade_covers_at_least_the_strong_judge():
    """Scripted judges of known accuracy by confidence (five levels, independent across judges): a cheap one
    wrong 51 % of the time at its lowest level and 1 % at its top, a strong one 31 % and 1 %. Over 200 draws of
    1,000 dev and 2,000 holdout items, the holdout agreement with the majority on decided items is >= target in
    at least `confidence` of the draws, for the cascade and for the strong judge alone; and the cascade decides
    more items than the strong judge alone at the same target. (With a few hundred dev items the split of the
    confidence between stages can cost more than the cheap stage brings: docs/calibration.md.)"""
    rng = np.random.default_rng(25)
    grid = np.linspace(0.1, 1.0, 5)
    p_small, p_strong = 0.5 * (1 - grid) ** 2 + 0.01, 0.3 * (1 - grid) ** 2 + 0.01
    target, confidence, draws = 0.9, 0.9, 200
    held = {"cascade": 0, "strong": 0}
    coverage: dict[str, list[float]] = {"cascade": [], "strong": []}
    for _ in range(draws):
        dev_c, dev_w = _draw(rng, 1000, grid, [p_small, p_strong])
        ho_c, ho_w = _draw(rng, 2000, grid, [p_small, p_strong])
        for name, stages in (("cascade", [0, 1]), ("strong", [1])):
            walks, _ = cascade_walk(
                [list(dev_c[k]) for k in stages], [list(dev_w[k]) for k in stages], target=target,
                confidence=confidence,
            )  # fmt: skip
            stage_of = cascade_assign([list(ho_c[k]) for k in stages], [w.threshold for w in walks])
            wrong = [ho_w[stages[s]][i] for i, s in enumerate(stage_of) if s is not None]
            held[name] += not wrong or np.mean(wrong) <= 1 - target
            coverage[name].append(len(wrong) / 2000)
    assert held["cascade"] / draws >= confidence and held["strong"] / draws >= confidence
    assert np.mean(coverage["cascade"]) > np.mean(coverage["strong"]) > 0.5


def test_one_stage_cascade_is_the_guarantee_walk():
    rng = np.random.default_rng(3)
    conf = list(rng.choice([0.2, 0.6, 1.0], size=200))
    wrong = list(rng.random(200) < 0.05)
    walks, _ = cascade_walk([conf], [wrong], target=0.8, confidence=0.9)
    assert walks[0] == fixed_sequence_threshold(conf, wrong, target=0.8, confidence=0.9)


def test_live_route_calls_each_stage_only_on_what_reaches_it(tmp_path):
    """`juge route --eval` with a cascade: the sample replayed (no model called). Stage 1 is called only on the
    items in categories it may decide, stage 2 only on the items stage 1 left in its own categories; the
    decisions are those the recorded calls give."""
    from typer.testing import CliRunner

    from cli_helpers import juge_main
    from conftest import PACKAGED_SAMPLE as sample_dir  # its eval.toml replays its recorded calls
    from juge.store import Store

    def cli(*args: object) -> None:
        res = CliRunner().invoke(juge_main, [str(a) for a in args])
        assert res.exit_code == 0, res.output

    eval_file, db = sample_dir / "eval.toml", tmp_path / "a.db"
    cli("run", eval_file, "--db", db, "--no-progress")
    with Store(db) as store:
        (run,) = store.list_runs()
    policy = juge.policy.derive(
        run=run["id"], items=sample_dir / "items.jsonl", db=db, cascade="chat-small,chat-strong", target=0.4,
        resamples=20,
    )  # fmt: skip
    stages = policy.cascade.stages
    assert all(s.guarantee.threshold is not None for s in stages)  # both stages decide something
    rows = [json.loads(line) for line in (sample_dir / "items.jsonl").read_text().splitlines()]
    new = tmp_path / "new.jsonl"
    new.write_text("".join(json.dumps(r) + "\n" for r in rows if r["split"] == "holdout"), encoding="utf-8")
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy.to_dict()), encoding="utf-8")
    routed = juge.route(path, eval_file=eval_file, items=new, db=tmp_path / "b.db")
    assert routed.runs is not None and len(routed.runs) == 2
    category = {r["item_id"]: r["category"] for r in rows}
    first_decides = {c for c, r in stages[0].categories.items() if r.decision == "judge"}
    with Store(tmp_path / "b.db") as store:
        asked = [{j.item_id for j in store.judgments(r)} for r in routed.runs]
    assert asked[0] == {i for i in category if i in {r["item_id"] for r in rows if r["split"] == "holdout"}
                        and category[i] in first_decides}  # fmt: skip
    by_stage = {d.item_id: d.stage for d in routed.decisions}
    assert not asked[1] & {i for i, s in by_stage.items() if s == 1}  # stage 1's items never reach stage 2
    assert {i for i, s in by_stage.items() if s == 2} <= asked[1]
    assert routed.calls == 2 * (len(asked[0]) + len(asked[1]))  # both orders, nothing else called
    # The same decisions as routing the recorded calls.
    with Store(tmp_path / "b.db") as store:
        calls = [j for r in routed.runs for j in store.judgments(r)]
    for d in routed.decisions:
        again = route_item(policy, d.item_id, d.category, [j for j in calls if j.item_id == d.item_id])
        assert (again.route, again.stage, again.verdict) == (d.route, d.stage, d.verdict)


@pytest.mark.slow
def test_readme_quotes_the_cascade_figures(tmp_path):
    """The README's cascade row is what derive and the one holdout test compute (2,000 resamples, as the CLI)."""
    readme = Path(__file__).resolve().parents[2] / "README.md"
    text = " ".join(readme.read_text(encoding="utf-8").split())
    # The prices the figures use are the ones README writes to prices.toml, so a reader gets the same figures.
    block = re.search(r"cat > prices.toml <<'TOML'\n(.*?)\nTOML\n", readme.read_text(encoding="utf-8"), re.S)
    assert block is not None and tomllib.loads(block.group(1))["prices"] == PRICES
    demo = juge.demo_path("items.jsonl").parent
    inputs = {"items": demo / "items.jsonl", "judgments": demo / "judgments.jsonl"}
    policy = juge.policy.derive(**inputs, cascade="chat-small,chat-strong", target=0.65, prices=PRICES)
    path = tmp_path / "cascade.json"
    path.write_text(json.dumps(policy.to_dict()), encoding="utf-8")
    h = juge.policy.test(path, **inputs, db=tmp_path / "j.db").to_dict()["cascade"]  # the policy's prices

    def interval(e: dict) -> str:
        return f"{e['value']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"

    small, strong = (s["n_decided"] for s in h["stages"])
    row = (
        f"| cascade chat-small → chat-strong → person, target 0.65 | {small + strong} (chat-small {small}, "
        f"chat-strong {strong}) | {h['n_person']} | {interval(h['vs_majority'])} n={h['vs_majority']['n']} | "
        f"{interval(h['vs_people'])} | US$ {h['cost']['cascade_per_item']:.5f} vs "
        f"{h['cost']['last_stage_alone_per_item']:.5f} for chat-strong on every item |"
    )
    assert row in text
    # The configurations table and the choice (issue 25 item 3).
    dev = {r.name: r for r in policy.cascade.configurations}
    for r in h["configurations"]:
        f, label = r["holdout"], {"chat-small": "chat-small alone (chosen on dev)", "chat-strong": "chat-strong alone"}
        config_row = (
            f"| {label.get(r['name'], r['name'])} | {dev[r['name']].dev.n_decided} | {f['n_decided']} | "
            f"{interval(f['vs_majority'])} n={f['vs_majority']['n']} | US$ {f['cost']['usd_per_item']:.5f} | "
            f"{f['person_minutes_saved']:g} |"
        )
        assert config_row in text
    assert policy.cascade.choice.chosen == "chat-small" and dev["chat-small"].chosen
    d = dev["chat-strong"].difference_to_best
    assert f"chat-strong minus chat-small is {d.value:.3f} [{d.low:.3f}, {d.high:.3f}]" in text
    small, strong = dev["chat-small"].dev, dev["chat-strong"].dev
    more = strong.n_decided - small.n_decided
    even = (strong.cost.usd_per_item - small.cost.usd_per_item) / (more / strong.n_items)  # minutes_per_label 1
    assert f"above about US$ {even:.3f} a person-minute its {more} more dev items decided" in text
    assert f"disagreement {h['guarantee']['disagreement']['value']:.3f} against 0.35 allowed" in text
    walk = policy.cascade.stages[1].guarantee.steps[0]
    assert (
        f"on the {walk.n} dev items chat-small left to it (with a majority) it disagreed {walk.disagreements} times"
        in text
    )


def test_a_panel_as_a_stage_costs_its_members_calls(sample_dir, tmp_path):
    """--cascade both,chat-strong with --panel both=...: the panel stage decides like a judge, and its calls are
    priced as its members' (both models have a price, so the unit is US$)."""
    from juge.calibration.source import study_source

    source = study_source(
        items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl",
        panels="both=chat-small/pair-v2,chat-strong/pair-v2:unanimous",
    )  # fmt: skip
    policy = juge.policy.derive(source=source, cascade="both,chat-strong", target=0.65, resamples=20)
    assert policy.cascade.stages[0].judge == "both/unanimous" and policy.cascade.stages[0].n_decided > 0
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy.to_dict()), encoding="utf-8")
    h = juge.policy.test(path, source=source, db=tmp_path / "j.db", prices=PRICES, resamples=20).to_dict()["cascade"]
    assert h["cost"]["unit"] == "USD" and h["cost"]["unpriced_models"] == []
    # Every item the panel may decide pays both members: at least the strong judge's own calls on those items.
    assert h["cost"]["cascade_per_item"] > 0.5 * h["cost"]["last_stage_alone_per_item"]


def test_each_stage_alone_is_reported_as_a_one_stage_cascade(cascade_policy, sample_dir):
    c = cascade_policy.cascade
    strong = juge.policy.derive(
        items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl", cascade="chat-strong",
        target=0.65, resamples=20,
    ).cascade  # fmt: skip
    assert [a.judge for a in c.alone] == ["chat-small/pair-v2", "chat-strong/pair-v2"]
    assert c.alone[1].n_decided == strong.stages[0].n_decided == strong.n_items - strong.n_person
    assert c.cascade_on_dev.n_decided == c.n_items - c.n_person
    walk = strong.stages[0].guarantee
    assert c.alone[1].agreement_with_majority == pytest.approx(1 - walk.disagreements / walk.n_calibration_covered)


def test_a_report_first_screen_states_the_cascade_not_its_first_stages_categories(cascade_policy):
    """The report's first line for a cascade policy names its stages and target and what they decide on dev (its
    categories are stage 1's alone, so 'the judge decides k of 8 categories' misread it)."""
    from juge.reports.first_screen import verdicts

    c = cascade_policy.cascade
    line = verdicts(cascade_policy, None)[0]
    assert line["kind"] == "policy" and line["status"] == cascade_policy.status
    assert " → ".join(s.judge for s in c.stages) in line["text"] and f"target {c.target:g}" in line["text"]
    assert f"{c.n_items - c.n_person} of {c.n_items} items" in line["text"] and "categories" not in line["text"]


@pytest.mark.slow
def test_readme_live_cascade_on_the_sample(tmp_path):
    """README's live cascade: derived from the replayed sample at target 0.65, routing examples/route/new-items.jsonl
    sends 4 items to chat-small and 4 to a person in 10 calls; chat-strong (no dev threshold) is never called."""
    from juge.store import Store

    root = Path(__file__).resolve().parents[2]
    demo = juge.demo_path("items.jsonl").parent
    db = tmp_path / "a.db"
    juge.run(demo / "eval.toml", db=db)
    with Store(db) as store:
        (run,) = store.list_runs()
    policy = juge.policy.derive(
        run=run["id"], items=demo / "items.jsonl", db=db, cascade="chat-small,chat-strong", target=0.65, resamples=20
    )
    assert policy.cascade.stages[1].guarantee.threshold is None
    path = tmp_path / "live-cascade.json"
    path.write_text(json.dumps(policy.to_dict()), encoding="utf-8")
    routed = juge.route(path, eval_file=demo / "eval.toml", items=root / "examples/route/new-items.jsonl", db=db)
    routes = [d.route for d in routed.decisions]
    assert (routes.count("judge"), routes.count("person"), routed.calls) == (4, 4, 10)
    assert {d.stage for d in routed.decisions if d.route == "judge"} == {1} and len(routed.runs or []) == 1
    text = " ".join((root / "README.md").read_text(encoding="utf-8").split())
    assert "routed 8 items: 4 to the judge, 4 to a person; 10 calls (chat-small on the 5 items" in text
