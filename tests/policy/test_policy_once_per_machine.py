"""A holdout is tested once per machine: a fresh directory (a new store) or a renamed copy of the items (ids
prefixed, groups shifted, texts unchanged) is refused (exit 2) unless --force, which is recorded as FORCED in
the result, the store, the machine's registry and the policy file. And `policy test` concludes per category
whether the dev decision held."""

from __future__ import annotations

import json
import shutil
import sqlite3
from importlib.resources import files
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
from juge.data.records import Case
from juge.policy.registry import case_fingerprint, registry_path

DATA = Path(str(files("juge") / "demo_data"))
ITEMS, JUDGMENTS = DATA / "items.jsonl", DATA / "judgments.jsonl"
runner = CliRunner()


def juge(*args):
    return runner.invoke(app, [str(a) for a in args])


def renamed_copy(folder: Path) -> tuple[Path, Path]:
    """The sample under new ids and groups, texts unchanged."""
    folder.mkdir()
    items, judgments = folder / "items.jsonl", folder / "judgments.jsonl"
    rows = [json.loads(line) for line in ITEMS.read_text().splitlines()]
    for r in rows:
        r["item_id"], r["question_id"] = "copy-" + r["item_id"], r["question_id"] + 1000
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    calls = [json.loads(line) for line in JUDGMENTS.read_text().splitlines()]
    for c in calls:
        c["item_id"] = "copy-" + c["item_id"]
    judgments.write_text("".join(json.dumps(c) + "\n" for c in calls))
    return items, judgments


def test_fingerprint_reads_content_not_names():
    base = Case(id="a", group="1", question="What is  2+2?", output_1="Four.", output_2="4")
    assert case_fingerprint(base) == case_fingerprint(
        Case(id="zz", group="99", question=" what is 2+2?\n", output_1="4", output_2="FOUR.", reference="4")
    )
    assert case_fingerprint(base) != case_fingerprint(base.model_copy(update={"output_2": "5"}))
    single = Case(id="s", question="q", output="answer")
    assert case_fingerprint(single) != case_fingerprint(single.model_copy(update={"output": "other answer"}))


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("derive")
    res = juge(
        "policy", "derive", "--items", ITEMS, "--judgments", JUDGMENTS, "--db", folder / "j.db",
        "-o", folder / "P.md", "--json", folder / "policy.json", "--resamples", "200",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    return folder / "policy.json"


def test_once_per_machine_from_a_fresh_directory_and_a_renamed_copy(policy_file, tmp_path, monkeypatch, juge_home):
    untouched = tmp_path / "untouched-policy.json"  # a copy from before the test: only the registry remembers
    shutil.copy(policy_file, untouched)
    first_dir = tmp_path / "first"
    first_dir.mkdir()
    monkeypatch.chdir(first_dir)
    common = ("--resamples", "200", "--no-fail")  # the sample's policy does not hold; this test is about the ledger
    res = juge("policy", "test", "--policy", policy_file, "--items", ITEMS, "--judgments", JUDGMENTS,
               "--json", "h.json", *common)  # fmt: skip
    assert res.exit_code == 0, res.output
    result = json.loads((first_dir / "h.json").read_text())
    assert not result["forced"] and (first_dir / ".juge" / "juge.db").exists()
    assert registry_path().parent == juge_home and registry_path().exists()

    # The conclusion follows from the figures printed beside it: a category the judge decides holds exactly
    # when its holdout gap (judge vs person minus person vs person, as printed) is not below -margin.
    policy = json.loads(policy_file.read_text())
    for cat, block in result["per_category"].items():
        c = block["conclusion"]
        assert c["dev_decision"] == policy["categories"][cat]["decision"]
        gap = round(
            round(block["holdout_gap"]["vs_people"]["value"], 3) - round(block["holdout_gap"]["ceiling"]["value"], 3), 3
        )
        assert c["holdout_gap"] == gap
        assert c["held"] is (True if c["dev_decision"] == "person" else gap >= -policy["margin"])
    failed = sorted(c for c, b in result["per_category"].items() if b["conclusion"]["held"] is False)
    assert "extraction" in failed and result["conclusion"]["held"] is False
    assert all(f in result["conclusion"]["reason"] for f in failed)
    # The policy file records the test (its hash still checks) with one fingerprint per distinct item.
    written = json.loads(policy_file.read_text())
    (entry,) = written["holdout_tests"]
    assert entry["test_id"] == result["test_id"] and entry["held"] is False and not entry["forced"]
    assert len(entry["fingerprints"]) == len({case_fingerprint(c) for c in _holdout_cases()})

    # A fresh directory (a new store) with a copy of the policy from before the test: refused by the registry.
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    monkeypatch.chdir(fresh)
    res = juge("policy", "test", "--policy", untouched, "--items", ITEMS, "--judgments", JUDGMENTS, *common)
    assert res.exit_code == 2, res.output
    assert "already tested" in res.output and "registry" in res.output
    assert not (fresh / ".juge" / "juge.db").exists() or _store_uses(fresh / ".juge" / "juge.db") == 0

    # A renamed copy of the holdout (ids prefixed, groups shifted), in yet another directory: refused too.
    items, judgments = renamed_copy(tmp_path / "copy")
    monkeypatch.chdir(tmp_path / "copy")
    res = juge("policy", "test", "--policy", untouched, "--items", items, "--judgments", judgments, *common)
    assert res.exit_code == 2, res.output
    res = juge("policy", "test", "--policy", untouched, "--items", items, "--judgments", judgments, "--db", "other.db",
               "--force", "--json", "forced.json", *common)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "FORCED" in res.output
    forced = json.loads((tmp_path / "copy" / "forced.json").read_text())
    assert forced["forced"] and forced["previous_uses"][0]["test_id"] == result["test_id"]
    assert json.loads(untouched.read_text())["holdout_tests"][0]["forced"] is True
    with sqlite3.connect(registry_path()) as con:
        assert con.execute("SELECT forced FROM tests ORDER BY id").fetchall() == [(0,), (1,)]


def _holdout_cases():
    from juge.data.adapters import read_pairwise_items

    return [c for c in read_pairwise_items(ITEMS).cases if c.split == "holdout"]


def _store_uses(db: Path) -> int:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT COUNT(*) FROM holdout_uses").fetchone()[0]
