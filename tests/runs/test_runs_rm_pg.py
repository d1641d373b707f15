"""`juge runs rm` and the cached re-run reuse on a PostgreSQL store: the same SQL, every table cleared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli
from juge.store import open_store
from label_helpers import create_database

pytestmark = pytest.mark.postgres

BAKERY = Path(__file__).resolve().parents[2] / "examples" / "bakery" / "eval.toml"


@pytest.fixture
def pg_db(postgres_url: str, tmp_path: Path) -> str:
    url = create_database(postgres_url, f"rm_{tmp_path.name[-40:].lower().replace('-', '_')}")
    return url.replace("postgresql+psycopg://", "postgresql://")


def test_rm_and_reuse_on_postgresql(pg_db, tmp_path, monkeypatch, capsys):
    for _ in range(2):  # the second is answered from the cache and reuses the first
        assert run_cli(monkeypatch, capsys, "run", str(BAKERY), "--no-progress", "--db", pg_db)[0] == 0
    code, out, _ = run_cli(monkeypatch, capsys, "runs", "--db", pg_db, "--json", "-")
    (run,) = json.loads(out)
    assert run_cli(monkeypatch, capsys, "run", str(BAKERY), "--no-progress", "--db", pg_db, "--fresh")[0] == 0
    assert run_cli(monkeypatch, capsys, "runs", "rm", run["id"], "--db", pg_db)[0] == 0
    with open_store(pg_db) as store:
        assert [r["id"] for r in store.list_runs()] != [run["id"]] and len(store.list_runs()) == 1
        assert store.judgments(run["id"]) == [] and store.count_calls(run["id"]) == 0
