"""A mouse click in a label page's first moments counts; only the double click's echo (its second click,
which the browser counts as such, landing on the page the first click opened) is dropped."""

from __future__ import annotations

from pathlib import Path

from browser_helpers import BROWSER_MARKS
from juge.label.db import LabelStore
from label_helpers import live_server, make_project

pytestmark = BROWSER_MARKS


def test_first_click_counts_and_the_echo_of_a_double_click_does_not(browser, tmp_path: Path) -> None:  # noqa: ANN001
    db_url = f"sqlite:///{tmp_path / 'juge.db'}"
    store = LabelStore(db_url)
    project = make_project(store, tmp_path, 4, overlap=0.0, break_after=50)
    token = store.add_rater(project, "alice")
    with live_server(db_url) as base:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.goto(f"{base}/login?token={token}")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        # At once, with the mouse, on the page that just appeared: it counts.
        with page.expect_navigation():
            page.locator('button[data-key="1"]').click()
        assert "1 labelled" in page.locator(".count").inner_text()
        # Another button, right away on the next page: counts too (not where the last click was).
        with page.expect_navigation():
            page.locator('button[data-key="2"]').click()
        assert "2 labelled" in page.locator(".count").inner_text()
        # The second click of a double click lands on the page the first one opened: the browser counts
        # it (detail 2), and it is the echo, dropped.
        box = page.locator('button[data-key="2"]').bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down(click_count=2)
        page.mouse.up(click_count=2)
        page.wait_for_timeout(700)
        assert "2 labelled" in page.locator(".count").inner_text()
        # Later, the same spot is a new click.
        with page.expect_navigation():
            page.locator('button[data-key="2"]').click()
        assert "3 labelled" in page.locator(".count").inner_text()
        context.close()
    store.close()
