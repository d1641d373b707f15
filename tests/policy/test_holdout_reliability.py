"""The holdout is evaluated once, end to end through the CLI: derive on dev, test on holdout, a second test is
refused (exit 2, saying how to force), a forced one runs, is recorded in the store as forced, and every report
made from its result says it was forced (and a report of the first, honest test does not)."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from cli_helpers import run_cli, tiny_pairwise_study


def _uses(db: Path) -> list[tuple[str, str, int]]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT data_hash, policy_hash, forced FROM holdout_uses ORDER BY id").fetchall()


def _policy_test_section(html: str) -> str:
    found = re.search(r'<section id="policy-test">(.*?)</section>', html, re.S)
    assert found, "the report has no policy-test section"
    return found.group(1)


def test_holdout_once_then_forced_is_recorded_and_reported(tmp_path: Path, monkeypatch, capsys) -> None:
    common = tiny_pairwise_study(tmp_path)
    db = tmp_path / "j.db"
    policy = tmp_path / "policy.json"
    calibration = tmp_path / "calibration.json"

    def juge(*args: str) -> tuple[int, str, str]:
        return run_cli(monkeypatch, capsys, *args)

    code, _, err = juge("calibrate", *common[:4], "--resamples", "100", "--json", str(calibration))
    assert code == 0, err
    code, _, err = juge("policy", "derive", *common, "-o", str(tmp_path / "POLICY.md"), "--json", str(policy))
    assert code == 0, err
    derived = json.loads(policy.read_text())

    first = tmp_path / "test-1.json"
    code, out, err = juge("policy", "test", "--policy", str(policy), *common, "--json", str(first))
    assert code == 0, err
    assert "FORCED" not in out + err
    honest = json.loads(first.read_text())
    assert honest["forced"] is False and honest["previous_uses"] == []
    assert _uses(db) == [(honest["data_hash"], derived["policy_hash"], 0)]

    refused = tmp_path / "test-2.json"
    code, out, err = juge("policy", "test", "--policy", str(policy), *common, "--json", str(refused))
    message = " ".join(err.split())
    assert code == 2, out + err
    assert "already tested" in message and "--force" in message
    assert "Traceback" not in out + err
    assert not refused.exists() and len(_uses(db)) == 1, "a refused test must not write or use anything"

    forced_path = tmp_path / "test-3.json"
    code, out, err = juge("policy", "test", "--policy", str(policy), *common, "--force", "--json", str(forced_path))
    assert code == 0, err
    assert (out + err).count("FORCED") == 1
    forced = json.loads(forced_path.read_text())
    assert forced["forced"] is True and len(forced["previous_uses"]) == 1
    assert forced["previous_uses"][0]["policy_hash"] == derived["policy_hash"]
    assert forced["warning"].startswith("FORCED")
    assert _uses(db) == [
        (honest["data_hash"], derived["policy_hash"], 0),
        (honest["data_hash"], derived["policy_hash"], 1),
    ]

    flag_only = tmp_path / "test-3-no-warning.json"  # the flag, not the prose, makes a test forced
    flag_only.write_text(json.dumps({k: v for k, v in forced.items() if k != "warning"}))
    reports = {}
    for name, result in (("honest", first), ("forced", forced_path), ("flag-only", flag_only)):
        for fmt in ("html", "md", "json"):
            target = tmp_path / f"report-{name}.{fmt}"
            code, _, err = juge(
                "report",
                str(calibration),
                "--policy",
                str(policy),
                "--policy-test",
                str(result),
                "-f",
                fmt,
                "-o",
                str(target),
            )
            assert code == 0, err
            reports[name, fmt] = target.read_text(encoding="utf-8")

    assert "FORCED" in _policy_test_section(reports["forced", "html"])
    assert "FORCED" not in _policy_test_section(reports["honest", "html"])
    assert "FORCED" in _policy_test_section(reports["flag-only", "html"]) and "**FORCED" in reports["flag-only", "md"]
    assert "**FORCED" in reports["forced", "md"] and "FORCED" not in reports["honest", "md"]
    assert json.loads(reports["forced", "json"])["policy_test"]["forced"] is True
    assert json.loads(reports["honest", "json"])["policy_test"]["forced"] is False
