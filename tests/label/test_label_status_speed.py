"""`juge label status` flags a rater whose labels come faster than anyone reads an item (issue 30): the median of
the seconds the store records per label (item shown to label), in the terminal and in --json."""

from __future__ import annotations

import json
import statistics
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

import juge.label.db as label_db
from juge.cli import app
from juge.label.db import LabelStore
from juge.label.review import MIN_TIMED_LABELS, TOO_FAST_SECONDS
from label_helpers import make_project

runner = CliRunner()

SECONDS = {
    "quick": [0.2, 0.1, 0.3, 0.2, 5.0],  # median 0.2: one slow label does not hide the rest
    "careful": [4.0, 12.0, 7.0, 30.0, 2.0],  # median 7
    "brief": [0.2, 0.3],  # too few timed labels to judge
}


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    clock = [1_000_000.0]
    monkeypatch.setattr(label_db, "time", types.SimpleNamespace(time=lambda: clock[0]))
    url = f"sqlite:///{tmp_path / 'juge.db'}"
    store = LabelStore(url)
    project = make_project(store, tmp_path, 12, overlap=0.0, name="speed")
    for name, times in SECONDS.items():
        store.add_rater(project, name)
        rater = store.rater(project, name)
        for dt in times:
            session = store.current_session(rater)
            a = store.next_assignment(rater)
            assert a is not None
            store.mark_shown(a.id, session)
            clock[0] += dt
            assert store.save_label(rater, a.id, "A", session_id=session)
            clock[0] += 1
    store.add_rater(project, "idle")
    return url


def test_status_flags_a_rater_whose_median_label_is_under_a_second(db_url: str) -> None:
    assert TOO_FAST_SECONDS == 1.0 and MIN_TIMED_LABELS == 3
    result = runner.invoke(app, ["label", "status", "speed", "--db-url", db_url, "--json", "-"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["too_fast_seconds"] == 1.0
    raters = {r["rater"]: r for r in data["raters"]}
    for name, times in SECONDS.items():
        assert raters[name]["timed_labels"] == len(times)
        assert raters[name]["median_seconds"] == pytest.approx(statistics.median(times))
    assert {n: r["too_fast"] for n, r in raters.items()} == {
        "quick": True,
        "careful": False,
        "brief": False,
        "idle": False,
    }
    assert raters["idle"]["median_seconds"] is None

    text = runner.invoke(app, ["label", "status", "speed", "--db-url", db_url]).output
    warnings = [line for line in text.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].startswith("warning: quick ") and "0.2 s" in warnings[0]
    row = next(line for line in text.splitlines() if "quick" in line and "warning" not in line)
    assert "too fast" in row
