"""Issue 23, items 1-2: one decision per category (judge / person / too few items -> person) that the policy JSON,
JUDGE_POLICY.md, routing and old policy files all agree on; a policy's status, and route / audit-sample refusing
a policy that did not hold unless --force (recorded); `policy test` exits 1 when NOT HELD unless --no-fail."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from grade_data import DEV_COPIES, PASSFAIL_HOLDOUT, SCORE_DEV, rows, write_study
from test_policy_thin_data import calls, item
from typer.testing import CliRunner

from cli_helpers import juge_main as app  # through juge.cli.main: an input error exits 2
from cli_helpers import write_jsonl
from juge.data.records import Case, Judgment
from juge.policy.derivation import policy_hash, policy_markdown
from juge.results import PolicyResult
from juge.store import Store

MODEL, HASH = "grader-2026-01", "abc123def456"


def juge(*args):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "300"})


# PASS/FAIL dev: billing as grade_data.py's (its figures give it to the judge) but written once: 10 items, too
# few to decide; refunds and shipping three times (enough items).
THIN_BILLING = (
    rows("dev", "billing", [(4, ("FAIL", "FAIL", "FAIL")), (5, ("PASS", "PASS", "PASS")), (1, ("PASS", "FAIL", "FAIL"))])
    + rows("dev", "shipping", [(2, ("FAIL", "FAIL", "FAIL")), (2, ("FAIL", "PASS", "PASS")), (6, ("PASS", "PASS", "PASS"))],
           DEV_COPIES)
    + rows("dev", "refunds", [(3, ("FAIL", "FAIL", "FAIL")), (1, ("FAIL", "FAIL", "PASS")), (4, ("PASS", "PASS", "PASS")),
                              (2, ("FAIL", "PASS", "PASS"))], DEV_COPIES)
)  # fmt: skip


# billing alone, three times (enough items): the judge decides it on dev, and it does NOT HOLD on holdout.
BILLING = rows("dev", "billing", [(4, ("FAIL", "FAIL", "FAIL")), (5, ("PASS", "PASS", "PASS")),
                                  (1, ("PASS", "FAIL", "FAIL"))], DEV_COPIES)  # fmt: skip


def derive(folder: Path, *extra) -> dict:
    res = juge("policy", "derive", *extra, "--db", folder / "j.db", "-o", folder / "P.md", "--json",
               folder / "policy.json", "--resamples", "100")  # fmt: skip
    assert res.exit_code == 0, res.output
    return json.loads((folder / "policy.json").read_text())


def derive_grades(folder: Path, study_rows: list) -> dict:
    items, labels, judgments = write_study(folder, study_rows)
    return derive(folder, "--items", items, "--labels", labels, "--judgments", judgments)


def in_short(md: str) -> tuple[set[str], set[str]]:
    """The categories JUDGE_POLICY.md's "In short" gives to the judge and to a person."""
    short = md.split("## In short", 1)[1].split("\n## ", 1)[0]

    def listed(prefix: str) -> set[str]:
        found = re.search(rf"^- {prefix}: (.*)\.$", short, re.MULTILINE)
        assert found, prefix
        return set() if found.group(1) == "no category" else set(found.group(1).split(", "))

    return listed("The judge decides alone in"), listed("A person decides in")


def table_decisions(md: str, categories) -> dict[str, str]:
    """Each category's decision as the Markdown table shows it (the bold word in its row)."""
    out = {}
    for c in categories:
        row = next(line for line in md.splitlines() if line.startswith(f"| {c} |"))
        out[c] = re.search(r"\*\*(judge|person)\*\*", row).group(1)  # type: ignore[union-attr]
    return out


def agree(folder: Path, policy: dict) -> None:
    """The JSON, the Markdown's "In short" and its table say the same for every category."""
    md = (folder / "P.md").read_text()
    decisions = {c: r["decision"] for c, r in policy["categories"].items()}
    judge, person = in_short(md)
    assert judge == {c for c, d in decisions.items() if d == "judge"}
    assert person == {c for c, d in decisions.items() if d == "person"}
    assert table_decisions(md, decisions) == decisions
    # and PolicyResult.decision, the object route and the report read
    typed = PolicyResult.load(folder / "policy.json")
    assert {c: d.route for c, d in typed.decisions.items()} == decisions


def route_item_file(folder: Path, category: str, verdict: str = "PASS") -> Path:
    path = folder / f"new-{category}.json"
    call = {"judge": "grader", "model": MODEL, "template": "tpl", "template_hash": HASH, "outcome": "ok",
            "verdict": verdict, "text": verdict}  # fmt: skip
    path.write_text(json.dumps({"item_id": f"n-{category}", "category": category, "question": "Q?", "output": "A.",
                                "judgments": [call]}))  # fmt: skip
    return path


def route(folder: Path, category: str, *extra, policy: Path | None = None):
    out = folder / "r.json"
    out.unlink(missing_ok=True)
    res = juge("route", "--policy", policy or folder / "policy.json", "--item", route_item_file(folder, category),
               "--json", out, *extra)  # fmt: skip
    return res, (json.loads(out.read_text()) if out.exists() else None)


def test_a_thin_passfail_category_is_a_person_in_the_json_the_markdown_and_routing(tmp_path):
    policy = derive_grades(tmp_path, THIN_BILLING)
    billing = policy["categories"]["billing"]
    assert (billing["decision"], billing["ruling"], billing["by_figures"]) == ("person", "too_few", "judge")
    assert billing["too_few"] and policy["categories"]["shipping"]["decision"] == "judge"
    assert policy["status"] == "untested" and policy["schema_version"] == 3
    agree(tmp_path, policy)
    res, routed = route(tmp_path, "billing")
    assert res.exit_code == 0, res.output
    (decision,) = routed["decisions"]
    assert (decision["route"], decision["reason"]) == ("person", "too few items to decide")
    # An untested policy routes, with a note, and says so in a typed field.
    assert routed["policy_status"] == "untested" and not routed["forced"] and len(routed["notes"]) == 1
    res, routed = route(tmp_path, "shipping")
    assert res.exit_code == 0 and routed["decisions"][0]["route"] == "judge"


def test_a_thin_pairwise_category_is_a_person_everywhere(tmp_path):
    spec = [item(k, "big") for k in range(40)] + [item(k, "small") for k in range(4)]
    items = write_jsonl(tmp_path / "items.jsonl", spec)
    judgments = write_jsonl(tmp_path / "j.jsonl", calls(spec))
    policy = derive(tmp_path, "--items", items, "--judgments", judgments)
    assert policy["categories"]["small"]["decision"] == "person" and policy["categories"]["big"]["decision"] == "judge"
    agree(tmp_path, policy)
    new = tmp_path / "new.json"
    calls_of_new = [{k: v for k, v in c.items() if k != "item_id"} for c in calls([{"item_id": "n"}])]
    new.write_text(json.dumps({"item_id": "n", "category": "small", "question": "q", "answer_1": "a",
                               "answer_2": "bb", "judgments": calls_of_new}))  # fmt: skip
    res = juge("route", "--policy", tmp_path / "policy.json", "--item", new, "--json", tmp_path / "r.json")
    assert res.exit_code == 0, res.output
    (decision,) = json.loads((tmp_path / "r.json").read_text())["decisions"]
    assert (decision["route"], decision["reason"]) == ("person", "too few items to decide")


def test_a_score_policys_markdown_agrees_with_its_json(tmp_path):
    thin = rows("dev", "tips", [(3, (4, 4, 4)), (2, (2, 2, 2))])  # 5 items: too few
    policy = derive_grades(tmp_path, SCORE_DEV + thin)
    assert policy["judge_kind"] == "score" and policy["categories"]["tips"]["ruling"] == "too_few"
    assert {r["decision"] for r in policy["categories"].values()} == {"judge", "person"}
    agree(tmp_path, policy)


def old_shape(policy: dict) -> dict:
    """A policy as juge wrote it before issue 23 (schema 2): the figures' decision in `decision`, no ruling, no
    by_figures, no status; hashed as juge hashed it then."""
    old = {k: v for k, v in policy.items() if k not in ("status", "forced_uses", "policy_hash")}
    old["schema_version"] = 2
    old["categories"] = {
        c: {**{k: v for k, v in r.items() if k not in ("ruling", "by_figures")}, "decision": r["by_figures"]}
        for c, r in policy["categories"].items()
    }
    old["policy_hash"] = policy_hash(old)
    return old


def test_an_old_policy_file_loads_and_its_thin_category_goes_to_a_person(tmp_path):
    policy = derive_grades(tmp_path, THIN_BILLING)
    old = old_shape(policy)
    assert old["categories"]["billing"]["decision"] == "judge" and old["categories"]["billing"]["too_few"]
    old_path = tmp_path / "old-policy.json"
    old_path.write_text(json.dumps(old, indent=2))
    typed = PolicyResult.load(old_path)
    assert typed.decision("billing").ruling == "too_few" and not typed.judge_decides("billing")  # type: ignore[union-attr]
    assert typed.status == "untested" and typed.to_dict() == old  # written back as it was read
    judge, person = in_short(policy_markdown(typed))
    assert "billing" in person and "billing" not in judge
    res, routed = route(tmp_path, "billing", policy=old_path)
    assert res.exit_code == 0, res.output
    assert routed["decisions"][0]["route"] == "person"


@pytest.fixture
def not_held(tmp_path):
    """A PASS/FAIL policy whose holdout test did NOT HOLD (billing, as in grade_data.py), and the test's exit."""
    items, labels, judgments = write_study(tmp_path, BILLING + PASSFAIL_HOLDOUT)
    derive(tmp_path, "--items", items, "--labels", labels, "--judgments", judgments)
    res = juge("policy", "test", "--policy", tmp_path / "policy.json", "--items", items, "--labels", labels,
               "--judgments", judgments, "--db", tmp_path / "j.db", "--json", tmp_path / "h.json",
               "--resamples", "100")  # fmt: skip
    return tmp_path, res


def test_policy_test_exits_1_when_not_held_and_records_the_status(not_held):
    folder, res = not_held
    assert res.exit_code == 1, res.output
    test = json.loads((folder / "h.json").read_text())
    assert test["conclusion"]["held"] is False and test["status"] == "not held"
    assert json.loads((folder / "policy.json").read_text())["status"] == "not held"


def test_no_fail_exits_0_when_not_held(tmp_path):
    items, labels, judgments = write_study(tmp_path, BILLING + PASSFAIL_HOLDOUT)
    derive(tmp_path, "--items", items, "--labels", labels, "--judgments", judgments)
    res = juge("policy", "test", "--policy", tmp_path / "policy.json", "--items", items, "--labels", labels,
               "--judgments", judgments, "--db", tmp_path / "j.db", "--json", tmp_path / "h.json",
               "--resamples", "100", "--no-fail")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "h.json").read_text())["status"] == "not held"


def test_route_refuses_a_policy_that_did_not_hold_unless_forced_and_records_the_force(not_held):
    folder, _ = not_held
    test_id = json.loads((folder / "h.json").read_text())["test_id"]
    res, routed = route(folder, "billing")
    assert res.exit_code == 2 and routed is None
    assert test_id[:12] in res.output and "holdout" in res.output  # names the test: which one, which split
    assert "forced_uses" not in json.loads((folder / "policy.json").read_text())  # nothing recorded on a refusal

    res, routed = route(folder, "billing", "--force")
    assert res.exit_code == 0 and res.output.startswith("FORCED"), res.output
    assert routed["forced"] and routed["policy_status"] == "forced" and routed["warning"].startswith("FORCED")
    saved = json.loads((folder / "policy.json").read_text())
    assert saved["status"] == "forced" and [u["test_id"] for u in saved["forced_uses"]] == [test_id]
    assert PolicyResult.load(folder / "policy.json").status == "forced"  # the hash still holds

    res, _ = route(folder, "billing")  # every use needs --force
    assert res.exit_code == 2


def test_audit_sample_refuses_a_policy_that_did_not_hold_unless_forced(not_held):
    folder, _ = not_held
    with Store(folder / "runs.db") as store:
        store.create_run(dataset_hash="h", juge_version="t", run_id="r",
                         cases=[Case(id=f"c{k}", category="billing", question="q", output="o") for k in range(3)])  # fmt: skip
        for k in range(3):
            store.save_judgment("r", Judgment(item_id=f"c{k}", judge="grader", model=MODEL, template="tpl",
                                              template_hash=HASH, text="PASS", verdict="PASS", outcome="ok"))  # fmt: skip
    audit = ("audit-sample", "--policy", folder / "policy.json", "--run", "r", "--db", folder / "runs.db", "--seed",
             "1", "--json", folder / "a.json")  # fmt: skip
    res = juge(*audit)
    assert res.exit_code == 2 and not (folder / "a.json").exists()
    res = juge(*audit, "--force")
    assert res.exit_code == 0, res.output
    sample = json.loads((folder / "a.json").read_text())
    assert sample["forced"] and sample["policy_status"] == "forced" and len(sample["sample"]) == 3


def test_the_report_routes_an_old_files_thin_category_to_a_person():
    from juge.reports.model import build_report_data
    from report_helpers import pairwise_calibration, policy_routing

    old = policy_routing({"writing": "judge", "math": "judge"})  # written before issue 23: a thin category said judge
    old["categories"]["math"]["too_few"] = "4 judged items (< 10)"
    data = build_report_data(pairwise_calibration(), policy=old)
    assert data["policy"]["routes"] == {"writing": "judge", "math": "person"}
    math = next(c for c in data["policy"]["categories"] if c["name"] == "math")
    assert "4 judged items (< 10)" in math["reason"]
    assert data["policy"]["settings"]["status"] == "untested"


def test_judge_policy_md_shows_a_category_s_control_characters_instead_of_keeping_them(tmp_path, sample_dir):
    """A category is data: ESC [2J and U+202E in it reached JUDGE_POLICY.md as they were (cat clears the screen)."""
    import juge

    items = tmp_path / "items.jsonl"
    with items.open("w", encoding="utf-8") as out:
        for line in (sample_dir / "items.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("category") == "writing":
                row["category"] = "wri\u202eting\x1b[2J"
            out.write(json.dumps(row) + "\n")
    policy = juge.policy.derive(items=items, judgments=sample_dir / "judgments.jsonl", resamples=100)
    text = policy_markdown(policy)
    assert "\x1b" not in text and "\u202e" not in text and "wri⟨U+202E⟩ting⟨U+001B⟩[2J" in text
