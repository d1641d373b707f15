"""Shared fixtures: where the shared sample lives, a temporary store."""

from __future__ import annotations

from pathlib import Path

import pytest

from juge.store import Store

REPO = Path(__file__).resolve().parents[1]
SHARED_SAMPLE = REPO.parent / "shared" / "data" / "mtbench-sample"
PACKAGED_SAMPLE = REPO / "src" / "juge" / "demo_data"


@pytest.fixture
def sample_dir() -> Path:
    """The MT-Bench sample: the shared copy if present, else the one packaged with juge."""
    return SHARED_SAMPLE if (SHARED_SAMPLE / "items.jsonl").exists() else PACKAGED_SAMPLE


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "juge.db")
    yield s
    s.close()


@pytest.fixture
def browser():
    """Headless Debian Chromium driven by Playwright (see tests/browser_helpers.py)."""
    from browser_helpers import CHROMIUM, CHROMIUM_ARGS

    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()
