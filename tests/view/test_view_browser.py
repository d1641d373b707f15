"""`juge view` in Chromium (Debian's, through Playwright): from the runs list to a case, the filters, a compare
page, a hostile case that stays inert, and a 100k-judgment run paging fast. Screenshots go to test-artifacts/."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest
from view_helpers import HOSTILE_ID, make_calibration, make_store, view_process

from browser_helpers import ARTIFACTS, BROWSER_MARKS

pytestmark = BROWSER_MARKS
BENCH = Path(__file__).resolve().parents[2] / "bench" / "view_pages.py"


def open_page(browser):  # noqa: ANN001, ANN201
    """A new context and page that records any dialog a script opens (there must be none)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs  # type: ignore[attr-defined]
    return context, page


@pytest.fixture()
def viewer(browser, tmp_path):  # noqa: ANN001, ANN201
    """`juge view` over the test store and calibration, and a page signed in through its one-time link:
    (page, base URL, the link)."""
    make_store(tmp_path / "juge.db")
    calibration = make_calibration(tmp_path / "study")
    with view_process("--db", str(tmp_path / "juge.db"), "--calibration", str(calibration)) as link:
        context, page = open_page(browser)
        page.goto(link)
        base = link.split("/login")[0]
        assert page.url == base + "/"
        yield page, base, link
        context.close()


def test_from_the_runs_list_to_a_case_and_the_filters(viewer) -> None:  # noqa: ANN001
    page, base, _ = viewer
    page.goto(base + "/")
    page.locator("a.run-link", has_text="ra").click()
    page.wait_for_url("**/runs/ra")
    assert page.locator("#case-table tbody tr").count() == 8
    with page.expect_navigation():
        page.select_option("select[name=outcome]", "unparsed")  # submits itself (the page's one script)
    assert "outcome=unparsed" in page.url
    assert page.locator("a.case-link").all_inner_texts() == ["c5"]
    page.screenshot(path=str(ARTIFACTS / "view-run-filtered.png"), full_page=True)
    page.goto(base + "/runs/ra")
    page.fill("input[name=category]", "shipping")
    page.locator("#case-filters button[type=submit]").click()
    page.wait_for_url("**category=shipping**")
    assert sorted(page.locator("a.case-link").all_inner_texts()) == ["c0", "c2", "c4", "c6"]
    page.locator("a.case-link", has_text="c0").click()
    page.wait_for_url("**/runs/ra/cases/c0")
    assert "Reasoning on c0. [[PASS]]" in page.locator(".raw").first.inner_text()
    page.screenshot(path=str(ARTIFACTS / "view-case.png"), full_page=True)


def test_compare_two_runs(viewer) -> None:  # noqa: ANN001
    page, base, _ = viewer
    page.goto(base + "/")
    page.check("input[name=a][value=ra]")
    page.check("input[name=b][value=rb]")
    page.locator("#compare").click()
    page.wait_for_url(lambda url: "/compare?" in url)
    assert "a=ra" in page.url and "b=rb" in page.url
    assert page.locator("tr.changed-case").count() == 1
    assert "c0" in page.locator("tr.changed-case").inner_text()
    page.screenshot(path=str(ARTIFACTS / "view-compare.png"), full_page=True)


def test_a_hostile_case_stays_inert(viewer) -> None:  # noqa: ANN001
    page, base, _ = viewer
    page.goto(f"{base}/runs/ra/cases/{HOSTILE_ID}")
    page.wait_for_timeout(300)
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == 1  # /static/view.js, nothing from the case
    text = page.locator("#fields").inner_text()
    assert "<script>alert('x')</script>" in text and "U+202E" in text and "\u202e" not in text
    assert page.locator(".hidden-char").count() >= 2
    page.screenshot(path=str(ARTIFACTS / "view-hostile-case.png"), full_page=True)


def test_the_link_works_once(browser, viewer) -> None:  # noqa: ANN001
    _, _, link = viewer
    context, page = open_page(browser)
    page.goto(link)
    assert page.locator("#error").count() == 1 and "used already" in page.inner_text("#error")
    context.close()


def test_a_100k_judgment_run_pages_in_under_a_second(browser, tmp_path) -> None:  # noqa: ANN001
    spec = importlib.util.spec_from_file_location("view_pages", BENCH)
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    db = tmp_path / "big.db"
    run_id = bench.build_store(db, 100_000)
    with view_process("--db", str(db)) as url:
        context, page = open_page(browser)
        page.goto(url)
        times = []
        start = time.perf_counter()
        page.goto(url.split("/login")[0] + f"/runs/{run_id}")
        times.append(time.perf_counter() - start)
        for _ in range(3):
            first = page.locator("a.case-link").first.inner_text()
            start = time.perf_counter()
            page.locator("#next-page").click()
            page.wait_for_load_state()
            times.append(time.perf_counter() - start)
            assert page.locator("a.case-link").first.inner_text() > first
        page.screenshot(path=str(ARTIFACTS / "view-100k-run.png"))
        context.close()
    assert max(times) < 1.0, times
