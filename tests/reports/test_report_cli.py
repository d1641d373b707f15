"""`juge report`: files it writes, errors it refuses with, disagreement examples, policy marks."""

from __future__ import annotations

import json

import pytest

import juge.reports as report
from cli_helpers import run_cli
from juge.reports.disagreements import disagreement_share, select_disagreements
from juge.results import Calibration
from report_helpers import assert_same_estimate, pairwise_calibration, parse_html, policy_routing


@pytest.fixture
def calibration_file(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(pairwise_calibration()), encoding="utf-8")
    return path


def test_writes_html_md_and_json_next_to_the_input(monkeypatch, capsys, calibration_file):
    for fmt, name in (("html", "calibration.html"), ("md", "calibration.md"), ("json", "calibration.report.json")):
        code, out, _ = run_cli(monkeypatch, capsys, "report", str(calibration_file), "--format", fmt)
        assert code == 0
        target = calibration_file.with_name(name)
        assert f"wrote {target}" in out
        assert target.stat().st_size > 1000
    html = calibration_file.with_name("calibration.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "gpt-6-luna-2026-09-22" in html
    assert json.loads(calibration_file.with_name("calibration.report.json").read_text())["n_items"] == 155
    assert sorted(p.name for p in calibration_file.parent.iterdir()) == [
        "calibration.html",
        "calibration.json",
        "calibration.md",
        "calibration.report.json",
    ]  # no temp files left


def test_without_format_the_output_suffix_chooses_it(monkeypatch, capsys, calibration_file):
    # As juge.report and juge export do: -o r.md is Markdown, -o r.json the JSON data, anything else HTML.
    for name, starts in (("r.md", "# "), ("r.json", "{"), ("r.html", "<!DOCTYPE html>"), ("r.htm", "<!DOCTYPE html>")):
        code, _, _ = run_cli(
            monkeypatch, capsys, "report", str(calibration_file), "-o", str(calibration_file.with_name(name))
        )
        assert code == 0
        assert calibration_file.with_name(name).read_text(encoding="utf-8").startswith(starts), name
    assert json.loads(calibration_file.with_name("r.json").read_text())["n_items"] == 155
    # --format still wins over the suffix
    code, _, _ = run_cli(
        monkeypatch,
        capsys,
        "report",
        str(calibration_file),
        "-o",
        str(calibration_file.with_name("x.md")),
        "--format",
        "html",
    )
    assert code == 0 and calibration_file.with_name("x.md").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ('{"split": "dev"}', (), "not a calibration result"),
        ('{\n  "judges": ,\n}', (), "calibration.json:2: malformed JSON"),
        ("[1, 2]", (), "expected a JSON object"),
        ("{}", ("--format", "pdf"), "--format must be one of html, md, json"),
        (None, ("-o", "SELF"), "would overwrite the calibration file"),
        (None, ("--policy", "MISSING"), "policy file not found"),
    ],
)
def test_bad_input_exits_2_with_file_and_line(monkeypatch, capsys, calibration_file, content, args, message):
    if content is not None:
        calibration_file.write_text(content, encoding="utf-8")
    args = tuple(
        str(calibration_file) if a == "SELF" else str(calibration_file.with_name("nope.json")) if a == "MISSING" else a
        for a in args
    )
    code, _, err = run_cli(monkeypatch, capsys, "report", str(calibration_file), *args)
    assert code == 2
    assert message in " ".join(err.split())


@pytest.mark.parametrize("which", ["calibration", "policy"])
def test_a_value_of_the_wrong_type_exits_2_naming_file_and_field(
    monkeypatch, capsys, calibration_file, tmp_path, which
):
    calibration = pairwise_calibration()
    policy = policy_routing({"math": "person"})
    if which == "calibration":
        calibration["judges"]["gpt4_2023"]["vs_people"]["kappa"] = {"value": [0.4], "n": 3}
    else:
        policy["categories"]["math"]["decision"] = "maybe"
    calibration_file.write_text(json.dumps(calibration), encoding="utf-8")
    policy_file = tmp_path / "policy.json"
    policy_file.write_text(json.dumps(policy), encoding="utf-8")
    out_path = tmp_path / "r.html"
    code, _, err = run_cli(
        monkeypatch, capsys, "report", str(calibration_file), "--policy", str(policy_file), "-o", str(out_path)
    )
    assert code == 2 and not out_path.exists()
    field = "judges.gpt4_2023.vs_people.kappa.value" if which == "calibration" else "categories.math.decision"
    where = str(calibration_file if which == "calibration" else policy_file)
    assert f"{where}: field '{field}'" in " ".join(err.split())


def test_a_failed_render_leaves_the_previous_report_untouched(monkeypatch, tmp_path):
    target = tmp_path / "report.html"
    target.write_text("previous report", encoding="utf-8")

    def broken(data, fmt="html"):
        raise RuntimeError("renderer failed")

    monkeypatch.setattr("juge.reports.write.render_report", broken)
    with pytest.raises(RuntimeError):
        report.write_report(pairwise_calibration(), target)
    assert target.read_text(encoding="utf-8") == "previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_disagreements_are_ranked_by_share_of_votes_against_the_judge():
    # Hand-worked: A vs votes {A:1,B:1} -> 1/2; A vs {B:3} -> 3/3; inconsistent (= tie) vs {A:1,B:2} -> 3/3;
    # B vs {A:2} -> 2/2. Ties on the share go to the item with more votes, then the id.
    cards = select_disagreements(Calibration.model_validate(pairwise_calibration()), top=3)
    assert [(c["item_id"], c["disagreement"]) for c in cards] == [
        ("item-all", 1.0),
        ("item-two-thirds", 1.0),
        ("item-all-small", 1.0),
    ]
    assert {c["judge"] for c in cards} == {"chat-small/pair-v2"}
    assert [t["order"] for t in cards[0]["judge_texts"]] == ["12", "21"]
    # Each order's letter is read back into the fixed order for the card (B in order 21 is answer 1).
    fixed = {
        "12": {"A": "answer 1 better", "B": "answer 2 better"},
        "21": {"A": "answer 2 better", "B": "answer 1 better"},
    }
    assert all(t["means"] == fixed[t["order"]].get(t["letter"]) for c in cards for t in c["judge_texts"])
    assert disagreement_share("A", {"A": 1, "B": 1, "tie": 0}) == 0.5
    assert disagreement_share("inconsistent", {"A": 1, "B": 0, "tie": 3}) == 0.25
    assert disagreement_share(None, {"A": 1}) is None


def test_items_file_adds_question_answers_and_rater_votes(monkeypatch, capsys, calibration_file, tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps(
            {
                "item_id": "item-all",
                "question": "Which is the capital of France?",
                "answer_1": "Paris.",
                "answer_2": "Lyon.",
                "category": "writing",
                "human_ratings": [{"rater_id": "expert_7", "label": "B"}, {"rater_id": "author_1", "label": "B"}],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    out_path = tmp_path / "r.html"
    code, _, _ = run_cli(
        monkeypatch, capsys, "report", str(calibration_file), "--items", str(items), "-o", str(out_path), "--top", "1"
    )
    assert code == 0
    html = out_path.read_text(encoding="utf-8")
    card = html.split('data-item="item-all"')[1].split("</article>")[0]
    for text in (
        "Which is the capital of France?",
        "Paris.",
        "Lyon.",
        "expert_7",
        "order 12: reasoning [[A]]",
        "order 21: reasoning [[B]]",
    ):
        assert text in card
    assert html.count("<article") == 1  # --top 1, one judge with disagreements


def test_policy_and_policy_test_from_the_policy_commands(monkeypatch, capsys, calibration_file, tmp_path):
    # The shapes `juge policy derive --json` and `juge policy test --json` write.
    policy = {
        "kind": "juge-policy",
        "judge": "chat-strong/pair-v2",
        "rule": "margin",
        "margin": 0.05,
        "policy_hash": "cc67",
        "categories": {
            "coding": {
                "template": "chat-strong/pair-v2",
                "decision": "person",
                "reason": "gap -0.156",
                "vs_people": {"value": 0.66, "low": 0.458, "high": 0.851, "n": 50},
                "ceiling": {"value": 0.816, "low": 0.683, "high": 0.971, "n": 38},
                "difference": {"value": -0.156, "low": -0.323, "high": -0.029, "n": 38},
            },
            "math": {"template": "chat-strong/pair-math-v1", "decision": "judge", "reason": "within"},
        },
    }
    test = {
        "kind": "juge-policy-test",
        "policy_hash": "ffff",
        "split": "holdout",
        "forced": True,
        "warning": "FORCED: this holdout was already tested 1 time(s)",
        "data_hash": "d1",
        "previous_uses": [{"used_at": "2026-11-01T00:00:00Z", "policy_hash": "ffff", "forced": False}],
        "decisions": {"judge": 139, "person: category": 17},
        "n_items": 165,
        "judge_decides": {"value": 0.842, "low": 0.788, "high": 0.897, "n": 165},
        "on_judged_items": {
            "vs_people": {"agreement": {"value": 0.673, "low": 0.605, "high": 0.732, "n": 367}},
            "ceiling": {"value": 0.657, "low": 0.563, "high": 0.741, "n": 364},
        },
        "per_category": {},
    }
    (tmp_path / "policy.json").write_text(json.dumps(policy), encoding="utf-8")
    (tmp_path / "test.json").write_text(json.dumps(test), encoding="utf-8")
    out_path = tmp_path / "r.html"
    code, _, _ = run_cli(
        monkeypatch,
        capsys,
        "report",
        str(calibration_file),
        "-o",
        str(out_path),
        "--policy",
        str(tmp_path / "policy.json"),
        "--policy-test",
        str(tmp_path / "test.json"),
    )
    assert code == 0
    html = out_path.read_text(encoding="utf-8")
    tables = parse_html(html).tables
    cats = {r[0]: r for r in tables["table-categories"][1:]}
    assert cats["coding"][1] == "to a person" and cats["math"][1] == "judge" and cats["writing"][1] == "not in policy"
    assert "→ person · coding" in html  # marked in the per-category plot
    policy_rows = {r[0]: r for r in tables["table-policy"][1:]}
    assert_same_estimate(policy_rows["coding"][5], policy["categories"]["coding"]["difference"])
    overall = tables["table-policy-test"][1]
    assert overall[:2] == ["all categories", "165"]
    assert_same_estimate(overall[2], test["judge_decides"])
    assert_same_estimate(overall[3], test["on_judged_items"]["vs_people"]["agreement"])
    assert "FORCED: this holdout was already tested" in html
    assert "different policy" in html  # the test's policy hash is not the policy shown


@pytest.mark.parametrize(
    ("path", "value"),
    [(("ceiling", "agreement", "value"), "abc"), (("n_items",), "many"), (("ceiling", "kappa", "n"), [1])],
)
def test_a_figure_of_the_wrong_type_is_refused_not_shown_as_not_available(
    monkeypatch, capsys, calibration_file, path, value
):
    data = json.loads(calibration_file.read_text(encoding="utf-8"))
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    calibration_file.write_text(json.dumps(data), encoding="utf-8")
    out = calibration_file.with_name("g.html")
    code, _, err = run_cli(monkeypatch, capsys, "report", str(calibration_file), "-o", str(out))
    assert code == 2 and not out.exists()
    message = " ".join(err.split())
    assert str(calibration_file.name) in message and ".".join(path) in message
