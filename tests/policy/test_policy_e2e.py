"""End to end on the MT-Bench sample: derive on dev, test once on holdout, route a new item, audit a run,
and a second holdout test is refused."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
from juge.data.adapters import read_pairwise_items, read_recorded_judgments
from juge.store import Store

DATA = Path(str(files("juge") / "demo_data"))
ITEMS, JUDGMENTS = DATA / "items.jsonl", DATA / "judgments.jsonl"
runner = CliRunner()


def juge(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def new_item_file(tmp_path: Path, item_id: str, *, break_order: str | None = None) -> Path:
    """A holdout item in the route layout: the item's fields plus its recorded calls under "judgments"."""
    row = next(json.loads(line) for line in ITEMS.read_text().splitlines() if json.loads(line)["item_id"] == item_id)
    calls = [json.loads(line) for line in JUDGMENTS.read_text().splitlines() if json.loads(line)["item_id"] == item_id]
    if break_order:
        for c in calls:
            if c["order"] == break_order:
                c.update(outcome="unparsed", letter=None)
    row["judgments"] = calls
    path = tmp_path / f"{item_id}.json"
    path.write_text(json.dumps(row, indent=2))
    return path


@pytest.fixture(scope="module")
def derived(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("policy")
    res = juge(
        "policy",
        "derive",
        "--items",
        ITEMS,
        "--judgments",
        JUDGMENTS,
        "--db",
        tmp / "j.db",
        "-o",
        tmp / "JUDGE_POLICY.md",
        "--json",
        tmp / "policy.json",
        "--resamples",
        "300",
    )
    assert res.exit_code == 0, res.output
    return tmp


def test_derive_writes_both_files_from_dev_only(derived):
    policy = json.loads((derived / "policy.json").read_text())
    assert policy["dev"]["split"] == "dev" and policy["dev"]["n_items"] == 155
    assert policy["judge"] in ("chat-strong/pair-v2", "chat-small/pair-v2")  # not a baseline
    assert set(policy["categories"]) == {
        "writing",
        "roleplay",
        "reasoning",
        "math",
        "coding",
        "extraction",
        "stem",
        "humanities",
    }
    for row in policy["categories"].values():
        decision_by_eye = (
            "judge"
            if round(row["vs_people"]["value"], 3) - round(row["ceiling"]["value"], 3) >= -0.05 - 1e-9
            else "person"
        )
        assert row["decision"] == decision_by_eye
    md = (derived / "JUDGE_POLICY.md").read_text()
    assert "must not be used for" in md and policy["policy_hash"][:16] in md


def test_holdout_once_route_audit_and_refusal(derived, tmp_path):
    db, policy_path = derived / "j.db", derived / "policy.json"
    first = juge(
        "policy",
        "test",
        "--policy",
        policy_path,
        "--items",
        ITEMS,
        "--judgments",
        JUDGMENTS,
        "--db",
        db,
        "--json",
        tmp_path / "test.json",
        "--resamples",
        "300",
    )
    # The sample's policy does not hold on its holdout (extraction): exit 1, status "not held" (issue 23).
    assert first.exit_code == 1, first.output
    result = json.loads((tmp_path / "test.json").read_text())
    assert result["status"] == "not held" and json.loads(policy_path.read_text())["status"] == "not held"
    assert result["n_items"] == 165 and not result["forced"]
    assert sum(result["decisions"].values()) == 165 and result["decisions"]["judge"] > 0
    assert result["decisions"].get("person: order changed the verdict", 0) > 0
    assert result["on_judged_items"]["vs_majority"]["agreement"]["value"] is not None
    with Store(db) as store:
        assert len(store.holdout_uses(result["data_hash"])) == 1

    # Route new items: one the judge decides, one whose orders disagree, one with an unparsed call.
    decisions = {d["item_id"]: d for d in result["items"]}
    judged = next(i for i, d in decisions.items() if d["route"] == "judge")
    flipped = next(i for i, d in decisions.items() if d["reason"] == "order changed the verdict")
    # A policy that did not hold is refused, naming its test; --force routes, FORCED and recorded.
    refused = juge("route", "--policy", policy_path, "--item", new_item_file(tmp_path, judged))
    assert refused.exit_code == 2 and result["test_id"][:12] in refused.output
    res = juge(
        "route", "--policy", policy_path, "--item", new_item_file(tmp_path, judged), "--json", tmp_path / "r.json",
        "--force",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    routed = json.loads((tmp_path / "r.json").read_text())  # a RouteResult: one decision for one --item
    assert res.output.startswith("FORCED") and routed["forced"] and routed["policy_status"] == "forced"
    assert [d["verdict"] in ("A", "B", "tie") for d in routed["decisions"]] == [True]
    assert [u["test_id"] for u in json.loads(policy_path.read_text())["forced_uses"]] == [result["test_id"]]
    res = juge("route", "--policy", policy_path, "--item", new_item_file(tmp_path, flipped), "--force")
    assert "person: order changed the verdict" in res.output
    res = juge("route", "--policy", policy_path, "--item", new_item_file(tmp_path, judged, break_order="21"), "--force")
    assert "person: refused/unparsed/missing" in res.output and "order 21: unparsed" in res.output

    # Audit sample from a stored run of the holdout items: only judge decisions, seeded.
    data = read_pairwise_items(ITEMS)
    holdout = [c for c in data.cases if c.split == "holdout"]
    ids = {c.id for c in holdout}
    with Store(db) as store:
        run_id = store.create_run(dataset_hash="demo", juge_version="test", cases=holdout, run_id="audit-run")
        for j in read_recorded_judgments(JUDGMENTS):
            if j.item_id in ids:
                store.save_judgment(run_id, j)
    samples = []
    for seed in ("1", "1", "2"):
        res = juge(
            "audit-sample",
            "--policy",
            policy_path,
            "--run",
            "audit-run",
            "-n",
            "5",
            "--seed",
            seed,
            "--db",
            db,
            "--json",
            tmp_path / "a.json",
            "--force",
        )
        assert res.exit_code == 0, res.output
        samples.append([s["item_id"] for s in json.loads((tmp_path / "a.json").read_text())["sample"]])
        assert all(decisions[i]["route"] == "judge" for i in samples[-1])
    assert len(samples[0]) == 5 and samples[0] == samples[1] and samples[0] != samples[2]

    # The second test of the same holdout is refused; a forced one is flagged and recorded.
    second = juge("policy", "test", "--policy", policy_path, "--items", ITEMS, "--judgments", JUDGMENTS, "--db", db)
    assert second.exit_code == 2 and "already tested" in second.output
    forced = juge(
        "policy",
        "test",
        "--policy",
        policy_path,
        "--items",
        ITEMS,
        "--judgments",
        JUDGMENTS,
        "--db",
        db,
        "--force",
        "--json",
        tmp_path / "forced.json",
        "--resamples",
        "200",
    )
    assert forced.exit_code == 1 and "FORCED" in forced.output  # forced, and NOT HELD again
    flagged = json.loads((tmp_path / "forced.json").read_text())
    assert flagged["forced"] and len(flagged["previous_uses"]) == 1
    with Store(db) as store:
        assert [u["forced"] for u in store.holdout_uses(result["data_hash"])] == [0, 1]


def test_policy_test_refuses_the_dev_split_and_other_model_versions(derived, tmp_path):
    res = juge(
        "policy",
        "test",
        "--policy",
        derived / "policy.json",
        "--items",
        ITEMS,
        "--judgments",
        JUDGMENTS,
        "--db",
        tmp_path / "other.db",
        "--split",
        "dev",
    )
    assert res.exit_code == 2 and "derived on" in res.output
    relabelled = tmp_path / "judgments.jsonl"
    relabelled.write_text(
        "".join(
            json.dumps({**json.loads(line), "model": "new-model-2027"}) + "\n"
            for line in JUDGMENTS.read_text().splitlines()
        )
    )
    res = juge(
        "policy",
        "test",
        "--policy",
        derived / "policy.json",
        "--items",
        ITEMS,
        "--judgments",
        relabelled,
        "--db",
        tmp_path / "other.db",
    )
    assert res.exit_code == 2 and "derive a new policy for this model" in res.output
    with Store(tmp_path / "other.db") as store:
        assert store.conn.execute("SELECT COUNT(*) FROM holdout_uses").fetchone()[0] == 0
