"""The HTML report in headless Chromium: no console error, no network request, a screenshot to look at."""

from __future__ import annotations

import json
from pathlib import Path

from browser_helpers import ARTIFACTS, BROWSER_MARKS, offline_page
from juge.reports import write_report
from report_helpers import HOSTILE, pairwise_calibration, policy_routing

pytestmark = BROWSER_MARKS


def _report(tmp_path: Path) -> Path:
    """A report with every section: policy, items for the disagreements, and hostile text in them."""
    calibration = pairwise_calibration()
    for d in calibration["judges"]["chat-small/pair-v2"]["disagreements"]:
        d["texts"]["12"] += " " + HOSTILE
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(
            json.dumps(
                {
                    "item_id": i,
                    "question": f"Question of {i} " + HOSTILE,
                    "answer_1": "First answer.\n\nSecond paragraph.",
                    "answer_2": "Other answer " + HOSTILE,
                    "category": "writing",
                    "human_ratings": [{"rater_id": "expert_1", "label": "B"}, {"rater_id": "author_2", "label": "B"}],
                }
            )
            + "\n"
            for i in ("item-all", "item-two-thirds", "item-all-small")
        ),
        encoding="utf-8",
    )
    policy = policy_routing({"writing": "person", "math": "judge", "coding": "judge"})
    return write_report(calibration, tmp_path / "report.html", policy=policy, items=items)


def test_report_opens_offline_without_errors_and_is_screenshotted(browser, tmp_path):
    path = _report(tmp_path)
    ARTIFACTS.mkdir(exist_ok=True)
    page, log = offline_page(browser, viewport={"width": 1366, "height": 900})
    page.goto(path.as_uri(), wait_until="load")
    # The page is what it claims: the header, every plot drawn, the hostile text shown as text.
    assert page.locator("header.versions").inner_text().count("gpt-6-luna-2026-09-22") == 1
    assert page.locator("figure svg").count() >= 4
    box = page.locator("figure svg").first.bounding_box()
    assert box and box["width"] > 400 and box["height"] > 100
    assert page.locator("script, img").count() == 0
    assert HOSTILE in page.locator("article.case").first.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # no sideways scroll
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
    page.emulate_media(media="print")
    page.pdf(path=str(tmp_path / "report.pdf"))  # printable: Chromium lays it out for paper
    assert log.errors == []
    assert log.requests == [path.as_uri()], f"the report made network requests: {log.requests}"
    assert (ARTIFACTS / "report.png").stat().st_size > 50_000
    assert (tmp_path / "report.pdf").stat().st_size > 10_000
