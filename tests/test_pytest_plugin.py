"""The pytest plugin (`juge_judge`, `assert_judged`): examples/pytest run as a project of its own against the mock
server passes and fails as its gate says, through juge's engine, cache and store; the failure message names the
gate and the cases with the judge's answer; the plugin costs a test run nothing until a test uses it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import juge
from juge.policy.results import RoutedItem, RouteResult
from juge.pytest_plugin import JugeJudge, assert_judged
from juge.testing.mockserver import MockConfig, serve_in_thread

REPO = Path(__file__).resolve().parents[1]
BAKERY = REPO / "examples" / "bakery"


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    for name in ("bakery", "pytest"):
        shutil.copytree(REPO / "examples" / name, project / "examples" / name)
    return project


def _pytest(project: Path, server_url: str) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUGE_DB", "PYTEST_ADDOPTS"))},
        "PYTHONPATH": str(REPO / "src"),
        "OPENAI_BASE_URL": server_url,
        "OPENAI_API_KEY": "sk-mock",
        # Load only juge's plugin, by name: the same module the pytest11 entry point names.
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "juge.pytest_plugin", "-p", "no:cacheprovider", "-q",
         "--juge-db", str(project / "j.db"), "examples/pytest"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.slow  # two pytest runs in subprocesses
def test_the_example_project_passes_and_fails_as_its_gate_says(tmp_path):
    passing, failing = _project(tmp_path / "a"), _project(tmp_path / "b")
    with serve_in_thread(MockConfig(answers=("PASS\nEvery claim is supported.",))) as server:
        done = _pytest(passing, server.url)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "3 passed" in done.stdout
        asked = server.stats()["answered"]
        again = _pytest(passing, server.url)  # the same store: every prompt answered from its cache
        assert again.returncode == 0 and server.stats()["answered"] == asked
    assert asked == 9  # 8 cases of the eval (the second test's run is the first's, from the cache) and 1 inline
    with serve_in_thread(MockConfig(answers=("FAIL\nThe reply invents an opening hour.",))) as server:
        done = _pytest(failing, server.url)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "3 failed" in done.stdout
    out = done.stdout
    assert "juge: the gate failed on run" in out and "(0 of 8 cases pass, 8 fail, 0 without a verdict)" in out
    assert "pass rate 0.0% < min_pass_rate 75.0%" in out
    assert "lower bound 0.0% < min_pass_rate_lower 60.0%" in out
    assert "hours-1: fail: judge faithful said FAIL ('FAIL')" in out
    assert "faithful answered: FAIL The reply invents an opening hour." in out
    assert "sunday: fail" in out


def _bakery_run(tmp_path: Path, gate: str = "") -> juge.Run:
    folder = tmp_path / "bakery"
    shutil.copytree(BAKERY, folder)
    if gate:
        (folder / "eval.toml").write_text((folder / "eval.toml").read_text() + f"\n[gate]\n{gate}\n")
    return JugeJudge(str(tmp_path / "j.db"), tmp_path / "cases")(folder / "eval.toml")


def test_assert_judged_gates_on_the_point_figure_and_the_lower_bound(tmp_path):
    run = _bakery_run(tmp_path)  # 4 of 8 pass: 3 fail, 1 unparsed
    assert_judged(run, min_pass_rate=0.5)
    assert_judged(run, min_pass_rate_lower=0.15)  # exact lower bound 0.157
    with pytest.raises(AssertionError) as failed:
        assert_judged(run, min_pass_rate_lower=0.2)
    message = str(failed.value)
    assert "the pass rate's 95 % lower bound 15.7% < min_pass_rate_lower 20.0%" in message
    assert "(4 of 8 cases pass, 3 fail, 1 without a verdict)" in message
    assert "gf-2: missing: judge faithful: unparsed" in message and "faithful answered: **PASS**" in message
    assert "price-2: fail: check no_competitors failed" in message
    with pytest.raises(AssertionError, match="pass rate 50.0% < min_pass_rate 100.0%"):
        assert_judged(run)  # no gate anywhere: every case must pass


def test_assert_judged_reads_the_evals_gate(tmp_path):
    run = _bakery_run(tmp_path, "min_pass_rate = 0.4")
    assert_judged(run)
    with pytest.raises(AssertionError, match="min_pass_rate 60.0%"):
        assert_judged(run, min_pass_rate=0.6)  # given in the test: it wins over the file's


def _routed(status: str, decisions: list[tuple[str, str, bool | None]]) -> RouteResult:
    return RouteResult(
        run_id="r1",
        policy_status=status,
        decisions=[
            RoutedItem(
                item_id=i,
                category="c",
                route=route,
                reason="x",
                detail="x",
                passes=passes,
                verdict=None if passes is None else ("PASS" if passes else "FAIL"),
                decision=route,
            )  # fmt: skip
            for i, route, passes in decisions
        ],
    )


def test_assert_judged_on_a_policy_trusts_the_judge_only_where_it_held():
    assert_judged(_routed("held", [("a", "judge", True), ("b", "person", None)]))
    with pytest.raises(AssertionError, match="1 of 2 cases the policy leaves to the judge fail") as failed:
        assert_judged(_routed("held", [("a", "judge", True), ("b", "judge", False), ("c", "person", None)]))
    assert "b [c]: the judge said FAIL" in str(failed.value) and "to a person (1): c" in str(failed.value)
    with pytest.raises(AssertionError, match="status is untested"):
        assert_judged(_routed("untested", [("a", "judge", True)]))
    with pytest.raises(AssertionError, match="more than max_to_person = 0"):
        assert_judged(_routed("held", [("a", "person", None)]), max_to_person=0)


def test_the_plugin_is_declared_and_imports_nothing_of_juge_until_used():
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    assert declared == {"juge": "juge.pytest_plugin"}
    installed = {e.name: e.value for e in entry_points(group="pytest11")}
    assert installed.get("juge", "juge.pytest_plugin") == "juge.pytest_plugin"  # absent until juge is reinstalled
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, juge.pytest_plugin; print(sorted(m for m in sys.modules if 'juge' in m))"],
        env={**os.environ, "PYTHONPATH": str(REPO / "src")}, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert loaded.strip() == "['juge', 'juge._version', 'juge.pytest_plugin']"  # _version: one constant


def _case(item_id: str, category: str, split: str | None = None) -> dict:
    row = {"id": item_id, "group": item_id, "category": category, "question": f"Question {item_id}?",
           "output": f"Answer {item_id}."}  # fmt: skip
    return row | ({"split": split} if split else {})


@pytest.mark.slow  # a policy derived on 60 judged items, then 30 routed live
def test_juge_judge_routes_by_a_calibrated_policy_and_assert_judged_gates_on_it(tmp_path, monkeypatch, capsys):
    import json

    from cli_helpers import run_cli, write_jsonl

    db = str(tmp_path / "j.db")
    write_jsonl(tmp_path / "cases.jsonl", [_case(f"d{k}", "easy" if k % 2 else "hard", "dev") for k in range(60)])
    with serve_in_thread(MockConfig()) as server:
        eval_file = tmp_path / "eval.toml"
        eval_file.write_text(
            f'name = "routed"\ncases = "cases.jsonl"\n[provider]\nname = "openai"\n'
            f'options = {{ base_url = "{server.url}" }}\n[[judges]]\nname = "grader"\nsetup = "passfail"\n'
            'model = "mock-judge-2026-01"\ndescription = "The answer is right."\n'
        )
        run = JugeJudge(db, tmp_path / "c")(eval_file)
        verdicts = {c.id: c.judgments[0].verdict for c in juge.show(run, db=db).cases}
        flip = {"PASS": "FAIL", "FAIL": "PASS"}  # people agree with the judge on easy items, not on hard ones
        write_jsonl(
            tmp_path / "labels.jsonl",
            [
                {"item_id": i, "rater_id": r, "label": v if int(i[1:]) % 2 else flip[v]}
                for i, v in verdicts.items()
                for r in ("r1", "r2")
            ],  # fmt: skip
        )
        code, _, err = run_cli(
            monkeypatch, capsys, "policy", "derive", "--run", run.run_id, "--labels", str(tmp_path / "labels.jsonl"),
            "--db", db, "-o", str(tmp_path / "P.md"), "--json", str(tmp_path / "policy.json"), "--resamples", "200",
        )  # fmt: skip
        assert code == 0, err
        new = [_case(f"n{k}", ["easy", "hard"][k % 2]) for k in range(30)]
        untested = JugeJudge(db, tmp_path / "c")(eval_file, policy=tmp_path / "policy.json", cases=new)
        with pytest.raises(AssertionError, match="status is untested"):
            assert_judged(untested)
        document = json.loads((tmp_path / "policy.json").read_text())
        document["holdout_tests"] = [{"test_id": "t" * 32, "used_at": "2026-12-01T00:00:00+00:00",
                                      "split": "holdout", "data_hash": "d" * 64, "n_items": 20, "forced": False,
                                      "held": True, "conclusion": "HELD"}]  # fmt: skip
        (tmp_path / "policy.json").write_text(json.dumps(document))  # as `juge policy test` records it
        routed = JugeJudge(db, tmp_path / "c")(eval_file, policy=tmp_path / "policy.json", cases=new)
    assert routed.policy_status == "held"
    to_judge = {d.item_id: d.verdict for d in routed.decisions if d.route == "judge"}
    assert set(to_judge) == {c["id"] for c in new if c["category"] == "easy"}
    failing = sorted(i for i, v in to_judge.items() if v == "FAIL")
    if failing:
        with pytest.raises(AssertionError) as failed:
            assert_judged(routed)
        assert f"{len(failing)} of 15 cases the policy leaves to the judge fail" in str(failed.value)
    else:
        assert_judged(routed)
    with pytest.raises(AssertionError, match="15 cases go to a person, more than max_to_person = 14"):
        assert_judged(routed, max_to_person=14)
