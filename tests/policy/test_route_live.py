"""`juge route --eval`: the policy's judge is called live through the engine (against the mock server), one
decision per line as JSONL; a second run is served from the cache with zero calls; another model or template
version is refused before any call."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
from juge.store import Store
from juge.testing.mockserver import MockConfig, serve_in_thread

runner = CliRunner()
MODEL = "mock-judge-2026-01"


def juge(*args):
    return runner.invoke(app, [str(a) for a in args])


def write_eval(folder: Path, base_url: str, *, model: str = MODEL, description: str = "The answer is right.") -> Path:
    path = folder / f"eval-{model}-{len(description)}.toml"
    path.write_text(
        f"""name = "live-routing"
cases = "cases.jsonl"

[provider]
name = "openai"
options = {{ base_url = "{base_url}" }}

[[judges]]
name = "grader"
setup = "passfail"
model = "{model}"
description = "{description}"
"""
    )
    return path


def case(item_id: str, category: str, split: str | None = None) -> dict:
    row = {"id": item_id, "group": item_id, "category": category, "question": f"Question {item_id}?",
           "output": f"Answer {item_id}."}  # fmt: skip
    return row | ({"split": split} if split else {})


def test_live_routing_against_the_mock_server(tmp_path):
    db = tmp_path / "j.db"
    # 30 dev items per category: enough to decide (juge.policy.decision).
    dev = [case(f"d{k}", "easy" if k % 2 else "hard", "dev") for k in range(60)]
    held = [case(f"h{k}", "easy" if k % 2 else "hard", "holdout") for k in range(20)]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in dev + held))
    with serve_in_thread(MockConfig(latency=0.0)) as server:
        eval_file = write_eval(tmp_path, server.url)
        res = juge("run", eval_file, "--db", db, "--no-progress")
        assert res.exit_code == 0, res.output
        with Store(db) as store:
            (run,) = store.list_runs()
            verdicts = {j.item_id: j.verdict for j in store.judgments(run["id"])}
        # People agree with the judge on every easy item and with each other but against it on the hard ones.
        flip = {"PASS": "FAIL", "FAIL": "PASS"}
        labels = [
            {"item_id": i, "rater_id": r, "label": v if int(i[1:]) % 2 else flip[v]}
            for i, v in verdicts.items()
            for r in ("r1", "r2")
        ]
        (tmp_path / "labels.jsonl").write_text("".join(json.dumps(lab) + "\n" for lab in labels))
        res = juge("policy", "derive", "--run", run["id"], "--labels", tmp_path / "labels.jsonl", "--db", db,
                   "-o", tmp_path / "P.md", "--json", tmp_path / "policy.json", "--resamples", "200")  # fmt: skip
        assert res.exit_code == 0, res.output
        policy = json.loads((tmp_path / "policy.json").read_text())
        assert policy["judge_kind"] == "passfail"
        assert {c: r["decision"] for c, r in policy["categories"].items()} == {"easy": "judge", "hard": "person"}

        new = [case(f"n{k}", ["easy", "hard", "unseen"][k % 3]) for k in range(100)]
        (tmp_path / "new.jsonl").write_text("".join(json.dumps(c) + "\n" for c in new))
        before = server.stats()["requests"]
        route = ("route", "--policy", tmp_path / "policy.json", "--eval", eval_file, "--items", tmp_path / "new.jsonl",
                 "--db", db, "-o", tmp_path / "out.jsonl")  # fmt: skip
        res = juge(*route)
        assert res.exit_code == 0, res.output
        assert server.stats()["requests"] - before == 100  # one PASS/FAIL call per new item
        decisions = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
        assert len(decisions) == 100 and {d["item_id"] for d in decisions} == {c["id"] for c in new}
        by_category = {}
        for d in decisions:
            by_category.setdefault(d["category"], set()).add((d["route"], d["reason"]))
        assert by_category == {
            "easy": {("judge", "category")},
            "hard": {("person", "category")},
            "unseen": {("person", "category not calibrated")},
        }
        assert all(d["verdict"] in ("PASS", "FAIL") and d["passes"] is (d["verdict"] == "PASS")
                   for d in decisions if d["category"] != "unseen")  # fmt: skip

        # The same items again: every answer comes from the cache, the server sees nothing.
        first = (tmp_path / "out.jsonl").read_text()
        res = juge(*route)
        assert res.exit_code == 0, res.output
        assert server.stats()["requests"] - before == 100 and "0 calls" in res.output
        assert (tmp_path / "out.jsonl").read_text() == first
        # Routing runs say what they are: `juge runs` lists the eval's run alone, --all the route's too,
        # and a route run shows no pass rate (its cases pass or not by the policy, not a gate).
        import juge as api

        rows = api.list_runs(db=db, all_kinds=True)
        assert sorted(r.kind for r in rows) == ["eval", "route"]
        assert [(r.kind, r.run_id) for r in api.list_runs(db=db)] == [("eval", run["id"])]
        assert [r.pass_rate for r in rows if r.kind == "route"] == [None]

        # One item to stdout.
        (tmp_path / "one.json").write_text(json.dumps({**case("n1", "easy"), "item_id": "n1"}, indent=2))
        res = juge("route", "--policy", tmp_path / "policy.json", "--eval", eval_file, "--item", tmp_path / "one.json",
                   "--db", db)  # fmt: skip
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout.splitlines()[0])["item_id"] == "n1"

        # Another model, or another prompt (the rubric is part of the template hash): refused before any call.
        requests = server.stats()["requests"]
        for other in (write_eval(tmp_path, server.url, model="mock-judge-2027-01"),
                      write_eval(tmp_path, server.url, description="The answer is right and kind.")):  # fmt: skip
            res = juge("route", "--policy", tmp_path / "policy.json", "--eval", other, "--items",
                       tmp_path / "new.jsonl", "--db", db)  # fmt: skip
            assert res.exit_code == 2 and "derive a" in res.output, res.output
        assert server.stats()["requests"] == requests

        # A policy whose recorded holdout test did not hold: refused before any call, naming the test; --force
        # routes, says FORCED and records the use (issue 23).
        document = json.loads((tmp_path / "policy.json").read_text())
        document["holdout_tests"] = [{"test_id": "t" * 32, "used_at": "2026-12-01T00:00:00+00:00",
                                      "split": "holdout", "data_hash": "d" * 64, "n_items": 20, "forced": False,
                                      "held": False, "conclusion": "NOT HELD: not held in easy"}]  # fmt: skip
        (tmp_path / "policy.json").write_text(json.dumps(document))  # as `juge policy test` records it
        res = juge(*route)
        assert res.exit_code == 2 and "t" * 12 in res.output and server.stats()["requests"] == requests
        res = juge(*route, "--force", "--json", tmp_path / "forced.json")
        assert res.exit_code == 0 and "FORCED" in res.output, res.output
        forced = json.loads((tmp_path / "forced.json").read_text())
        assert forced["forced"] and forced["policy_status"] == "forced" and len(forced["decisions"]) == 100
        assert json.loads((tmp_path / "policy.json").read_text())["status"] == "forced"
