"""PASS/FAIL calibrations list the items where the judge and the people's majority differ, and the
report shows them (question, answer, the judge's raw text) like the pairwise report does."""

from __future__ import annotations

import json

from cli_helpers import run_cli, write_jsonl
from juge.scaffold import BLIND_SPOT


def test_passfail_report_has_a_disagreements_section(tmp_path, monkeypatch, capsys):
    project = tmp_path / "p"
    run_cli(monkeypatch, capsys, "init", str(project), "--kind", "passfail")
    monkeypatch.chdir(project)
    summary = tmp_path / "s.json"
    assert run_cli(monkeypatch, capsys, "run", "eval.toml", "--no-progress", "--json", str(summary))[0] == 0
    run_id = json.loads(summary.read_text())["run_id"]
    cases = [json.loads(line) for line in (project / "cases.jsonl").read_text().splitlines()]
    flawed = {i for i, _ in enumerate(cases) if i % 3 == 1}  # how init places the flawed answers
    labels = [
        {"item_id": c["id"], "rater_id": rater, "label": "FAIL" if i in flawed else "PASS"}
        for i, c in enumerate(cases)
        for rater in ("ann", "ben")
    ]
    write_jsonl(project / "labels.jsonl", labels)
    out = tmp_path / "cal.json"
    code, _, err = run_cli(
        monkeypatch, capsys, "calibrate", "--run", run_id, "--labels", "labels.jsonl", "--split", "all",
        "--resamples", "200", "--json", str(out),
    )  # fmt: skip
    assert code == 0, err
    calibration = json.loads(out.read_text())
    (entry,) = calibration["judges"].values()
    missed = {c["id"] for i, c in enumerate(cases) if i in flawed and c["category"] == BLIND_SPOT}
    assert {d["item_id"] for d in entry["disagreements"]} == missed  # the stand-in passes them; people fail them
    assert all(d["verdict"] == "PASS" and d["majority"] == "FAIL" and d["text"] for d in entry["disagreements"])

    html = tmp_path / "r.html"
    code, _, _ = run_cli(monkeypatch, capsys, "report", str(out), "--items", "cases.jsonl", "-o", str(html))
    assert code == 0
    page = html.read_text()
    assert 'id="disagreements"' in page
    section = page.split('id="disagreements"', 1)[1]
    assert sum(f'data-item="{i}"' in section for i in missed) == min(3, len(missed))
    first = section.split("</article>")[0]
    item = first.split('data-item="', 1)[1].split('"')[0]
    case = next(c for c in cases if c["id"] == item)
    assert case["output"].replace("'", "&#39;") in first or case["output"] in first


def test_a_calibration_of_a_stored_run_reports_its_cases_without_items(tmp_path, monkeypatch, capsys):
    """The tutorial's path: `calibrate --run` records the run and its store, so `juge report` shows the
    disagreements' question and answer with no --items (and from any folder)."""
    project = tmp_path / "p"
    run_cli(monkeypatch, capsys, "init", str(project), "--kind", "passfail")
    monkeypatch.chdir(project)
    summary = tmp_path / "s.json"
    assert run_cli(monkeypatch, capsys, "run", "eval.toml", "--no-progress", "--json", str(summary))[0] == 0
    run_id = json.loads(summary.read_text())["run_id"]
    cases = [json.loads(line) for line in (project / "cases.jsonl").read_text().splitlines()]
    labels = [
        {"item_id": c["id"], "rater_id": rater, "label": "FAIL" if i % 3 == 1 else "PASS"}
        for i, c in enumerate(cases)
        for rater in ("ann", "ben")
    ]
    write_jsonl(project / "labels.jsonl", labels)
    out = tmp_path / "cal.json"
    code, _, err = run_cli(
        monkeypatch, capsys, "calibrate", "--run", run_id[:6], "--labels", "labels.jsonl", "--split", "all",
        "--resamples", "200", "--json", str(out),
    )  # fmt: skip
    assert code == 0, err
    recorded = json.loads(out.read_text())["run"]
    assert recorded["id"] == run_id and recorded["db"] == str((project / ".juge" / "juge.db").resolve())

    monkeypatch.chdir(tmp_path)  # elsewhere: the store is found by the path the calibration records
    html = tmp_path / "r.html"
    assert run_cli(monkeypatch, capsys, "report", str(out), "-o", str(html))[0] == 0
    section = html.read_text().split('id="disagreements"', 1)[1]
    assert "not in the calibration file" not in section
    first = section.split("</article>")[0]
    item = first.split('data-item="', 1)[1].split('"')[0]
    case = next(c for c in cases if c["id"] == item)
    assert case["output"].replace("'", "&#39;") in first or case["output"] in first

    # The store gone: the report is still written, and says where the texts would come from.
    (project / ".juge" / "juge.db").rename(tmp_path / "moved.db")
    assert run_cli(monkeypatch, capsys, "report", str(out), "-o", str(html))[0] == 0
    assert f"run {run_id} is not in {project / '.juge' / 'juge.db'}; pass --items or --db" in html.read_text()
    assert run_cli(monkeypatch, capsys, "report", str(out), "--db", str(tmp_path / "moved.db"), "-o", str(html))[0] == 0
    assert "not in the calibration file" not in html.read_text().split('id="disagreements"', 1)[1]
