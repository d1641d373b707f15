"""Cost is part of a cascade's decision (issue 25 item 3): every configuration considered (each judge alone, each
prefix, the cascade) measured on dev and on holdout, and the choice: the cheapest within noise of the best among
those meeting the guarantee."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import juge
from juge.calibration.pairwise import Bootstrap
from juge.policy.configurations import choose_configuration, within_noise
from juge.stats.estimate import Estimate

PRICES = {"gpt-6-luna": {"input": 0.15, "output": 0.6}, "gpt-6.1-sol": {"input": 2.5, "output": 10.0}}
BOOT = Bootstrap(n_resamples=2000, seed=0)


def _counts(n: int, decided: int, right: int, wrong_first: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per item agreement counts: the first ``decided`` items decided, ``right`` of them agreeing with the
    majority (the wrong ones first when ``wrong_first``, else last)."""
    den = np.array([1.0] * decided + [0.0] * (n - decided))
    agree = [0.0] * (decided - right) + [1.0] * right if wrong_first else [1.0] * right + [0.0] * (decided - right)
    return np.array(agree + [0.0] * (n - decided)), den


def test_the_choice_by_hand_is_neither_the_most_accurate_nor_the_cheapest():
    """40 items. strong: 39/40 right at US$ 10; mid: 38/40 (wrong on strong's one error and one more) at US$ 1;
    cheap: 20/40 at US$ 0.1, clearly worse; tiny: 5/5 right at US$ 0.01 but no threshold met the target (it
    does not meet the guarantee, so it is neither the best nor a candidate). The paired difference mid - strong
    is -1/40 and its interval includes 0 (the one item where they differ is left out of about a third of the
    resamples), cheap - strong is about -0.475 and excludes 0. Chosen: mid."""
    n = 40
    counts = [
        _counts(n, 40, 39),
        _counts(n, 40, 38),
        _counts(n, 40, 20, wrong_first=True),
        _counts(n, 5, 5),
    ]
    names = ["strong", "mid", "cheap", "tiny"]
    choice = choose_configuration(
        names, counts, meets_guarantee=[True, True, True, False], usd_per_item=[10.0, 1.0, 0.1, 0.01],
        tokens_per_item=[100.0, 50.0, 10.0, 1.0], n_decided=[40, 40, 40, 5], n_stages=[1, 1, 1, 1], boot=BOOT,
    )  # fmt: skip
    assert choice["best"] == "strong" and choice["chosen"] == "mid"
    assert choice["eligible"] == ["strong", "mid", "cheap"] and choice["within_noise"] == ["strong", "mid"]
    assert choice["cost_basis"] == "USD"
    rows = dict(zip(names, choice["rows"]))
    assert rows["mid"]["difference_to_best"]["value"] == pytest.approx(-1 / 40)
    assert rows["mid"]["difference_to_best"]["low"] < 0 <= rows["mid"]["difference_to_best"]["high"]
    assert rows["cheap"]["difference_to_best"]["high"] < 0 and not rows["cheap"]["within_noise"]
    assert rows["tiny"]["difference_to_best"] is None and not rows["tiny"]["meets_guarantee"]
    # Without a US$ price for one eligible configuration, the ranking is in tokens for all: still mid.
    tokens = choose_configuration(
        names, counts, meets_guarantee=[True, True, True, False], usd_per_item=[None, 1.0, 0.1, 0.01],
        tokens_per_item=[100.0, 50.0, 10.0, 1.0], n_decided=[40, 40, 40, 5], n_stages=[1, 1, 1, 1], boot=BOOT,
    )  # fmt: skip
    assert tokens["cost_basis"] == "tokens" and tokens["chosen"] == "mid"
    assert dict(zip(names, tokens["rows"]))["mid"]["ranking_cost"] == 50.0


def test_people_s_minutes_enter_the_cost_with_a_minute_price():
    """cheap decides 10 of 40 items at US$ 0.001, dear 40 at US$ 0.01, both right on all they decide. By calls
    alone cheap is chosen; with 30 items left to a person at 1 minute and US$ 0.5 a minute (0.375 per item) dear
    is; with no US$ price for one of them the minute price cannot be added, and the choice says so."""
    n = 40
    counts = [_counts(n, 10, 10), _counts(n, 40, 40)]
    common = {"meets_guarantee": [True, True], "tokens_per_item": [5.0, 50.0], "n_decided": [10, 40],
              "n_stages": [1, 1], "boot": BOOT}  # fmt: skip
    calls = choose_configuration(["cheap", "dear"], counts, usd_per_item=[0.001, 0.01], **common)
    assert calls["chosen"] == "cheap" and calls["cost_basis"] == "USD"
    people = [30 / 40 * 1.0 * 0.5, 0.0]
    both = choose_configuration(["cheap", "dear"], counts, usd_per_item=[0.001, 0.01], people_usd_per_item=people,
                                **common)  # fmt: skip
    assert both["chosen"] == "dear" and both["cost_basis"] == "USD with people" and both["warning"] is None
    assert both["rows"][0]["ranking_cost"] == pytest.approx(0.001 + 0.375)
    tokens = choose_configuration(["cheap", "dear"], counts, usd_per_item=[None, 0.01], people_usd_per_item=people,
                                  **common)  # fmt: skip
    assert tokens["cost_basis"] == "tokens" and tokens["chosen"] == "cheap" and "--minute-price" in tokens["warning"]
    # Recorded calls without tokens (0 per item) are not free: the choice says it rests on items decided alone.
    unknown = choose_configuration(["cheap", "dear"], counts, usd_per_item=[None, None],
                                   **{**common, "tokens_per_item": [0.0, 0.0]})  # fmt: skip
    assert unknown["chosen"] == "dear" and unknown["warning"] is not None
    assert calls["warning"] is None and tokens["warning"].count(";") == 0


def test_equal_cost_goes_to_more_items_decided_then_fewer_stages():
    n = 30
    same = _counts(n, 20, 18)
    more = _counts(n, 25, 22)  # 0.88 vs 0.9: within noise
    choice = choose_configuration(
        ["a", "a → b", "b"], [same, same, more], meets_guarantee=[True, True, True], usd_per_item=[1.0, 1.0, 1.0],
        tokens_per_item=[1.0, 1.0, 1.0], n_decided=[20, 20, 25], n_stages=[1, 2, 1], boot=BOOT,
    )  # fmt: skip
    assert choice["chosen"] == "b"
    choice = choose_configuration(
        ["a → b", "a"], [same, same], meets_guarantee=[True, True], usd_per_item=[1.0, 1.0],
        tokens_per_item=[1.0, 1.0], n_decided=[20, 20], n_stages=[2, 1], boot=BOOT,
    )  # fmt: skip
    assert choice["chosen"] == "a" and choice["best"] == "a → b"  # the best ties go to the first listed


def test_nothing_meets_the_guarantee_nothing_is_chosen():
    choice = choose_configuration(
        ["a"], [_counts(10, 5, 5)], meets_guarantee=[False], usd_per_item=[1.0], tokens_per_item=[1.0],
        n_decided=[5], n_stages=[1], boot=BOOT,
    )  # fmt: skip
    assert choice["chosen"] is None and choice["best"] is None and choice["eligible"] == []


def test_within_noise_is_the_interval_including_zero():
    assert within_noise(Estimate(-0.02, -0.05, 0.0, n=10))
    assert within_noise({"value": 0.0, "low": 0.0, "high": 0.0, "n": 10})
    assert not within_noise(Estimate(-0.2, -0.3, -0.01, n=10))
    assert not within_noise(Estimate(None, n=0)) and not within_noise(None)


@pytest.fixture(scope="module")
def sample_dir() -> Path:
    from conftest import PACKAGED_SAMPLE, SHARED_SAMPLE

    return SHARED_SAMPLE if (SHARED_SAMPLE / "items.jsonl").exists() else PACKAGED_SAMPLE


@pytest.fixture(scope="module")
def priced(sample_dir: Path) -> juge.PolicyResult:
    return juge.policy.derive(
        items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl",
        cascade="chat-small,chat-strong", target=0.65, resamples=50, prices=PRICES, minutes_per_label=2.0,
    )  # fmt: skip


def test_every_configuration_on_dev_and_on_holdout_in_the_json(priced, sample_dir, tmp_path):
    c = priced.to_dict()["cascade"]
    rows = {r["name"]: r for r in c["configurations"]}
    assert list(rows) == ["chat-small", "chat-strong", "chat-small → chat-strong"]
    assert [rows[n]["kind"] for n in rows] == ["judge", "judge", "cascade"]
    assert c["minutes_per_label"] == 2.0 and c["prices"] == PRICES
    alone = {a["name"]: a for a in c["alone"]}
    for name in ("chat-small", "chat-strong"):  # a judge alone is the walk `alone` reports
        dev = rows[name]["dev"]
        assert dev["n_decided"] == alone[name]["n_decided"] and dev["n_decided"] + dev["n_person"] == 155
        assert dev["vs_majority"]["value"] == pytest.approx(alone[name]["agreement_with_majority"])
        assert dev["person_minutes_saved"] == 2.0 * dev["n_decided"]
        assert dev["cost"]["usd_per_item"] > 0 and dev["cost"]["warning"] is None
    cascade = rows["chat-small → chat-strong"]["dev"]
    assert cascade["decided_by_stage"] == [s["n_decided"] for s in c["stages"]]
    assert rows["chat-small"]["dev"]["cost"]["usd_per_item"] < rows["chat-strong"]["dev"]["cost"]["usd_per_item"]
    choice = c["choice"]
    assert [n for n, r in rows.items() if r["chosen"]] == [choice["chosen"]]
    assert choice["cost_basis"] == "USD" and set(choice["within_noise"]) <= set(choice["eligible"])
    chosen = rows[choice["chosen"]]
    assert chosen["within_noise"] and chosen["meets_guarantee"]
    assert all(chosen["ranking_cost"] <= rows[n]["ranking_cost"] for n in choice["within_noise"])
    assert choice["derive_with"] == ",".join(s["name"] for s in chosen["stages"])

    path = tmp_path / "policy.json"
    path.write_text(json.dumps(priced.to_dict()), encoding="utf-8")
    out = tmp_path / "test.json"
    juge.policy.test(
        path, items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl", db=tmp_path / "j.db",
        resamples=50, json_path=out,
    )  # fmt: skip  # no prices given: the policy's are used
    h = json.loads(out.read_text(encoding="utf-8"))["cascade"]
    held = {r["name"]: r for r in h["configurations"]}
    assert list(held) == list(rows) and h["chosen"] == choice["chosen"]
    for r in held.values():
        f = r["holdout"]
        assert f["n_decided"] + f["n_person"] == 165 and sum(f["decided_by_stage"]) == f["n_decided"]
        assert r["guarantee_held"] == (r["disagreement"]["value"] <= 0.35)
    routed = held["chat-small → chat-strong"]["holdout"]
    assert routed["decided_by_stage"] == [s["n_decided"] for s in h["stages"]]  # the same routing as the policy's
    assert routed["cost"]["usd_per_item"] == pytest.approx(h["cost"]["cascade_per_item"])  # the same cost rule
    strong = held["chat-strong"]["holdout"]
    assert 0 < routed["cost"]["usd_per_item"] < strong["cost"]["usd_per_item"]
    assert strong["cost"]["usd_per_item"] <= h["cost"]["last_stage_alone_per_item"]  # it skips coding: a person


def test_a_minute_price_on_the_sample_chooses_the_judge_that_leaves_fewer_items_to_people(sample_dir):
    """On the sample chat-small decides fewer dev items than chat-strong for a fifteenth of the calls' cost: by
    calls alone chat-small is chosen, at US$ 0.5 a person-minute chat-strong is."""
    p = juge.policy.derive(
        items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl", cascade="chat-small,chat-strong",
        target=0.65, resamples=50, prices=PRICES, minute_price=0.5,
    )  # fmt: skip
    c = p.cascade
    assert c.minute_price == 0.5 and c.choice.cost_basis == "USD with people" and c.choice.chosen == "chat-strong"
    for r in c.configurations:
        people = r.dev.n_person / r.dev.n_items * 1.0 * 0.5
        assert r.ranking_cost == pytest.approx(r.dev.cost.usd_per_item + people)


def test_a_missing_price_leaves_the_cost_empty_with_a_warning(sample_dir):
    p = juge.policy.derive(
        items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl", cascade="chat-small,chat-strong",
        target=0.65, resamples=20, prices={"gpt-6-luna": {"input": 0.15, "output": 0.6}},
    )  # fmt: skip
    rows = {r.name: r for r in p.cascade.configurations}
    assert rows["chat-small"].dev.cost.usd_per_item is not None
    strong = rows["chat-strong"].dev.cost
    assert (
        strong.usd_per_item is None
        and strong.unpriced_models == ["gpt-6.1-sol-2026-09-29"]
        and "--prices" in strong.warning
    )
    assert strong.tokens_per_item > 0
    assert p.cascade.choice.cost_basis == "tokens"


def test_prices_and_minutes_need_a_cascade(sample_dir):
    common = {"items": sample_dir / "items.jsonl", "judgments": sample_dir / "judgments.jsonl", "resamples": 10}
    with pytest.raises(juge.InputError, match="--cascade"):
        juge.policy.derive(prices=PRICES, **common)
    with pytest.raises(juge.InputError, match="--minutes-per-label"):
        juge.policy.derive(cascade="chat-small", minutes_per_label=-1, **common)
    with pytest.raises(juge.InputError, match="--minute-price"):
        juge.policy.derive(cascade="chat-small", minute_price=float("nan"), **common)


def test_the_cli_takes_prices_and_minutes_on_derive(sample_dir, tmp_path):
    from typer.testing import CliRunner

    from cli_helpers import juge_main

    prices = tmp_path / "prices.toml"
    prices.write_text(
        '[prices]\n"gpt-6-luna" = { input = 0.15, output = 0.6 }\n"gpt-6.1-sol" = { input = 2.5, output = 10 }\n',
        encoding="utf-8",
    )
    args = ["policy", "derive", "--items", sample_dir / "items.jsonl", "--judgments", sample_dir / "judgments.jsonl",
            "--cascade", "chat-small,chat-strong", "--target", "0.65", "--resamples", "100", "--prices", prices,
            "--minutes-per-label", "0.5", "--json", tmp_path / "p.json", "-o", tmp_path / "P.md"]  # fmt: skip
    res = CliRunner().invoke(juge_main, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    c = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))["cascade"]
    assert c["minutes_per_label"] == 0.5 and c["prices"]["gpt-6.1-sol"] == {"input": 2.5, "output": 10}
    assert all(r["dev"]["cost"]["usd_per_item"] is not None for r in c["configurations"])
    assert "Every configuration considered" in (tmp_path / "P.md").read_text(encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text("[prices]\nx = 1\n", encoding="utf-8")
    args[args.index(prices)] = bad
    args[args.index(tmp_path / "p.json")] = tmp_path / "q.json"
    res = CliRunner().invoke(juge_main, [str(a) for a in args])
    assert res.exit_code == 2 and not (tmp_path / "q.json").exists()
    # --minute-price without --prices cannot count: the choice's warning is in the terminal too, not only the JSON.
    del args[args.index("--prices") : args.index("--prices") + 2]
    res = CliRunner().invoke(juge_main, [str(a) for a in [*args, "--minute-price", "0.5"]])
    choice = json.loads((tmp_path / "q.json").read_text(encoding="utf-8"))["cascade"]["choice"]
    assert res.exit_code == 0 and choice["cost_basis"] == "tokens" and choice["warning"]
    assert choice["warning"] in " ".join(res.output.split())


def test_a_panel_and_the_prefixes_are_configurations_too(sample_dir, tmp_path):
    """--panel both=... and a three-stage cascade chat-small -> both -> chat-strong: each judge alone (the panel
    as kind panel), the prefix chat-small -> both, the cascade; on holdout each routes as juge route would."""
    from juge.calibration.source import study_source

    source = study_source(
        items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl",
        panels="both=chat-small/pair-v2,chat-strong/pair-v2:unanimous",
    )  # fmt: skip
    policy = juge.policy.derive(
        source=source, cascade="chat-small,both,chat-strong", target=0.65, resamples=20, prices=PRICES
    )
    c = policy.cascade
    kinds = {r.name: r.kind for r in c.configurations}
    assert kinds == {"chat-small": "judge", "both": "panel", "chat-strong": "judge",
                     "chat-small → both": "prefix", "chat-small → both → chat-strong": "cascade"}  # fmt: skip
    panel = next(r for r in c.configurations if r.kind == "panel")
    assert panel.dev.cost.usd_per_item is not None and panel.dev.cost.unpriced_models == []  # its members' prices
    prefix = next(r for r in c.configurations if r.kind == "prefix")
    assert [s.name for s in prefix.stages] == ["chat-small", "both"] and len(prefix.dev.decided_by_stage) == 2
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy.to_dict()), encoding="utf-8")
    test = juge.policy.test(path, source=source, db=tmp_path / "j.db", resamples=20)
    rows = {r.name: r for r in test.cascade.configurations}
    assert list(rows) == list(kinds)
    assert rows["chat-small → both → chat-strong"].holdout.decided_by_stage == [
        s.n_decided for s in test.cascade.stages
    ]


def test_a_score_cascade_has_its_configurations_on_dev_and_holdout(tmp_path):
    """A score cascade quick -> grader (the study of test_cascade_grades' score cascade, every call 100 tokens in
    and 10 out) gets the pairwise one's configurations: each judge alone and the cascade, on dev at derive and on
    holdout at the test, priced with --prices at derive (kept in the policy). Per call: quick 100 x 1 + 10 x 2 =
    US$ 0.00012, grader 100 x 10 + 10 x 20 = US$ 0.0012 (per million tokens). Dev (72 items): quick decides 27
    answers items, grader 15 of the 15 quick leaves, advice's 30 go to a person (neither judge may decide them,
    so neither is called there): (42 x 0.00012 + 15 x 0.0012) / 72 = US$ 0.00032 an item; grader alone decides the
    42 answers items, all right, at 42 x 0.0012 / 72 = US$ 0.0007; quick alone 42 with 6 wrong (agreement 36/42).
    The cascade is within noise of grader and cheaper: chosen. Holdout (18): quick 9, grader 5, (14 x 0.00012 +
    5 x 0.0012) / 18 = US$ 0.000427. Before, a grade cascade had no configurations and --prices was refused."""
    from grade_data import SCORE_DEV, SCORE_HOLDOUT, write_study
    from test_cascade_grades import _quick, juge

    rows = [(c, labs, {**j, "tokens_in": 100, "tokens_out": 10}) for c, labs, j in SCORE_DEV + SCORE_HOLDOUT]
    write_study(tmp_path, rows)
    with (tmp_path / "judgments.jsonl").open("a") as f:
        f.write("".join(json.dumps(j) + "\n" for j in _quick(rows)))
    (tmp_path / "prices.toml").write_text(
        '[prices]\n"quick-2026" = { input = 1.0, output = 2.0 }\n"grader-2026-01" = { input = 10.0, output = 20.0 }\n'
    )
    study = ["--items", tmp_path / "items.jsonl", "--labels", tmp_path / "labels.jsonl",
             "--judgments", tmp_path / "judgments.jsonl", "--db", tmp_path / "j.db", "--resamples", "100"]  # fmt: skip
    res = juge("policy", "derive", *study, "--cascade", "quick,grader", "--target", "0.77", "--confidence", "0.8",
               "--margin", "0.5", "--prices", tmp_path / "prices.toml", "--minutes-per-label", "2",
               "--json", tmp_path / "p.json", "-o", tmp_path / "P.md")  # fmt: skip
    assert res.exit_code == 0, res.output
    c = json.loads((tmp_path / "p.json").read_text())["cascade"]
    rows_ = {r["name"]: r for r in c["configurations"]}
    assert list(rows_) == ["quick", "grader", "quick → grader"]
    assert [rows_[n]["kind"] for n in rows_] == ["judge", "judge", "cascade"]
    cascade, grader, quick = rows_["quick → grader"]["dev"], rows_["grader"]["dev"], rows_["quick"]["dev"]
    assert cascade["decided_by_stage"] == [27, 15] and cascade["n_person"] == 30 and cascade["cost"]["calls"] == 57
    assert cascade["cost"]["usd_per_item"] == pytest.approx((42 * 0.00012 + 15 * 0.0012) / 72)
    assert grader["n_decided"] == 42 and grader["cost"]["usd_per_item"] == pytest.approx(42 * 0.0012 / 72)
    assert grader["vs_majority"]["value"] == 1.0 and quick["vs_majority"]["value"] == pytest.approx(36 / 42)
    assert cascade["person_minutes_saved"] == 84 and cascade["minutes_per_label"] == 2
    assert c["choice"]["best"] == "grader" and c["choice"]["chosen"] == "quick → grader"
    assert c["choice"]["derive_with"] == "quick,grader" and c["prices"]["quick-2026"] == {"input": 1.0, "output": 2.0}
    assert "Every configuration considered, on dev" in (tmp_path / "P.md").read_text()
    res = juge("policy", "test", "--policy", tmp_path / "p.json", *study, "--json", tmp_path / "h.json")
    assert res.exit_code in (0, 1), res.output
    h = json.loads((tmp_path / "h.json").read_text())["cascade"]
    held = {r["name"]: r for r in h["configurations"]}
    assert held["quick → grader"]["holdout"]["decided_by_stage"] == [9, 5] and h["chosen"] == "quick → grader"
    assert held["quick → grader"]["holdout"]["cost"]["usd_per_item"] == pytest.approx((14 * 0.00012 + 5 * 0.0012) / 18)
    assert held["quick"]["holdout"]["vs_majority"]["value"] == pytest.approx(12 / 14)
    assert all(r["guarantee_held"] for r in held.values())
    # The report draws them as it draws a pairwise cascade's (the plot and its table, dev and holdout).
    assert juge("calibrate", *study[:6], "--json", tmp_path / "cal.json", "--resamples", "50").exit_code == 0
    for out in ("r.json", "r.html"):
        res = juge("report", tmp_path / "cal.json", "--policy", tmp_path / "p.json", "--policy-test",
                   tmp_path / "h.json", "-o", tmp_path / out)  # fmt: skip
        assert res.exit_code == 0, res.output
    drawn = json.loads((tmp_path / "r.json").read_text())["configurations"]
    assert [len(drawn["dev"]), len(drawn["holdout"]), drawn["choice"]["chosen"]] == [3, 3, "quick → grader"]
    assert '<svg role="img" aria-label="Configurations' in (tmp_path / "r.html").read_text()


def test_huge_minutes_or_minute_prices_are_refused_not_written_as_infinity(sample_dir):
    """1e308 minutes a label times the items decided is infinite: the policy file would hold Infinity (not JSON)."""
    common = {"items": sample_dir / "items.jsonl", "judgments": sample_dir / "judgments.jsonl", "resamples": 10}
    with pytest.raises(juge.InputError, match="--minutes-per-label"):
        juge.policy.derive(cascade="chat-small", minutes_per_label=1e308, **common)
    with pytest.raises(juge.InputError, match="--minute-price"):
        juge.policy.derive(cascade="chat-small", minute_price=1e308, **common)


def test_the_configurations_table_shows_the_missing_price_warning_whole(sample_dir, tmp_path):
    """The cost cell's warning names the [prices] table: printed as text, not read as Rich markup and dropped."""
    from typer.testing import CliRunner

    from cli_helpers import juge_main

    args = ["policy", "derive", "--items", sample_dir / "items.jsonl", "--judgments", sample_dir / "judgments.jsonl",
            "--cascade", "chat-small,chat-strong", "--target", "0.65", "--resamples", "100",
            "--json", tmp_path / "p.json", "-o", tmp_path / "P.md"]  # fmt: skip
    res = CliRunner().invoke(juge_main, [str(a) for a in args], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    assert "no US$" in res.output and "[prices]" in res.output


def test_a_bad_price_row_names_its_line(tmp_path):
    from juge.policy.cascade import read_prices

    path = tmp_path / "prices.toml"
    path.write_text('# prices\n\n[prices]\n"a" = { input = 0.1, output = 0.6 }\n"b" = { input = -1, output = 1 }\n')
    with pytest.raises(juge.InputError) as exc:
        read_prices(path)
    assert exc.value.line == 5 and exc.value.field == "prices.b.input"
