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


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """One PostgreSQL server on 127.0.0.1 for the whole test session (skipped if none can run)."""
    from label_helpers import postgres_bin, postgres_server

    if postgres_bin() is None:
        pytest.skip("no PostgreSQL server binary (/usr/lib/postgresql/*/bin/postgres); install 'postgresql'")
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """A fresh label database: SQLite, and a new database on the session's PostgreSQL server."""
    from label_helpers import create_database

    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'juge.db'}"
    return create_database(
        request.getfixturevalue("postgres_url"), f"juge_{tmp_path.name[-40:].lower().replace('-', '_')}"
    )
