"""The policy file, its test, a routed item and the README's route example, as the CLI writes them: each validates
against its JSON Schema in docs/schema; a policy written before schema_version is tested, written back with its own
keys plus schema_version 1, and keeps its hash."""

from __future__ import annotations

import json
import shlex
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from cli_helpers import run_cli
from juge.policy.file import policy_hash, read_policy

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(str(files("juge") / "demo_data"))
SCHEMAS = ROOT / "docs" / "schema"


def validate(name: str, data: dict) -> None:
    jsonschema.validate(data, json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8")))


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("JUGE_HOME", str(tmp_path / "home"))  # this test's own holdout registry


def derive(monkeypatch, capsys, tmp_path: Path) -> Path:
    policy = tmp_path / "policy.json"
    code, out, err = run_cli(
        monkeypatch, capsys, "policy", "derive", "--items", str(DATA / "items.jsonl"),
        "--judgments", str(DATA / "judgments.jsonl"), "-o", str(tmp_path / "P.md"), "--json", str(policy),
        "--resamples", "100",
    )  # fmt: skip
    assert code == 0, err
    return policy


def test_derive_and_test_write_files_that_validate(monkeypatch, capsys, tmp_path, home):
    policy_path = derive(monkeypatch, capsys, tmp_path)
    policy = json.loads(policy_path.read_text())
    validate("policy", policy)
    assert policy["schema_version"] == 3 and policy["policy_hash"] == policy_hash(policy)
    with pytest.raises(jsonschema.ValidationError):  # the schema can fail: a category decision must be a word
        validate("policy", {**policy, "categories": {"coding": {"decision": 3, "reason": "x"}}})

    # A pairwise policy as juge wrote it before schema 2: no schema_version, no judge_kind, hashed without them.
    old = {k: v for k, v in policy.items() if k not in ("schema_version", "judge_kind", "policy_hash")}
    old["policy_hash"] = policy_hash(old)
    old_path = tmp_path / "old.json"
    old_path.write_text(json.dumps(old, indent=2))
    code, _, err = run_cli(
        monkeypatch, capsys, "policy", "test", "--policy", str(old_path), "--items", str(DATA / "items.jsonl"),
        "--judgments", str(DATA / "judgments.jsonl"), "--db", str(tmp_path / "j.db"), "--json",
        str(tmp_path / "h.json"), "--resamples", "100", "--no-fail",
    )  # fmt: skip
    assert code == 0, err
    test = json.loads((tmp_path / "h.json").read_text())
    validate("policy_test", test)
    written = json.loads(old_path.read_text())
    validate("policy", written)
    assert set(written) == set(old) | {"schema_version", "holdout_tests"} and written["schema_version"] == 1
    assert written["holdout_tests"][0]["test_id"] == test["test_id"]
    assert read_policy(old_path)["policy_hash"] == old["policy_hash"]  # still its hash: it reads back


def readme_route_command() -> list[str]:
    """The README's `juge route` line for one item with its recorded calls (step 3 of the policy section)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (line,) = [ln for ln in readme.splitlines() if ln.startswith("juge route --policy policy.json --item ")]
    return shlex.split(line.split("  #")[0])


def test_the_readmes_route_example_gives_the_judges_verdict(monkeypatch, capsys, tmp_path, home):
    derive(monkeypatch, capsys, tmp_path)
    args = [a.replace("$D", str(DATA)) for a in readme_route_command()[1:]]
    monkeypatch.chdir(ROOT)  # the README's paths (examples/route/...) are from the repository's root
    args = [str(tmp_path / a) if a == "policy.json" else a for a in args]
    code, out, err = run_cli(monkeypatch, capsys, *args, "--json", str(tmp_path / "r.json"))
    assert code == 0, err
    routed = json.loads((tmp_path / "r.json").read_text())
    validate("route", routed)
    (decision,) = routed["decisions"]
    # What the README prints under the command: the judge decides, answer 1 is better.
    assert (decision["route"], decision["verdict"], decision["category"]) == ("judge", "A", "writing")
    # An untested policy routes, with one note saying so (issue 23).
    assert routed["policy_status"] == "untested" and len(routed["notes"]) == 1 and out.startswith("judge")


def test_an_item_without_calls_goes_to_a_person_and_says_how_to_give_them(monkeypatch, capsys, tmp_path, home):
    derive(monkeypatch, capsys, tmp_path)
    item = ROOT / "examples" / "route" / "new-item.json"
    code, out, err = run_cli(
        monkeypatch, capsys, "route", "--policy", str(tmp_path / "policy.json"), "--item", str(item),
        "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert code == 0, err
    routed = json.loads((tmp_path / "r.json").read_text())
    validate("route", routed)
    assert routed["decisions"][0]["route"] == "person" and routed["decisions"][0]["verdict"] is None
    _untested, note = routed["notes"]  # the first says the policy is untested (issue 23)
    assert "--judgments" in note and "--eval" in note and note in " ".join(out.split()).replace("note: ", "")


def test_policy_test_of_a_file_from_python_records_the_test_in_it(tmp_path, monkeypatch, home):
    import juge
    from cli_helpers import tiny_pairwise_study

    options = tiny_pairwise_study(tmp_path)
    items, judgments, db = options[1], options[3], options[5]
    policy = juge.policy.derive(items=items, judgments=judgments, db=db, resamples=100)
    path = policy.save(tmp_path / "policy.json")
    with pytest.raises(juge.InputError, match="json_path"):  # nowhere to record it but the result
        juge.policy.test(policy, items=items, judgments=judgments, db=db, json_path=tmp_path / "h.json")
    test = juge.policy.test(
        str(path), items=items, judgments=judgments, db=db, resamples=100, json_path=tmp_path / "h.json"
    )
    reread = juge.PolicyResult.load(path)
    assert [t.test_id for t in reread.holdout_tests] == [test.test_id] and reread.policy_hash == policy.policy_hash
    assert json.loads((tmp_path / "h.json").read_text()) == test.to_dict()
    validate("policy_test", test.to_dict())
