"""examples/ci: the GitHub Actions and GitLab examples are valid (checked offline against the schemas that
check-jsonschema vendors), and the GitHub workflow's own steps, run here against the mock server, judge a base
branch and a pull request: JUnit XML a JUnit parser reads with the expected failures, the gate's exit code, the
HTML report and the Markdown summary with the changed cases."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml
from ruamel.yaml import YAML
from scipy.stats import binomtest

from juge.testing.mockserver import MockConfig, serve_in_thread

REPO = Path(__file__).resolve().parents[1]
CI = REPO / "examples" / "ci"


def _validate(path: Path, schema: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow  # three starts of check-jsonschema
def test_the_ci_examples_are_valid_workflows(tmp_path):
    assert _validate(CI / "github-workflow.yml", "vendor.github-workflows").returncode == 0
    assert _validate(CI / "gitlab-ci.yml", "vendor.gitlab-ci").returncode == 0
    # The check has teeth: a job without runs-on is refused.
    broken = tmp_path / "broken.yml"
    broken.write_text((CI / "github-workflow.yml").read_text().replace("runs-on: ubuntu-latest", ""))
    assert _validate(broken, "vendor.github-workflows").returncode != 0


def _steps() -> dict[str, str]:
    workflow = YAML(typ="safe").load((CI / "github-workflow.yml").read_text())
    (job,) = workflow["jobs"].values()
    return {step["name"]: step["run"] for step in job["steps"] if "run" in step and "name" in step}


def _shell(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def _verdicts(db: Path, run_id: str) -> dict[str, str]:
    rows = sqlite3.connect(db).execute(
        "SELECT item_id, verdict FROM judgments WHERE run_id = ? AND judge = 'faithful'", (run_id,)
    )
    return {item: str(verdict).strip('"') for item, verdict in rows}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("jq") is None, reason="the workflow's Report step reads the run id with jq")
def test_the_github_workflow_steps_run_here_against_the_mock_server(tmp_path):
    work = tmp_path / "repo"
    shutil.copytree(REPO / "examples", work / "examples")
    shim = tmp_path / "bin" / "juge"  # `pip install juge` of the workflow: this checkout's juge
    shim.parent.mkdir()
    shim.write_text(
        f"#!/bin/sh\nexec {sys.executable} -c "
        '\'import sys; from juge.commands.entry import main; sys.argv[0] = "juge"; main()\' "$@"\n'
    )
    shim.chmod(0o755)
    step_summary = tmp_path / "step-summary.md"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUGE_DB"))},
        "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO / "src"),
        "OPENAI_API_KEY": "sk-mock",
        "JUGE_DB": ".juge/juge.db",
        "GITHUB_STEP_SUMMARY": str(step_summary),
        "COLUMNS": "200",
    }
    steps = _steps()
    db = work / ".juge" / "juge.db"

    # The base branch: the judge says PASS to all 8 cases; 8 of 8 clear the gate (lower bound 0.63 >= 0.6).
    with serve_in_thread(MockConfig(answers=("PASS\nEvery claim is supported.",))) as server:
        done = _shell(steps["Judge"], work, {**env, "OPENAI_BASE_URL": server.url})
    assert done.returncode == 0, done.stderr
    base = JUnitXml.fromfile(str(work / "juge-junit.xml"))
    assert (base.tests, base.failures, base.errors) == (9, 0, 0)  # 8 cases and the gate's bound
    base_id = _shell("jq -r .run_id juge-run.json", work, env).stdout.strip()

    # A pull request changes the rubric: new prompts (no cache hit), the mock now answers PASS or FAIL.
    eval_file = work / "examples" / "ci" / "eval.toml"
    eval_file.write_text(eval_file.read_text().replace("an invented fact fails.", "an invented fact fails outright."))
    with serve_in_thread(MockConfig()) as server:
        done = _shell(steps["Judge"], work, {**env, "OPENAI_BASE_URL": server.url})
    run_id = _shell("jq -r .run_id juge-run.json", work, env).stdout.strip()
    verdicts = _verdicts(db, run_id)
    failing = {item for item, v in verdicts.items() if v == "FAIL"}
    assert len(verdicts) == 8 and 0 < len(failing) < 8  # the mock's draw gives a mix
    lower = binomtest(8 - len(failing), 8).proportion_ci(0.95, method="exact").low
    assert done.returncode == (1 if lower < 0.6 else 0), done.stderr
    xml = JUnitXml.fromfile(str(work / "juge-junit.xml"))
    failed = {
        (suite.name, case.name) for suite in xml for case in suite if any(isinstance(r, Failure) for r in case.result)
    }
    assert failed == {("judge faithful", item) for item in failing} | {("gate", "min_pass_rate_lower")}
    cases = {case.name: case for suite in xml for case in suite}
    some = sorted(failing)[0]
    assert "FAIL" in cases[some].result[0].text and "The answer misses the point." in cases[some].result[0].text

    # The Report step (it runs after a failed gate too): HTML, the summary, the job's step summary.
    done = _shell(steps["Report"], work, env)
    assert done.returncode == 0, done.stderr
    assert (work / "juge-report.html").read_text().startswith("<!DOCTYPE html>")
    summary = (work / "juge-summary.md").read_text()
    assert step_summary.read_text() == summary
    assert f"Changed since run `{base_id}`:** {len(failing)} cases ({len(failing)} no longer pass)" in summary
    for item in failing:
        assert f"| {item} | pass | fail |" in summary
    assert "min_pass_rate_lower" in summary and ("Gate: FAILED" in summary) == (lower < 0.6)
