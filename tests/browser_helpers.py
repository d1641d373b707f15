"""Headless Chromium for the browser tests: Debian's binary, never a downloaded one.

Use `BROWSER_MARKS` as a module's `pytestmark`, the `browser` fixture from conftest for a
launched browser, and `offline_page` for a page that records console errors and every
request and aborts anything that is not a local file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

BROWSER_MARKS = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.needs("chromium"),
]


@dataclass
class PageLog:
    errors: list[str] = field(default_factory=list)  # console errors and warnings, uncaught page errors
    requests: list[str] = field(default_factory=list)


def offline_page(browser: Any, **context: Any) -> tuple[Any, PageLog]:
    """A new page that logs console errors and requests, and aborts every non-file request."""
    page = browser.new_page(**context)
    log = PageLog()
    page.on("console", lambda m: log.errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: log.errors.append(str(e)))
    page.on("request", lambda r: log.requests.append(r.url))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else route.abort())
    return page, log
