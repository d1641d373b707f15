"""The report's first screen (the summary section, the Markdown's top) carries every verdict its inputs hold:
the headline, the policy's status and the holdout test's verdict, and warns when the inputs come from different
runs, splits or input files."""

from __future__ import annotations

import json

from cli_helpers import run_cli
from report_helpers import pairwise_calibration, policy_routing


def _inputs(tmp_path, *, policy_run: str, policy_split: str, labels_hash: str) -> list[str]:
    cal = pairwise_calibration()
    cal["versions"]["sources_sha256"] = {"run r1 dataset": "aa11", "labels": "1abe15"}
    policy = policy_routing({"coding": "person", "math": "judge", "writing": "judge"})
    policy["dev"] = {
        "split": policy_split,
        "sources_sha256": {f"run {policy_run} dataset": "aa11", "labels": labels_hash},
    }
    test = {
        "kind": "juge-policy-test",
        "policy_hash": policy["policy_hash"],
        "split": "holdout",
        "data_hash": "d1",
        "status": "not held",
        "n_items": 165,
        "decisions": {"judge": 139, "person: category": 26},
        "conclusion": {"held": False, "reason": "math: judge vs person 0.58 is below the ceiling 0.66 by 0.08."},
    }
    paths = []
    for name, obj in (("cal", cal), ("policy", policy), ("test", test)):
        (tmp_path / f"{name}.json").write_text(json.dumps(obj), encoding="utf-8")
        paths.append(str(tmp_path / f"{name}.json"))
    return [paths[0], "--policy", paths[1], "--policy-test", paths[2]]


def _summary(monkeypatch, capsys, tmp_path, args: list[str]) -> tuple[str, str]:
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    assert run_cli(monkeypatch, capsys, "report", *args, "-o", str(html))[0] == 0
    assert run_cli(monkeypatch, capsys, "report", *args, "-o", str(md))[0] == 0
    summary = html.read_text().split('id="summary"', 1)[1].split("</section>", 1)[0]
    top = md.read_text().split("| Judge / template |", 1)[0]  # before the first table
    return summary, top


def test_the_first_screen_holds_the_policy_status_and_the_holdout_verdict(monkeypatch, capsys, tmp_path):
    args = _inputs(tmp_path, policy_run="r1", policy_split="dev", labels_hash="1abe15")
    summary, top = _summary(monkeypatch, capsys, tmp_path, args)
    for text in (summary, top):
        assert "Holdout test: NOT HELD on 165 holdout items" in text
        assert "math: judge vs person 0.58 is below the ceiling" in text
        assert "UNTESTED" in text and "The judge decides 2 of 3 categories, a person 1" in text
        assert "WARNING" not in text  # the same run, split and labels: nothing to warn about
    assert 'data-verdict="holdout"' in summary and 'class="answer no" data-verdict="holdout"' in summary


def test_the_first_screen_warns_when_inputs_come_from_different_runs_splits_or_files(monkeypatch, capsys, tmp_path):
    args = _inputs(tmp_path, policy_run="r2", policy_split="all", labels_hash="0ther")
    summary, top = _summary(monkeypatch, capsys, tmp_path, args)
    for text in (summary, top):
        assert "read run r1, the policy was derived on run r2" in text
        assert "different labels" in text
        assert "studied the dev split, the policy was derived on the all split" in text
