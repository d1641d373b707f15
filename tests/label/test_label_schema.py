"""Label store schema: a store written before schema versions upgrades and keeps its labels; one written
by a newer juge is refused with exit 2, on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from juge.label.db import MIGRATIONS, SCHEMA_VERSION, LabelStore
from juge.schema import NewerStoreError
from label_helpers import make_project

backends = pytest.mark.parametrize(
    "db_url", ["sqlite", pytest.param("postgres", marks=[pytest.mark.postgres, pytest.mark.slow])], indirect=True
)


def layout(url: str) -> dict[str, list[str]]:
    engine = create_engine(url)
    try:
        found = inspect(engine)
        return {t: sorted(c["name"] for c in found.get_columns(t)) for t in found.get_table_names()}
    finally:
        engine.dispose()


def stored_version(url: str) -> list[int]:
    engine = create_engine(url)
    try:
        with engine.connect() as c:
            return [r[0] for r in c.exec_driver_sql("SELECT version FROM label_schema_version")]
    finally:
        engine.dispose()


def labelled_store(url: str, tmp_path: Path) -> dict[str, str]:
    """A project with one label from alice and one open assignment of bob's; returns alice's labels."""
    store = LabelStore(url)
    project = make_project(store, tmp_path, 3, overlap=0)
    store.add_rater(project, "alice")
    store.add_rater(project, "bob")
    alice = store.rater(project, "alice")
    assignment = store.next_assignment(alice)
    assert assignment is not None
    store.save_label(alice, assignment.id, "A")
    store.next_assignment(store.rater(project, "bob"))
    labels = {lab.item_id: lab.output_hash for lab in store.export_labels(project)}
    store.close()
    return labels


def make_old(url: str, drop_columns: bool) -> None:
    """Turn a store into one a juge before schema versions wrote (without the columns it added on open)."""
    engine = create_engine(url)
    with engine.begin() as c:
        c.exec_driver_sql("DROP TABLE label_schema_version")
        if drop_columns:
            c.exec_driver_sql("ALTER TABLE label_items DROP COLUMN output_hash")
            c.exec_driver_sql("ALTER TABLE label_assignments DROP COLUMN released_at")
    engine.dispose()


@backends
@pytest.mark.parametrize("drop_columns", [False, True], ids=["previous-juge", "first-juge"])
def test_a_store_from_before_schema_versions_upgrades_and_keeps_its_labels(
    db_url: str, tmp_path: Path, drop_columns: bool
) -> None:
    before = labelled_store(db_url, tmp_path)
    fresh_layout = layout(db_url)
    make_old(db_url, drop_columns)
    store = LabelStore(db_url)
    project = store.project("proj")
    assert {lab.item_id: lab.output_hash for lab in store.export_labels(project)} == before  # hashes refilled
    bob = store.rater(project, "bob")
    assert store.release_assignments(project, rater=bob) == {"bob": 1}  # bob's open assignment is still open
    store.close()
    assert layout(db_url) == fresh_layout and stored_version(db_url) == [SCHEMA_VERSION]


def test_migrations_are_numbered_in_order() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, SCHEMA_VERSION + 1))


def newer_store(url: str) -> None:
    LabelStore(url).close()
    engine = create_engine(url)
    with engine.begin() as c:
        c.exec_driver_sql(f"UPDATE label_schema_version SET version = {SCHEMA_VERSION + 1}")
    engine.dispose()


@backends
def test_a_store_from_a_newer_juge_is_refused(db_url: str) -> None:
    newer_store(db_url)
    with pytest.raises(NewerStoreError) as caught:
        LabelStore(db_url)
    assert f"schema version {SCHEMA_VERSION + 1}" in str(caught.value)
    assert stored_version(db_url) == [SCHEMA_VERSION + 1]


def test_a_label_command_on_a_newer_store_exits_2_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "labels.db"
    newer_store(f"sqlite:///{path}")
    done = subprocess.run(
        [sys.executable, "-m", "juge.cli", "label", "status", "--db-url", f"sqlite:///{path}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "newer juge" in lines[0]
