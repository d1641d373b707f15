"""Verdicts from other tools' own files: an Inspect AI eval log and a promptfoo results file.

The fixtures were written by the real tools (tests/tool_logs.py: Inspect AI 0.3 with its mockllm
model, promptfoo 0.121 with a local grading provider); the slow tests make new ones and read those.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from cli_helpers import run_cli
from tool_logs import FIXTURES, GRADES, PROMPTFOO_WORDS, promptfoo_binary, write_inspect_log, write_promptfoo_results

R1 = ("yes", "no", "yes", "yes", "no", "yes", "yes", "no")
R2 = ("yes", "no", "no", "yes", "no", "no", "yes", "yes")


def rated_items(tmp_path: Path) -> Path:
    path = tmp_path / "rated.csv"
    path.write_text("id,output,r1,r2\n" + "".join(f"i{k},answer {k},{a},{b}\n" for k, (a, b) in enumerate(zip(R1, R2))))
    return path


def expected_kappa(verdicts: list[str]) -> tuple[float, float]:
    people = {"yes": "PASS", "no": "FAIL"}
    judge = [v for v in verdicts for _ in (R1, R2)]
    humans = [people[r[k]] for k in range(len(verdicts)) for r in (R1, R2)]
    agreement = sum(a == b for a, b in zip(judge, humans)) / len(judge)
    return agreement, cohen_kappa_score(judge, humans, labels=["FAIL", "PASS"])


def calibrate(monkeypatch, capsys, tmp_path: Path, source: str) -> dict:
    out = tmp_path / "out.json"
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "calibrate",
        "--items",
        str(rated_items(tmp_path)),
        "--label-cols",
        "r1,r2",
        "--kind",
        "passfail",
        "--judgments",
        source,
        "--resamples",
        "30",
        "--json",
        str(out),
    )
    assert code == 0, err
    return json.loads(out.read_text())


def check_inspect(result: dict) -> None:
    (key,) = result["judges"]
    assert key == "model_graded_qa/model_graded_qa"
    judge = result["judges"][key]
    verdicts = ["PASS" if g == "C" else "FAIL" for g in GRADES]
    agreement, kappa = expected_kappa(verdicts)
    assert judge["agreement"]["value"] == pytest.approx(agreement)
    assert judge["kappa"]["value"] == pytest.approx(kappa)
    assert result["versions"]["judges"][key]["models"] == ["mockllm/model"]


def check_promptfoo(result: dict) -> None:
    judge = result["judges"]["promptfoo/llm-rubric/promptfoo/llm-rubric"]
    verdicts = ["PASS" if w == "good" else "FAIL" for w in PROMPTFOO_WORDS]
    agreement, kappa = expected_kappa(verdicts)
    assert judge["agreement"]["value"] == pytest.approx(agreement)
    assert judge["kappa"]["value"] == pytest.approx(kappa)
    assert judge["n_items"] == len(verdicts)


@pytest.mark.slow  # importing inspect_ai alone takes ~10 s
@pytest.mark.needs("inspect_ai")
def test_inspect_log_written_by_inspect(tmp_path, monkeypatch, capsys) -> None:
    check_inspect(calibrate(monkeypatch, capsys, tmp_path, f"inspect:{FIXTURES / 'inspect_model_graded_qa.eval'}"))


def test_promptfoo_results_written_by_promptfoo(tmp_path, monkeypatch, capsys) -> None:
    check_promptfoo(calibrate(monkeypatch, capsys, tmp_path, f"promptfoo:{FIXTURES / 'promptfoo_results.json'}"))


def test_a_file_that_is_not_the_tools_exits_2(tmp_path, monkeypatch, capsys) -> None:
    bogus = tmp_path / "results.json"
    bogus.write_text('{"results": {"results": [{"testCase": {}, "gradingResult": {"componentResults": []}}]}}')
    out = tmp_path / "out.json"
    code, _, err = run_cli(
        monkeypatch, capsys, "calibrate", "--items", str(rated_items(tmp_path)), "--label-cols", "r1,r2",
        "--judgments", f"promptfoo:{bogus}", "--json", str(out),
    )  # fmt: skip
    assert code == 2 and "results.json" in err and "no llm-rubric grade" in err and not out.exists()


@pytest.mark.slow
@pytest.mark.needs("inspect_ai")
def test_a_new_inspect_log_made_offline_with_mockllm(tmp_path, monkeypatch, capsys) -> None:
    log = write_inspect_log(tmp_path / "logs")
    check_inspect(calibrate(monkeypatch, capsys, tmp_path, f"inspect:{log}"))


@pytest.mark.slow
@pytest.mark.needs("promptfoo")
def test_a_new_promptfoo_results_file(tmp_path, monkeypatch, capsys) -> None:
    binary = promptfoo_binary()
    assert binary is not None
    results = write_promptfoo_results(tmp_path / "pf", binary)
    check_promptfoo(calibrate(monkeypatch, capsys, tmp_path, f"promptfoo:{results}"))
