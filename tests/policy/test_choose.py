"""`juge policy derive --cascade ... --choose` (issue 25 item 3): the policy routes with the configuration chosen on
dev, keeping every configuration and the choice, so that `policy test` and `route` read one policy whose stages
are the chosen ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import juge
from cli_helpers import run_cli

PRICES_TOML = (
    '[prices]\n"gpt-6-luna" = { input = 0.15, output = 0.60 }\n"gpt-6.1-sol" = { input = 2.50, output = 10.00 }\n'
)


@pytest.fixture(scope="module")
def sample_dir() -> Path:
    from conftest import PACKAGED_SAMPLE, SHARED_SAMPLE

    return SHARED_SAMPLE if (SHARED_SAMPLE / "items.jsonl").exists() else PACKAGED_SAMPLE


def _derive(monkeypatch, capsys, sample_dir: Path, tmp_path: Path, name: str, *extra: str) -> tuple[int, str, str]:
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES_TOML, encoding="utf-8")
    return run_cli(
        monkeypatch, capsys, "policy", "derive", "--items", str(sample_dir / "items.jsonl"), "--judgments",
        str(sample_dir / "judgments.jsonl"), "--target", "0.65", "--resamples", "100", "--prices", str(prices),
        "--json", str(tmp_path / f"{name}.json"), "-o", str(tmp_path / f"{name}.md"), *extra,
    )  # fmt: skip


@pytest.mark.slow  # four derivations and a test on the sample: about 10 s
def test_choose_routes_with_the_chosen_configuration_and_policy_test_reports_it(
    monkeypatch, capsys, sample_dir, tmp_path
):
    """With the docs' prices chat-small alone is chosen among chat-small, chat-strong and the cascade: --choose
    makes it the policy's one stage (the same stage and threshold as deriving with --cascade chat-small), keeps
    the three configurations and the choice, and policy test routes the holdout with it."""
    code, out, err = _derive(monkeypatch, capsys, sample_dir, tmp_path, "given", "--cascade", "chat-small,chat-strong")
    assert code == 0, err
    given = json.loads((tmp_path / "given.json").read_text(encoding="utf-8"))["cascade"]
    assert [s["name"] for s in given["stages"]] == ["chat-small", "chat-strong"]
    assert given["choice"]["chosen"] == "chat-small" and given["choice"]["routes_with_choice"] is False
    assert out.rstrip().splitlines()[-1].endswith("add --choose (or derive with --cascade chat-small)")

    code, out, err = _derive(
        monkeypatch, capsys, sample_dir, tmp_path, "chosen", "--cascade", "chat-small,chat-strong", "--choose"
    )
    assert code == 0, err
    assert "add --choose" not in out
    policy = json.loads((tmp_path / "chosen.json").read_text(encoding="utf-8"))
    c = policy["cascade"]
    assert [s["name"] for s in c["stages"]] == ["chat-small"]
    assert c["configurations"] == given["configurations"]  # made on dev among the cascade as given
    assert c["choice"] == {**given["choice"], "routes_with_choice": True, "given": "chat-small,chat-strong"}
    assert {s["name"] for s in c["considered"]} == {"chat-strong"}
    chosen = next(r for r in c["configurations"] if r["chosen"])
    assert [s["threshold"] for s in chosen["stages"]] == [s["guarantee"]["threshold"] for s in c["stages"]]
    assert c["n_person"] == chosen["dev"]["n_person"]

    _derive(monkeypatch, capsys, sample_dir, tmp_path, "direct", "--cascade", "chat-small")
    direct = json.loads((tmp_path / "direct.json").read_text(encoding="utf-8"))
    assert direct["cascade"]["stages"] == c["stages"] and direct["categories"] == policy["categories"]

    code, out, err = run_cli(
        monkeypatch, capsys, "policy", "test", "--policy", str(tmp_path / "chosen.json"), "--items",
        str(sample_dir / "items.jsonl"), "--judgments", str(sample_dir / "judgments.jsonl"), "--db",
        str(tmp_path / "j.db"), "--resamples", "100", "--json", str(tmp_path / "test.json"),
    )  # fmt: skip
    assert code == 0, err
    h = json.loads((tmp_path / "test.json").read_text(encoding="utf-8"))["cascade"]
    assert [s["name"] for s in h["stages"]] == ["chat-small"] and h["chosen"] == "chat-small"
    rows = {r["name"]: r for r in h["configurations"]}
    assert list(rows) == ["chat-small", "chat-strong", "chat-small → chat-strong"]
    assert rows["chat-small"]["chosen"] and rows["chat-small"]["holdout"]["decided_by_stage"] == [
        s["n_decided"] for s in h["stages"]
    ]  # the policy routes the holdout as its chosen configuration does
    assert sum(s["n_decided"] for s in h["stages"]) + rows["chat-small"]["holdout"]["n_person"] == 165


def test_choose_follows_the_minute_price(sample_dir):
    """At US$ 0.5 a person-minute chat-strong is chosen: --choose makes it the policy's stage."""
    p = juge.policy.derive(
        items=sample_dir / "items.jsonl", judgments=sample_dir / "judgments.jsonl", cascade="chat-small,chat-strong",
        target=0.65, resamples=50, prices={"gpt-6-luna": {"input": 0.15, "output": 0.6},
                                           "gpt-6.1-sol": {"input": 2.5, "output": 10.0}},
        minute_price=0.5, choose=True,
    )  # fmt: skip
    c = p.cascade
    assert c.choice.chosen == "chat-strong" and [s.name for s in c.stages] == ["chat-strong"]
    assert c.choice.routes_with_choice and c.choice.given == "chat-small,chat-strong"
    assert [s.name for s in c.considered] == ["chat-small"]


def test_choose_needs_a_cascade(monkeypatch, capsys, sample_dir, tmp_path):
    code, _, err = _derive(monkeypatch, capsys, sample_dir, tmp_path, "p", "--choose")
    assert code == 2 and "--choose" in err and "--cascade" in err
    assert not (tmp_path / "p.json").exists() and not (tmp_path / "p.md").exists()


def test_choose_on_a_score_cascade(tmp_path):
    """A score cascade given as grader,quick: grader alone is chosen (the best on dev; grader → quick decides the
    same items at the same cost, and the tie goes to fewer stages); --choose routes with it and policy test
    measures all three configurations on holdout."""
    from grade_data import SCORE_DEV, SCORE_HOLDOUT, write_study
    from test_cascade_grades import _quick
    from test_cascade_grades import juge as run

    rows = [(c, labs, {**j, "tokens_in": 100, "tokens_out": 10}) for c, labs, j in SCORE_DEV + SCORE_HOLDOUT]
    write_study(tmp_path, rows)
    with (tmp_path / "judgments.jsonl").open("a") as f:
        f.write("".join(json.dumps(j) + "\n" for j in _quick(rows)))
    (tmp_path / "prices.toml").write_text(
        '[prices]\n"quick-2026" = { input = 1.0, output = 2.0 }\n"grader-2026-01" = { input = 10.0, output = 20.0 }\n'
    )
    study = ["--items", tmp_path / "items.jsonl", "--labels", tmp_path / "labels.jsonl",
             "--judgments", tmp_path / "judgments.jsonl", "--db", tmp_path / "j.db", "--resamples", "100"]  # fmt: skip
    res = run("policy", "derive", *study, "--cascade", "grader,quick", "--target", "0.77", "--confidence", "0.8",
              "--margin", "0.5", "--prices", tmp_path / "prices.toml", "--choose", "--json", tmp_path / "p.json",
              "-o", tmp_path / "P.md")  # fmt: skip
    assert res.exit_code == 0, res.output
    c = json.loads((tmp_path / "p.json").read_text())["cascade"]
    assert [s["name"] for s in c["stages"]] == ["grader"] and c["choice"]["given"] == "grader,quick"
    assert [r["name"] for r in c["configurations"]] == ["grader", "quick", "grader → quick"]
    res = run("policy", "test", "--policy", tmp_path / "p.json", *study, "--json", tmp_path / "h.json")
    assert res.exit_code in (0, 1), res.output
    h = json.loads((tmp_path / "h.json").read_text())["cascade"]
    held = {r["name"]: r for r in h["configurations"]}
    assert list(held) == ["grader", "quick", "grader → quick"] and held["grader"]["chosen"]
    assert held["grader"]["holdout"]["decided_by_stage"] == [s["n_decided"] for s in h["stages"]]
