"""`juge report --policy --policy-test` of a cascade policy: the configurations' coverage / cost / agreement curve
(issue 25 item 3), drawn from the policy (dev) and its holdout test, with a table beside it."""

from __future__ import annotations

import json
from pathlib import Path

import juge
from cli_helpers import run_cli
from report_helpers import HOSTILE, pairwise_calibration

PRICES = {"gpt-6-luna": {"input": 0.15, "output": 0.6}, "gpt-6.1-sol": {"input": 2.5, "output": 10.0}}


def test_the_report_draws_each_configuration_on_dev_and_holdout(monkeypatch, capsys, tmp_path: Path) -> None:
    demo = juge.demo_path("items.jsonl").parent
    inputs = {"items": demo / "items.jsonl", "judgments": demo / "judgments.jsonl"}
    policy = juge.policy.derive(**inputs, cascade="chat-small,chat-strong", target=0.65, resamples=50, prices=PRICES)
    policy_path = tmp_path / "policy.json"
    policy_path.write_text(json.dumps(policy.to_dict()), encoding="utf-8")
    test_path = tmp_path / "test.json"
    juge.policy.test(policy_path, **inputs, db=tmp_path / "j.db", resamples=50, json_path=test_path)
    document = json.loads(policy_path.read_text(encoding="utf-8"))
    document["cascade"]["configurations"][1]["name"] = HOSTILE  # a judge's name is data: escaped like any
    policy_path.write_text(json.dumps(document), encoding="utf-8")
    calibration = tmp_path / "cal.json"
    calibration.write_text(json.dumps(pairwise_calibration()), encoding="utf-8")
    for suffix in (".html", ".md", ".json"):
        code, _, err = run_cli(
            monkeypatch, capsys, "report", str(calibration), "--policy", str(policy_path), "--policy-test",
            str(test_path), "-o", str(tmp_path / f"r{suffix}"),
        )  # fmt: skip
        assert code == 0, err
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    section = html[html.index('<section id="configurations">') :]
    section = section[: section.index("</section>")]
    assert '<svg role="img" aria-label="Configurations' in section
    assert section.count("<tr") == 1 + 2 * 3  # header, then three configurations on dev and on holdout
    assert "Chosen on dev:</b> chat-small" in section and "US$ 0.00" in section
    assert HOSTILE not in html and "&lt;script&gt;" in section
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["configurations"]
    assert [r["name"] for r in data["holdout"]] == ["chat-small", "chat-strong", "chat-small → chat-strong"]
    assert all(r["n_decided"] + r["n_person"] == 165 for r in data["holdout"])
    assert data["choice"]["chosen"] == "chat-small" and data["target"] == 0.65
    assert "## Configurations" in (tmp_path / "r.md").read_text(encoding="utf-8")


def test_no_cascade_no_configurations(monkeypatch, capsys, tmp_path: Path) -> None:
    calibration = tmp_path / "cal.json"
    calibration.write_text(json.dumps(pairwise_calibration()), encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, "report", str(calibration), "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    assert 'id="configurations"' not in (tmp_path / "r.html").read_text(encoding="utf-8")
