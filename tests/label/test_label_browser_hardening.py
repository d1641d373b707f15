"""The login cookie, sign-out and hidden characters as a real browser sees them (headless Chromium)."""

from __future__ import annotations

from pathlib import Path

from browser_helpers import ARTIFACTS, BROWSER_MARKS
from juge.data.records import Case
from juge.label.db import LabelStore
from juge.label.rubric import read_rubric
from label_helpers import live_server, make_project, write_rubric

pytestmark = BROWSER_MARKS


def test_cookie_is_an_httponly_strict_expiring_session_and_hidden_characters_show(browser, tmp_path: Path) -> None:  # noqa: ANN001
    db_url = f"sqlite:///{tmp_path / 'juge.db'}"
    store = LabelStore(db_url)
    rubric = read_rubric(write_rubric(tmp_path / "rubric.toml"), "passfail")
    case = Case(id="c1", question="What does it cost?", output="The price is \u202e7$ :latot\u202c fine")
    project = store.create_project("p", "passfail", rubric, [case])
    token = store.add_rater(project, "alice")
    with live_server(db_url) as base:
        port = base.rsplit(":", 1)[1]
        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{base}/login?token={token}")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.url == f"{base}/item?p={project.id}"
        [cookie] = [c for c in context.cookies() if c["name"].startswith("juge_label_")]
        assert cookie["name"] == f"juge_label_{port}_{project.id}"
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["expires"] > 0
        assert token not in cookie["value"]
        assert page.evaluate("document.cookie") == ""  # HttpOnly: no script can read it
        answer = page.locator(".answer pre").inner_text()
        assert "\u202e" not in answer and "U+202E" in answer and "U+202C" in answer
        assert page.locator(".answer .hidden-char").count() == 2
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "label-hidden-chars.png"))
        with page.expect_navigation():
            page.click("#logout")
        assert "signed out" in page.content()
        assert page.goto(f"{base}/item?p={project.id}").status == 401
    store.close()


def test_enter_signs_in_as_soon_as_the_login_page_has_loaded(browser, tmp_path: Path) -> None:  # noqa: ANN001
    """The Sign in button has the focus when the page's load event fires (not at the browser's next
    rendering update, which a busy machine delays past it), so Enter pressed at once signs in."""
    db_url = f"sqlite:///{tmp_path / 'juge.db'}"
    store = LabelStore(db_url)
    project = make_project(store, tmp_path, 2)
    token = store.add_rater(project, "alice")
    with live_server(db_url) as base:
        context = browser.new_context()
        context.add_init_script(
            "window.addEventListener('load', () => { window.focusedAtLoad = document.activeElement.id || 'none'; });"
        )
        page = context.new_page()
        # A slower CPU widens the gap between load and the rendering update that applies autofocus.
        context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": 4})
        for _ in range(8):
            page.goto(f"{base}/login?token={token}")
            assert page.evaluate("window.focusedAtLoad") == "sign-in"
        with page.expect_navigation(timeout=10_000):
            page.keyboard.press("Enter")
        assert page.url == f"{base}/item?p={project.id}"
        context.close()
    store.close()
