"""`juge init`: each kind gives a project that `juge run` runs offline, with a rubric `juge label`
reads, and whose stand-in judge misses exactly the flaws of its blind-spot category."""

from __future__ import annotations

import json
import re

import pytest

from cli_helpers import run_cli
from juge.label.rubric import read_rubric
from juge.scaffold import BLIND_SPOT, KINDS, starter_cases


@pytest.mark.parametrize("kind", KINDS)
def test_init_then_run_offline(tmp_path, monkeypatch, capsys, kind):
    project = tmp_path / "eval"
    code, out, _ = run_cli(monkeypatch, capsys, "init", str(project), "--kind", kind)
    assert code == 0
    for name in ("cases.jsonl", "eval.toml", "rubric.toml", "labels-template.csv", "README.md"):
        assert (project / name).is_file(), name
    read_rubric(project / "rubric.toml", kind)  # people label with the judge's own words

    monkeypatch.chdir(project)
    summary_path = tmp_path / "summary.json"
    code, _, err = run_cli(monkeypatch, capsys, "run", "eval.toml", "--no-progress", "--json", str(summary_path))
    assert code == 0, err
    summary = json.loads(summary_path.read_text())
    rows = starter_cases(kind)
    assert summary["n_cases"] == len(rows) == 30
    judge = next(iter(summary["judges"].values()))
    assert judge["outcomes"]["unparsed"] == judge["outcomes"]["error"] == 0
    flawed = sum(1 for i, r in enumerate(rows) if r["category"] != BLIND_SPOT and kind != "pairwise" and i % 3 == 1)
    if kind == "passfail":
        assert judge["verdicts"] == {"FAIL": flawed, "PASS": 30 - flawed}
    elif kind == "score":
        assert {str(k): v for k, v in judge["verdicts"].items()} == {"1": flawed, "4": 30 - flawed}
    else:
        blind = sum(1 for r in rows if r["category"] == BLIND_SPOT)
        # The stand-in says B whatever the order on its blind spot: inconsistent there, right elsewhere.
        assert judge["pair_verdicts"]["inconsistent"] == blind
        # Elsewhere it picks the right answer in both orders: answer 1 when the right one is shown first.
        good_first = [i % 2 == 0 for i, r in enumerate(rows) if r["category"] != BLIND_SPOT]
        assert judge["pair_verdicts"]["A"] == sum(good_first)
        assert judge["pair_verdicts"]["B"] == len(good_first) - sum(good_first)
        # Nothing grades a pair pass or fail here: no pass rate, and no case is "missing a verdict".
        assert summary["pass_rate"] is None
        assert (summary["cases_passed"], summary["cases_failed"], summary["cases_missing"]) == (0, 0, 0)


def test_init_refuses_a_folder_with_files(tmp_path, monkeypatch, capsys):
    (tmp_path / "keep.txt").write_text("mine")
    code, _, err = run_cli(monkeypatch, capsys, "init", str(tmp_path))
    assert code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_init_unknown_kind(tmp_path, monkeypatch, capsys):
    code, _, _ = run_cli(monkeypatch, capsys, "init", str(tmp_path / "x"), "--kind", "criteria")
    assert code == 2
    assert not (tmp_path / "x").exists()


def test_splits_keep_both_sides():
    splits = [r["split"] for r in starter_cases("pairwise")]
    assert 0 < splits.count("holdout") < splits.count("dev")


def _policy_steps(tmp_path, monkeypatch, capsys, kind, name="eval"):
    """Init a project, run it, write two people's labels; return its README's policy steps, ready to run."""
    project = tmp_path / name
    assert run_cli(monkeypatch, capsys, "init", str(project), "--kind", kind)[0] == 0
    monkeypatch.chdir(project)
    code, out, err = run_cli(monkeypatch, capsys, "run", "eval.toml", "--no-progress")
    assert code == 0, err
    run_id = re.search(r"run ([0-9a-f]{12}):", out).group(1)  # type: ignore[union-attr]
    values = ["PASS", "FAIL"] if kind == "passfail" else [1, 2, 3, 4]
    with open("labels.jsonl", "w") as f:
        for i, row in enumerate(starter_cases(kind)):
            for j, rater in enumerate(("alice", "bob")):
                label = values[(i + j * (i % 2)) % len(values)]
                f.write(json.dumps({"item_id": row["id"], "rater_id": rater, "label": label}) + "\n")
    steps = [line.split("  #")[0] for line in (project / "README.md").read_text().splitlines()]
    steps = [s.replace("RUN_ID", run_id).split()[1:] for s in steps if s.startswith("juge policy ")]
    assert [s[:2] for s in steps] == [["policy", "derive"], ["policy", "test"]]
    return project, steps


@pytest.mark.parametrize("kind", ["passfail", "score"])
def test_the_project_readme_policy_steps_run(tmp_path, monkeypatch, capsys, kind):
    # Policies cover every kind of judge: the project's README must show the policy steps, and they must run.
    project, steps = _policy_steps(tmp_path, monkeypatch, capsys, kind)
    for args in steps:
        code, _, err = run_cli(monkeypatch, capsys, *args)
        assert code == 0, (args, err)
    assert json.loads((project / "policy.json").read_text())["judge_kind"] == kind


def test_a_second_project_on_the_starter_cases_cannot_test_their_holdout_again(tmp_path, monkeypatch, capsys):
    # The holdout is recognised by content, once per machine: the project README says so, and this is why.
    first, steps = _policy_steps(tmp_path, monkeypatch, capsys, "passfail", "first")
    for args in steps:
        assert run_cli(monkeypatch, capsys, *args)[0] == 0
    assert "once per machine" in (first / "README.md").read_text()
    second, steps = _policy_steps(tmp_path, monkeypatch, capsys, "passfail", "second")
    derive, test = steps
    assert run_cli(monkeypatch, capsys, *derive)[0] == 0
    assert run_cli(monkeypatch, capsys, *test)[0] == 2
    assert run_cli(monkeypatch, capsys, *test, "--force", "--json", "test.json")[0] == 0
    assert json.loads((second / "test.json").read_text())["forced"] is True


def test_init_project_from_python_lists_what_it_wrote(tmp_path):
    import pytest

    import juge

    project = juge.init_project(tmp_path / "p", kind="score")
    assert isinstance(project, juge.InitResult) and (project.kind, project.judge) == ("score", "quality")
    written = sorted(str(p.relative_to(tmp_path / "p")) for p in (tmp_path / "p").rglob("*") if p.is_file())
    assert sorted(project.files) == written
    lines = (tmp_path / "p" / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    assert project.n_cases == len(lines)
    for bad in ({"directory": tmp_path / "p"}, {"directory": tmp_path / "q", "kind": "ranking"}):
        with pytest.raises(juge.InputError):
            juge.init_project(**bad)
    assert not (tmp_path / "q").exists()


def test_the_starter_pairs_do_not_teach_that_longer_is_better():
    # Issue 30: the right answer was the longer one in 27 of 30 pairs, so "pick the longer answer" beat people.
    from juge.scaffold import starter_cases
    from juge.scaffold.cases import ITEMS

    right = {good for _, _, good, _ in ITEMS}
    pairs = starter_cases("pairwise")
    longer_is_right = [
        (p["output_1"] in right) == (len(p["output_1"]) > len(p["output_2"]))
        for p in pairs  # type: ignore[arg-type]
    ]
    assert 0.4 <= sum(longer_is_right) / len(pairs) <= 0.6
    for category in {c for c, *_ in ITEMS}:  # in every category, not only overall
        mine = [x for x, p in zip(longer_is_right, pairs, strict=True) if p["category"] == category]
        assert 0.2 <= sum(mine) / len(mine) <= 0.8


def test_a_baseline_that_matches_people_gets_a_headline_line():
    from juge.reports.headline import trivial_baseline_lines

    def study(rule: float) -> dict:
        return {
            "kind": "pairwise",
            "ceiling": {"agreement": {"value": 0.83, "low": 0.74, "high": 0.91, "n": 60}},
            "judges": {
                "longer answer": {
                    "vs_people": {"agreement": {"value": rule, "low": rule - 0.1, "high": rule + 0.1, "n": 60}}
                }
            },
        }

    assert trivial_baseline_lines(study(0.85)) and "0.850" in trivial_baseline_lines(study(0.85))[0]
    assert trivial_baseline_lines(study(0.74))  # at the interval's low end: within it
    assert trivial_baseline_lines(study(0.73)) == []
    assert trivial_baseline_lines({**study(0.9), "kind": "passfail"}) == []
