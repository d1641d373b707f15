"""The labelling app in headless Chromium: keyboard labelling, undo, export, XSS, refusal without a token.

Needs /usr/bin/chromium (Debian package); never downloads a browser. Leaves a screenshot of
the labelling page in test-artifacts/label-page.png.
"""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from browser_helpers import ARTIFACTS, BROWSER_MARKS
from juge.cli import app
from juge.label.db import LabelStore
from label_helpers import expected_fixed, live_server, make_project, read_jsonl

pytestmark = BROWSER_MARKS


def shown(page) -> tuple[str, bool]:  # noqa: ANN001
    """(item id, swapped?) of the item on screen, read from its question and left answer."""
    number = int(re.search(r"Question number (\d+)\?", page.locator(".turn.user").inner_text()).group(1))
    left = page.locator("#answer-1 pre").inner_text()
    return f"item-{number:04d}", left.startswith("SECOND")


def press_and_wait(page, key: str) -> None:  # noqa: ANN001
    with page.expect_navigation():
        page.keyboard.press(key)


def test_rater_labels_with_the_keyboard_undoes_and_export_matches(browser, tmp_path: Path) -> None:  # noqa: ANN001
    db_url = f"sqlite:///{tmp_path / 'juge.db'}"
    store = LabelStore(db_url)
    project = make_project(store, tmp_path, 6, overlap=0.0, break_after=3)
    token = store.add_rater(project, "alice")
    dialogs: list[str] = []
    with live_server(db_url) as base:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

        # Without a token every page is refused.
        response = page.goto(base + "/item")
        assert response.status == 401 and "login link" in page.content()

        # The login link asks first (login CSRF); Enter presses the focused "Sign in" button.
        page.goto(f"{base}/login?token={token}")
        assert "Sign in to the labelling project" in page.content() and "alice" in page.content()
        press_and_wait(page, "Enter")
        assert page.url == base + f"/item?p={project.id}"

        # The XSS payloads are text: no element was created from them, no dialog opened.
        assert page.locator(".answer script, .answer img").count() == 0
        assert (
            "<script>alert('x')</script>"
            in page.locator("#answer-1, #answer-2").all_inner_texts()[0]
            + page.locator("#answer-1, #answer-2").all_inner_texts()[1]
        )
        assert '<img src=x onerror="alert(1)">' in " ".join(page.locator(".answer pre").all_inner_texts())
        expected: dict[str, tuple[str, str | None]] = {}
        for key, choice, note in (("1", "left", None), ("2", "right", "right one is clearer"), ("3", "tie", None)):
            item, swapped = shown(page)
            if note:
                page.keyboard.press("e")
                page.keyboard.type(note)
                page.keyboard.press("Escape")
            press_and_wait(page, key)
            expected[item] = (expected_fixed(choice, swapped), note)

        # The break is suggested after three items; u undoes the last label and brings its item back.
        assert page.get_by_text("Time for a short break?").is_visible()
        assert page.locator(".answer script, .answer img").count() == 0
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "label-page.png"))
        press_and_wait(page, "u")
        assert "last label was removed" in page.content()
        item, swapped = shown(page)
        assert item == list(expected)[-1]
        del expected[item]
        press_and_wait(page, "1")
        expected[item] = (expected_fixed("left", swapped), None)
        progress = page.locator(".count").inner_text()
        assert "3 labelled" in progress and "3 left" in progress

        # A double click on Undo undoes one label: the second click, on the same page or on the
        # next one if it loaded in between, sends nothing.
        page.wait_for_timeout(600)  # past the double-click time of the label's own click
        box = page.locator("form.undo button").bounding_box()
        spot = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        with page.expect_navigation():
            page.locator("form.undo button").dblclick()
        # The double click's echo on the page that just loaded: the same spot, and the browser counts it
        # as the double click's second click (detail 2).
        page.mouse.move(*spot)
        page.mouse.down(click_count=2)
        page.mouse.up(click_count=2)
        page.wait_for_timeout(800)
        assert "last label was removed" in page.content() and "2 labelled" in page.locator(".count").inner_text()
        assert shown(page)[0] == item
        press_and_wait(page, "1")
        assert "3 labelled" in page.locator(".count").inner_text()
        assert dialogs == []
        context.close()

    out = tmp_path / "labels.jsonl"
    result = CliRunner().invoke(app, ["label", "export", "proj", "-o", str(out), "--db-url", db_url])
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out)
    assert {r["item_id"]: (r["label"], r["explanation"]) for r in rows} == expected
    assert {r["rater_id"] for r in rows} == {"alice"}
    store.close()
