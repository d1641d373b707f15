"""The embedded sample end to end from the CLI: `juge run` of its eval file replays the recorded judgments
(no model called); audit-sample reads that run; a policy derived from the run routes the example items live."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from test_policy_json_schemas import validate
from typer.testing import CliRunner

from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
from juge.store import Store

DATA = Path(str(files("juge") / "demo_data"))
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "route"
runner = CliRunner()


def juge(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_replay_run_of_the_sample_then_audit_and_live_route(tmp_path):
    db = tmp_path / "j.db"
    res = juge("run", DATA / "eval.toml", "--db", db, "--no-progress")
    assert res.exit_code == 0, res.output
    with Store(db) as store:
        (run,) = store.list_runs()
        calls = store.judgments(run["id"])
    recorded = [json.loads(line) for line in (DATA / "judgments.jsonl").read_text().splitlines()]
    plain = [r for r in recorded if r["prompt"] == "pair-v2"]
    assert len(calls) == len(plain) == 1280
    # Every stored verdict is the recorded letter (C is a tie), and an unparsed recording stays unparsed.
    letters = {(r["item_id"], r["judge"], r["order"]): r["letter"] for r in plain}
    for j in calls:
        want = letters[(j.item_id, j.judge, j.order)]
        assert j.verdict == want and (j.outcome == "ok") == (want is not None)

    policy = tmp_path / "policy.json"
    res = juge("policy", "derive", "--items", DATA / "items.jsonl", "--judgments", DATA / "judgments.jsonl",
               "--db", db, "-o", tmp_path / "P.md", "--json", policy, "--resamples", "200")  # fmt: skip
    assert res.exit_code == 0, res.output
    res = juge("audit-sample", "--policy", policy, "--run", run["id"], "--db", db, "-n", "5", "--seed", "3",
               "--json", tmp_path / "a.json")  # fmt: skip
    assert res.exit_code == 0, res.output
    audit = json.loads((tmp_path / "a.json").read_text())
    assert len(audit["sample"]) == 5 and audit["run_id"] == run["id"] and audit["seed"] == 3
    validate("audit_sample", audit)

    # A policy derived from the run carries juge's template hash, so the judge can be called on new items.
    live = tmp_path / "live.json"
    res = juge("policy", "derive", "--run", run["id"], "--items", DATA / "items.jsonl", "--db", db,
               "-o", tmp_path / "L.md", "--json", live, "--resamples", "200")  # fmt: skip
    assert res.exit_code == 0, res.output
    res = juge("route", "--policy", live, "--eval", DATA / "eval.toml", "--items", EXAMPLES / "new-items.jsonl",
               "--db", db, "-o", tmp_path / "out.jsonl", "--json", tmp_path / "r.json")  # fmt: skip
    assert res.exit_code == 0, res.output
    decisions = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    routed = json.loads((tmp_path / "r.json").read_text())
    validate("route", routed)
    assert routed["decisions"] == decisions and routed["calls"] + routed["cache_hits"] > 0
    n_items = len((EXAMPLES / "new-items.jsonl").read_text().splitlines())
    assert len(decisions) == n_items and all(d["route"] in ("judge", "person") for d in decisions)
    coding = next(d for d in decisions if d["category"] == "coding")
    assert (coding["route"], coding["reason"]) == ("person", "category")
    # The policy derived from the recorded file uses the reference prompt pair-math-v1 (not in the eval file) and
    # has no template hash: live routing with it is refused before any call.
    res = juge("route", "--policy", policy, "--eval", DATA / "eval.toml", "--item", EXAMPLES / "new-item.json",
               "--db", db)  # fmt: skip
    assert res.exit_code == 2 and "pair-math-v1" in res.output
