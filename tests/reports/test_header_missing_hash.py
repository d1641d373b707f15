"""The report header says why a template hash is "not recorded" when the calls name their template."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli


def test_not_recorded_hash_is_explained(tmp_path, monkeypatch, capsys):
    out = tmp_path / "demo"
    assert run_cli(monkeypatch, capsys, "demo", "--out", str(out), "--resamples", "200")[0] == 0
    calibration = json.loads((out / "calibration.json").read_text())
    unhashed = [
        v["template"]
        for v in calibration["versions"]["judges"].values()
        if not v["baseline"] and not v["template_hashes"]
    ]
    assert unhashed  # the embedded sample's recorded calls carry template ids only
    html = (out / "report.html").read_text()
    for template in set(unhashed):
        assert f"name their template, {template}, but carry no hash" in html
    md = tmp_path / "r.md"
    assert (
        run_cli(monkeypatch, capsys, "report", str(out / "calibration.json"), "-o", str(md), "--format", "md")[0] == 0
    )
    assert "carry no hash" in Path(md).read_text()
