"""The labelling app on a 390 px wide phone (issue 30, item 10): the adjudicator's page, header first, fits.

Needs /usr/bin/chromium (Debian package). Leaves test-artifacts/label-adjudicate-phone.png.
"""

from __future__ import annotations

from pathlib import Path

from browser_helpers import ARTIFACTS, BROWSER_MARKS
from juge.label.db import LabelStore
from label_helpers import live_server, make_project

pytestmark = BROWSER_MARKS

PHONE = {"width": 390, "height": 844}

# Elements wider than the viewport, or reaching past its right edge, with their widths.
# The phone's width is fixed: a mobile browser widens its layout viewport (innerWidth) to fit wide content.
OVERFLOW = """([sel, width]) => [...document.querySelectorAll(sel)].filter(e => {
  const r = e.getBoundingClientRect();
  return r.width > width + 0.5 || r.right > width + 0.5;
}).map(e => `${e.tagName.toLowerCase()}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)"""


def test_adjudicator_page_fits_a_phone(browser, tmp_path: Path) -> None:  # noqa: ANN001
    db_url = f"sqlite:///{tmp_path / 'juge.db'}"
    store = LabelStore(db_url)
    project = make_project(store, tmp_path, 2, overlap=1.0, name="support-tickets-helpfulness-v2")
    for name, label in (("alice", "A"), ("bob", "B")):
        store.add_rater(project, name)
        rater = store.rater(project, name)
        while (a := store.next_assignment(rater)) is not None:
            store.save_label(rater, a.id, label)
    assert store.disagreements(project)
    token = store.add_rater(project, "judy-the-adjudicator", adjudicator=True)
    with live_server(db_url) as base:
        context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
        page = context.new_page()
        page.goto(f"{base}/login?token={token}")
        with page.expect_navigation():
            page.get_by_role("button", name="Sign in").click()
        page.goto(f"{base}/adjudicate?p={project.id}")
        assert page.get_by_role("link", name="Review disagreements").is_visible()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "label-adjudicate-phone.png"), full_page=True)
        assert page.evaluate(OVERFLOW, ["header.top, header.top *", PHONE["width"]]) == []
        assert page.evaluate(OVERFLOW, ["main, main *", PHONE["width"]]) == []
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        # The rater's page still fits too.
        page.goto(f"{base}/item?p={project.id}")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        context.close()
