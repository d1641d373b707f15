"""`juge report --audit`: the weekly audit's section, with agreement by week against the policy's bar (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cli_helpers import run_cli
from juge.data.records import HumanLabel
from juge.policy.audit_status import audit_figures
from juge.policy.results import AuditRecord, PolicyResult
from report_helpers import HOSTILE, pairwise_calibration


def _policy() -> PolicyResult:
    """A pairwise policy whose judge decides `writing` (person vs person 0.80, margin 0.05: bar 0.75)."""
    body = {
        "kind": "juge-policy", "format": 1, "schema_version": 3, "judge_kind": "pairwise", "rule": "margin",
        "margin": 0.05, "judge": "strong/p", "templates_by_category": {HOSTILE: "strong/p"},
        "categories": {HOSTILE: {"decision": "judge", "reason": "within the margin",
                                 "ceiling": {"value": 0.8, "low": 0.7, "high": 0.9, "n": 200}}},
    }  # fmt: skip
    from juge.policy.file import policy_hash

    return PolicyResult.model_validate({**body, "policy_hash": policy_hash(body)})


def audit_status_json(tmp_path: Path, drop_from: int | None) -> Path:
    """12 weekly draws of 40 items, agreement 0.85 until ``drop_from``, then 0.40."""
    rng = np.random.default_rng(0)
    records, labels = [], []
    for w in range(12):
        items = [{"item_id": f"{w}-{i}", "category": HOSTILE, "verdict": "A"} for i in range(40)]
        records.append(AuditRecord.model_validate(
            {"drawn_at": f"2026-W{w + 10}", "week": f"2026-W{w + 10}", "run_id": "r", "seed": w,
             "label_project": "p", "items": items}))  # fmt: skip
        p = 0.40 if drop_from is not None and w >= drop_from else 0.85
        labels += [HumanLabel(item_id=it["item_id"], rater_id="ann", label="A" if rng.random() < p else "B")
                   for it in items]  # fmt: skip
    status = audit_figures(_policy().model_copy(update={"audits": records}), {"p": labels})
    path = tmp_path / "audit.json"
    path.write_text(status.to_json(), encoding="utf-8")
    return path


def test_the_report_draws_the_audit_by_week_against_the_bar(monkeypatch, capsys, tmp_path: Path) -> None:
    calibration = tmp_path / "cal.json"
    calibration.write_text(json.dumps(pairwise_calibration()), encoding="utf-8")
    audit = audit_status_json(tmp_path, drop_from=6)
    assert json.loads(audit.read_text())["outcome"] == "drifted"
    for suffix in (".html", ".md", ".json"):
        out = tmp_path / f"r{suffix}"
        code, _, err = run_cli(monkeypatch, capsys, "report", str(calibration), "--audit", str(audit), "-o", str(out))
        assert code == 0, err
    html = (tmp_path / "r.html").read_text()
    section = html[html.index('<section id="audit">') :]
    section = section[: section.index("</section>")]
    assert "DRIFTED" in section and "<svg" in section and 'aria-label="Weekly audit' in section
    assert HOSTILE not in html and "&lt;script&gt;" in section  # the category name is escaped
    assert "2026-W16" in section  # the week the drop began is on the chart's axis
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["audit"]["outcome"] == "drifted" and len(data["audit"]["weeks"]) == 12
    assert data["audit"]["groups"][1]["bar"] == 0.75
    assert "## Weekly audit" in (tmp_path / "r.md").read_text()


def test_no_audit_no_section(monkeypatch, capsys, tmp_path: Path) -> None:
    calibration = tmp_path / "cal.json"
    calibration.write_text(json.dumps(pairwise_calibration()), encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, "report", str(calibration), "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    assert 'id="audit"' not in (tmp_path / "r.html").read_text()
