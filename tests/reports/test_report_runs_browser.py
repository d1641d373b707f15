"""The run and comparison reports in headless Chromium: no console error, no network request, screenshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_helpers import ARTIFACTS, BROWSER_MARKS, offline_page
from juge.reports import render_report, write_atomic
from juge.reports.runs import build_compare_data, build_run_data
from juge.store import Store
from report_helpers import HOSTILE, judged_run

pytestmark = BROWSER_MARKS


@pytest.fixture
def reports(tmp_path: Path) -> dict[str, Path]:
    """Built before the browser starts: Playwright's sync API holds an event loop the engine cannot share."""
    outputs = [f"answer {i}" for i in range(8)]
    new = [*outputs[:5], f"new answer 5 {HOSTILE}", *outputs[6:]]
    with Store(tmp_path / "juge.db") as store:
        judged_run(store, outputs, [{"match": "answer (1|2)\\b", "text": f"FAIL\nrude {HOSTILE}"}], run_id="old")
        judged_run(store, new, [{"match": "new answer 5", "text": "FAIL\nnow rude"}], run_id="new", model="m2")
        run = build_run_data(store, "old")
        compare = build_compare_data(store, "old", "new", allow_different_judges=True, n_resamples=200)
    return {
        name: write_atomic(tmp_path / f"{name}.html", render_report(data, "html"))
        for name, data in (("run", run), ("compare", compare))
    }


def test_run_and_compare_reports_open_offline_without_errors(reports, browser):
    paths = reports
    ARTIFACTS.mkdir(exist_ok=True)
    page, log = offline_page(browser, viewport={"width": 1366, "height": 900})
    for name, path in paths.items():
        page.goto(path.as_uri(), wait_until="load")
        assert page.locator("script, img").count() == 0
        assert HOSTILE in page.locator("article.case").first.inner_text()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=str(ARTIFACTS / f"report-{name}.png"), full_page=True)
    assert "NOT COMPARABLE" in page.locator("header.versions").inner_text()
    assert log.errors == []
    assert log.requests == [p.as_uri() for p in paths.values()], f"the reports made network requests: {log.requests}"
