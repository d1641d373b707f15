"""A policy expires when its judge changes (issue 24): the one identity check (juge.judges.identity) refuses, in
`route --eval` and `audit-sample`, a judge that answers as another model version or whose judge file's rubric
changed (exit 2), unless --force, which the JSON records (identity.forced) and the output shows as FORCED."""

from __future__ import annotations

import json
from pathlib import Path

from test_route_endpoint import MODEL, case, no_keys, policy_from_a_run  # noqa: F401

from cli_helpers import run_cli, write_jsonl
from juge.judges.identity import JudgeIdentity, check_identity
from juge.judges.parsers import PARSER_VERSION
from juge.testing.mockserver import MockConfig, serve_in_thread

NEW_VERSION = "mock-judge-2026-06"


def write_eval(folder: Path, *, model: str, base_url: str) -> Path:
    """The policy's judge (as test_route_endpoint writes it) at ``base_url``."""
    path = folder / "eval-here.toml"
    path.write_text(
        f'name = "routing"\ncases = "cases.jsonl"\n[engine]\nretries = 0\n[provider]\nname = "openai"\n'
        f'options = {{ base_url = "{base_url}" }}\n[[judges]]\nname = "grader"\nsetup = "passfail"\n'
        f'model = "{model}"\ndescription = "The answer is right."\n'
    )
    return path


def test_check_identity_lists_each_part_that_moved():
    measured = JudgeIdentity(judge="g", template="t", provider="openai", models=["m-1"], template_hashes=["aaa"],
                             rubric_hashes=["r1"], parser_versions=["1"])  # fmt: skip
    same = check_identity(measured, measured.model_copy(update={"provider": None}))
    assert same.ok and "provider" in same.unchecked
    moved = check_identity(
        measured,
        measured.model_copy(update={"models": ["m-2"], "template_hashes": ["bbb"], "rubric_hashes": ["r2"]}),
    )
    assert [(m.field, m.expected, m.found) for m in moved.mismatches] == [
        ("model", ["m-1"], ["m-2"]), ("template_hash", ["aaa"], ["bbb"]), ("rubric_hash", ["r1"], ["r2"]),
    ]  # fmt: skip
    # A part the measured side does not record is not compared, unless required (nothing shows it is the same).
    bare = JudgeIdentity(judge="g", template="t", models=["m-1"])
    assert check_identity(bare, measured).ok
    required = check_identity(bare, measured, require=("model", "template_hash"))
    assert [(m.field, m.expected) for m in required.mismatches] == [("template_hash", [])]


def test_a_changed_judge_expires_the_policy(monkeypatch, capsys, tmp_path, no_keys):  # noqa: F811
    new = write_jsonl(tmp_path / "new.jsonl", [case(f"n{k}", ["easy", "hard"][k % 2]) for k in range(4)])
    db = str(tmp_path / "j.db")
    with serve_in_thread(MockConfig(latency=0.0)) as server:
        policy = policy_from_a_run(monkeypatch, capsys, tmp_path, server.url)
    route = ("route", "--policy", str(policy), "--items", str(new), "--db", db)
    with serve_in_thread(MockConfig(latency=0.0, answer_as=NEW_VERSION)) as moved:
        same_file = write_eval(tmp_path, model=MODEL, base_url=moved.url)
        # The judge file is the policy's, but the server answers as another version: refused after the calls.
        out_path = tmp_path / "r.json"
        code, out, err = run_cli(monkeypatch, capsys, *route, "--eval", str(same_file), "--json", str(out_path))
        assert code == 2 and NEW_VERSION in err and "EXPIRED" in err
        assert out == "" and not out_path.exists()
        code, out, err = run_cli(monkeypatch, capsys, *route, "--eval", str(same_file), "--json", str(out_path),
                                 "--force")  # fmt: skip
        assert code == 0, err
        routed = json.loads(out_path.read_text())
        assert routed["forced"] is True and "FORCED" in routed["warning"] and "FORCED" in err
        identity = routed["identity"]
        assert identity["expired"] is True and identity["forced"] is True
        moved_parts = [(m["field"], m["found"]) for c in identity["checks"] for m in c["mismatches"]]
        assert moved_parts == [("model", [NEW_VERSION])]
        assert len(routed["decisions"]) == 4 and any(d["route"] == "judge" for d in routed["decisions"])

        # The rubric changed in the judge file: refused before any call, naming the file's field.
        kinder = tmp_path / "kinder.toml"
        kinder.write_text(same_file.read_text().replace("The answer is right.", "The answer is right and kind."))
        before = moved.stats()["requests"]
        code, _, err = run_cli(monkeypatch, capsys, *route, "--eval", str(kinder))
        assert code == 2 and "template" in err and moved.stats()["requests"] == before

        # audit-sample on a run of the judge answered by the new version: refused, then FORCED and recorded.
        code, _, err = run_cli(monkeypatch, capsys, "run", str(same_file), "--db", db, "--no-progress", "--json",
                               str(tmp_path / "run2.json"))  # fmt: skip
        assert code == 0, err
    run2 = json.loads((tmp_path / "run2.json").read_text())["run_id"]
    audit = ("audit-sample", "--policy", str(policy), "--run", run2, "--db", db, "-n", "3", "--seed", "1")
    code, _, err = run_cli(monkeypatch, capsys, *audit, "--json", str(tmp_path / "a.json"))
    assert code == 2 and NEW_VERSION in err and not (tmp_path / "a.json").exists()
    code, out, err = run_cli(monkeypatch, capsys, *audit, "--json", str(tmp_path / "a.json"), "--force")
    assert code == 0, err
    sample = json.loads((tmp_path / "a.json").read_text())
    assert sample["forced"] is True and sample["identity"]["expired"] is True and "FORCED" in out
    assert [m["field"] for c in sample["identity"]["checks"] for m in c["mismatches"]] == ["model"]
    # The policy's own run is still its judge: audited without --force, nothing expired.
    run1 = json.loads((tmp_path / "run.json").read_text())["run_id"]
    code, _, err = run_cli(monkeypatch, capsys, "audit-sample", "--policy", str(policy), "--run", run1, "--db", db,
                           "-n", "3", "--json", str(tmp_path / "a1.json"))  # fmt: skip
    assert code == 0, err
    assert json.loads((tmp_path / "a1.json").read_text())["identity"]["expired"] is False

    # policy status: the newest run of the judge answered as the new version, so the policy has expired.
    status = ("policy", "status", str(policy), "--db", db)
    code, out, err = run_cli(monkeypatch, capsys, *status, "--json", str(tmp_path / "s.json"))
    assert code == 0, err
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["status"] == "expired" and report["expired"] is True and "EXPIRED" in out
    assert [m["field"] for c in report["identity_checks"] for m in c["mismatches"]] == ["model"]
    assert [i["models"] for i in report["identity"].values()] == [[MODEL]] and report["held"] is None
    assert any("juge drift" in step for step in report["next"])
    # Against the run it was derived from, it stands (untested); the changed rubric expires it again.
    code, _, err = run_cli(monkeypatch, capsys, *status, "--run", run1, "--json", str(tmp_path / "s1.json"))
    report = json.loads((tmp_path / "s1.json").read_text())
    assert code == 0 and (report["status"], report["expired"]) == ("untested", False)
    code, _, err = run_cli(monkeypatch, capsys, *status, "--run", run1, "--eval", str(kinder), "--json",
                           str(tmp_path / "s2.json"))  # fmt: skip
    report = json.loads((tmp_path / "s2.json").read_text())
    assert code == 0 and report["expired"] is True
    # A policy derived from a run keeps the provider, rubric and parser its config recorded: the rubric is named.
    assert {m["field"] for c in report["identity_checks"] for m in c["mismatches"]} == {"template_hash", "rubric_hash"}
    (recorded,) = json.loads(policy.read_text())["judges"].values()
    assert (recorded["provider"], recorded["parser_versions"], len(recorded["rubric_hashes"])) == (
        "openai",
        [str(PARSER_VERSION)],
        1,
    )


def test_status_without_evidence_leaves_expiry_unchecked(tmp_path, monkeypatch):
    import juge.api
    from juge.calibration.api import demo_path

    monkeypatch.chdir(tmp_path)  # no .juge/juge.db here
    policy = juge.api.policy_derive(
        items=demo_path("items.jsonl"), judgments=demo_path("judgments.jsonl"), resamples=100
    )
    policy.save(tmp_path / "p.json")
    report = juge.api.policy_status(tmp_path / "p.json")
    assert (report.status, report.expired, report.checked_against) == ("untested", None, [])
    assert report.identity and all(i.models for i in report.identity.values())
    assert any("policy test" in s for s in report.next) and any("--eval" in s for s in report.next)


def test_estimate_and_compare_against_a_policy_or_calibration(monkeypatch, capsys, tmp_path, no_keys):  # noqa: F811
    db = str(tmp_path / "j.db")
    with serve_in_thread(MockConfig(latency=0.0)) as server:
        policy = policy_from_a_run(monkeypatch, capsys, tmp_path, server.url)
    with serve_in_thread(MockConfig(latency=0.0, answer_as=NEW_VERSION)) as moved:
        code, _, err = run_cli(monkeypatch, capsys, "run", str(write_eval(tmp_path, model=MODEL, base_url=moved.url)),
                               "--db", db, "--no-progress", "--json", str(tmp_path / "run2.json"))  # fmt: skip
        assert code == 0, err
    run1 = json.loads((tmp_path / "run.json").read_text())["run_id"]
    run2 = json.loads((tmp_path / "run2.json").read_text())["run_id"]
    # A calibration records the judge under versions.judges.
    calibration = tmp_path / "cal.json"
    calibration.write_text(json.dumps({"schema_version": 1, "versions": {"judges": {
        "grader": {"judge": "grader", "template": None, "models": [MODEL]}}}}))  # fmt: skip
    labels = str(tmp_path / "labels.jsonl")
    for against in (policy, calibration):
        estimate = ("estimate", "--labels", labels, "--db", db, "--resamples", "200", "--against", str(against))
        code, _, err = run_cli(monkeypatch, capsys, *estimate, "--run", run1, "--json", str(tmp_path / "e1.json"))
        assert code == 0, err
        assert json.loads((tmp_path / "e1.json").read_text())["identity"]["expired"] is False
        code, _, err = run_cli(monkeypatch, capsys, *estimate, "--run", run2)
        assert code == 2 and NEW_VERSION in err and "EXPIRED" in err
        code, _, err = run_cli(monkeypatch, capsys, *estimate, "--run", run2, "--force", "--json",
                               str(tmp_path / "e2.json"))  # fmt: skip
        assert code == 0, err
        forced = json.loads((tmp_path / "e2.json").read_text())
        assert forced["identity"]["forced"] is True and forced["warnings"][0].startswith("FORCED")
        compare = ("compare", run1, run2, "--db", db, "--resamples", "200", "--allow-different-judges",
                   "--against", str(against))  # fmt: skip
        code, _, err = run_cli(monkeypatch, capsys, *compare)
        assert code == 2 and NEW_VERSION in err
        code, out, err = run_cli(monkeypatch, capsys, *compare, "--force", "--json", str(tmp_path / "c.json"))
        assert code == 0, err
        checks = json.loads((tmp_path / "c.json").read_text())["identity"]["checks"]
        assert [c["mismatches"] != [] for c in checks] == [False, True] and "FORCED" in out


def test_route_of_recorded_calls_from_another_version(monkeypatch, capsys, tmp_path, no_keys):  # noqa: F811
    with serve_in_thread(MockConfig(latency=0.0)) as server:
        policy = policy_from_a_run(monkeypatch, capsys, tmp_path, server.url)
    (judge,) = json.loads(policy.read_text())["judges"].values()
    call = {"judge": judge["judge"], "model": NEW_VERSION, "template": judge["template"],
            "template_hash": judge["template_hashes"][0], "outcome": "ok", "verdict": "PASS", "text": "PASS"}  # fmt: skip
    item = tmp_path / "item.json"
    item.write_text(json.dumps({**case("n1", "easy"), "item_id": "n1", "judgments": [call]}))
    route = ("route", "--policy", str(policy), "--item", str(item), "--json", str(tmp_path / "r.json"))
    code, _, err = run_cli(monkeypatch, capsys, *route)
    assert code == 2 and NEW_VERSION in err and not (tmp_path / "r.json").exists()
    code, out, err = run_cli(monkeypatch, capsys, *route, "--force")
    assert code == 0, err
    routed = json.loads((tmp_path / "r.json").read_text())
    assert routed["forced"] is True and routed["identity"]["expired"] is True and "FORCED" in out
    assert [(d["route"], d["verdict"]) for d in routed["decisions"]] == [("judge", "PASS")]
    # The policy's own version routes as before, with nothing forced.
    item.write_text(json.dumps({**case("n1", "easy"), "item_id": "n1", "judgments": [{**call, "model": MODEL}]}))
    code, _, err = run_cli(monkeypatch, capsys, *route)
    assert code == 0, err
    assert json.loads((tmp_path / "r.json").read_text())["identity"]["expired"] is False
