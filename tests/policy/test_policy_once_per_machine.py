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
from juge.policy.registry import (
    Registry,
    case_fingerprint,
    earlier_fingerprint,
    fingerprints_to_look_up,
    registry_path,
)

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


def disguised(text: str, k: int) -> str:
    """`text` as a reader sees it, with one of: a zero-width space, a Cyrillic look-alike, a trailing full stop."""
    if k % 3 == 0:
        return text[:1] + "\u200b" + text[1:]
    if k % 3 == 1 and "a" in text:
        return text.replace("a", "\u0430", 1)  # Cyrillic а
    return text + "."


@pytest.mark.parametrize("k", [0, 1, 2])
def test_an_invisible_look_alike_or_full_stop_change_does_not_make_another_item(k):
    single = Case(id="s", question="What is the capital of France?", output="Paris is the capital")
    pair = Case(id="p", question="Name a prime", output_1="Seven is a prime", output_2="Nine maybe")
    for case in (single, pair):
        fields = {
            f: disguised(getattr(case, f), k)
            for f in ("question", "output", "output_1", "output_2")
            if getattr(case, f)
        }
        assert case_fingerprint(case.model_copy(update=fields)) == case_fingerprint(case), fields
    assert case_fingerprint(single) != case_fingerprint(single.model_copy(update={"output": "Lyon is the capital"}))


def test_a_test_recorded_under_the_earlier_fingerprint_is_still_found(juge_home):
    cases = [Case(id=f"c{i}", question=f"Question {i}?", output=f"Answer {i}") for i in range(3)]
    with Registry() as registry:
        registry.record(
            test_id="old", policy_hash="p", split="holdout", data_hash="d", forced=False,
            fingerprints=[earlier_fingerprint(c) for c in cases], store=None,
        )  # fmt: skip
        assert registry.tests_sharing(case_fingerprint(c) for c in cases) == []
        (found,) = registry.tests_sharing(fingerprints_to_look_up(cases))
    assert found["test_id"] == "old" and found["shared_items"] == 3


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


@pytest.mark.slow
def test_a_disguised_copy_of_the_holdout_is_refused(tmp_path, monkeypatch, juge_home):
    """Each item's question and answers get a zero-width space, a Cyrillic look-alike or a trailing full stop
    (and new ids): the registry still knows them."""
    policy_file = tmp_path / "derived.json"
    res = juge(
        "policy", "derive", "--items", ITEMS, "--judgments", JUDGMENTS, "--db", tmp_path / "j.db",
        "-o", tmp_path / "P.md", "--json", policy_file, "--resamples", "200",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    policy = tmp_path / "policy.json"
    shutil.copy(policy_file, policy)
    (tmp_path / "first").mkdir()
    monkeypatch.chdir(tmp_path / "first")
    common = ("--resamples", "200", "--no-fail")
    res = juge("policy", "test", "--policy", policy, "--items", ITEMS, "--judgments", JUDGMENTS, *common)
    assert res.exit_code == 0, res.output
    items, judgments = renamed_copy(tmp_path / "copy")
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    for k, r in enumerate(rows):
        for field in ("question", "answer_1", "answer_2"):
            if isinstance(r.get(field), str):
                r[field] = disguised(r[field], k)
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    shutil.copy(policy_file, tmp_path / "copy" / "policy.json")  # a copy from before the test
    monkeypatch.chdir(tmp_path / "copy")
    res = juge("policy", "test", "--policy", "policy.json", "--items", items, "--judgments", judgments, *common)
    assert res.exit_code == 2, res.output
    assert "already tested" in res.output and "registry" in res.output
