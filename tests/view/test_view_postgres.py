"""`juge view` over a PostgreSQL store: the same pages from the same queries (keyset pages, category filter by
its JSON spelling, prompts by payer and by meta), on a connection that refuses writes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from view_helpers import HOSTILE_ID, login, make_store

from juge.store import open_store
from juge.view.app import create_app
from juge.view.shown import read_shown

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from label_helpers import create_database  # noqa: E402

pytestmark = pytest.mark.postgres


def test_the_pages_read_a_postgresql_store(postgres_url: str, tmp_path: Path) -> None:
    url = create_database(postgres_url, f"view_{tmp_path.name[-40:].lower().replace('-', '_')}")
    url = url.replace("postgresql+psycopg://", "postgresql://")
    make_store(url)
    store = open_store(url)
    store.read_only()
    client = TestClient(create_app(store, read_shown(), token="t"), base_url="http://127.0.0.1:8766")
    login(client, "t")
    page = client.get("/runs/ra?category=shipping&size=2")
    assert page.status_code == 200 and page.text.count('class="case-link"') == 2 and "next-page" in page.text
    assert client.get("/runs/rb?verdict=FAIL").text.count('class="case-link"') == 1
    for run in ("ra", "rb"):  # ra's call has a payer, rb's was logged without one
        assert "Grade this:" in client.get(f"/runs/{run}/cases/{HOSTILE_ID}").text
    assert "pass-&gt;fail" in client.get("/compare?a=ra&b=rb").text
    with pytest.raises(Exception, match="read-only"):
        store.conn.execute("DELETE FROM runs")
    store.close()
