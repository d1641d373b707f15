"""`juge label release`: freeing items a rater was handed but never labelled, on SQLite and PostgreSQL.

Checks that only unlabelled assignments are freed (by rater or by age), that a dry run changes
nothing, that a freed item goes to another rater (never back to the same one, never past
`needed`), and that a late submit from a page left open is stored only while the item still
needs that rater.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from typer.testing import CliRunner

from juge.cli import app
from juge.errors import InputError
from juge.label.app import create_app
from juge.label.db import LabelStore, Project, ReleasedError, assignments
from label_helpers import (
    hidden,
    make_project,
    sign_in,
)

HOUR = 3600.0


@pytest.fixture
def store(db_url: str) -> LabelStore:
    s = LabelStore(db_url)
    yield s
    s.close()


def handed_out_hours_ago(store: LabelStore, assignment_id: int, hours: float) -> None:
    with store.engine.begin() as c:
        c.execute(
            update(assignments).where(assignments.c.id == assignment_id).values(assigned_at=time.time() - hours * HOUR)
        )


def labels_per_item(store: LabelStore, project: Project) -> dict[str, dict[str, str]]:
    return {it["item_id"]: it["labels"] for it in store.item_table(project)}


def test_release_by_rater_frees_only_the_open_item_and_it_goes_to_another_rater(
    store: LabelStore, tmp_path: Path
) -> None:
    project = make_project(store, tmp_path, 2, overlap=0)
    store.add_rater(project, "alice")
    store.add_rater(project, "bob")
    alice, bob = store.rater(project, "alice"), store.rater(project, "bob")
    first = store.next_assignment(alice)
    store.save_label(alice, first.id, "A")
    second = store.next_assignment(alice)
    assert store.next_assignment(bob) is None  # both items are alice's
    handed_out_hours_ago(store, first.id, 100)  # old, but labelled: must stay

    assert store.release_assignments(project, rater=alice) == {"alice": 1}
    assert store.release_assignments(project, rater=alice) == {}  # nothing left to free
    assert store.next_assignment(alice) is None  # never the same item twice
    got = store.next_assignment(bob)
    assert got is not None and got.case.id == second.case.id
    store.save_label(bob, got.id, "B")
    assert labels_per_item(store, project) == {first.case.id: {"alice": "A"}, second.case.id: {"bob": "B"}}


def test_release_by_idle_time_and_dry_run(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 3, overlap=0)
    held = {}
    for name, hours in (("alice", 30), ("bob", 2), ("carol", 0)):
        store.add_rater(project, name)
        held[name] = store.next_assignment(store.rater(project, name))
        handed_out_hours_ago(store, held[name].id, hours)
    store.add_rater(project, "dave")
    dave = store.rater(project, "dave")

    assert store.release_assignments(project, older_than=1 * HOUR, dry_run=True) == {"alice": 1, "bob": 1}
    assert store.release_assignments(project, older_than=1 * HOUR, dry_run=True) == {"alice": 1, "bob": 1}
    assert store.next_assignment(dave) is None  # the dry run freed nothing

    assert store.release_assignments(project, older_than=24 * HOUR) == {"alice": 1}
    assert store.next_assignment(dave).case.id == held["alice"].case.id
    assert store.next_assignment(store.rater(project, "bob")).case.id == held["bob"].case.id  # bob keeps his


def test_released_overlap_slot_is_refilled_without_exceeding_needed(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 1, overlap=1.0, overlap_raters=2)
    for name in ("alice", "bob", "carol", "dave"):
        store.add_rater(project, name)
    alice, bob, carol, dave = (store.rater(project, n) for n in ("alice", "bob", "carol", "dave"))
    held_by_alice = store.next_assignment(alice)  # slot 0
    store.next_assignment(bob)  # slot 1
    assert store.next_assignment(carol) is None
    assert store.release_assignments(project, rater=alice) == {"alice": 1}
    got = store.next_assignment(carol)  # takes the freed slot 0 while bob holds slot 1
    assert got is not None and got.case.id == held_by_alice.case.id
    assert store.next_assignment(dave) is None
    with store.engine.connect() as c:
        active = c.execute(select(assignments.c.slot).where(assignments.c.released_at.is_(None))).scalars().all()
    assert sorted(active) == [0, 1]

    # alice's page was still open: the item is full again, so her label is refused and not stored
    with pytest.raises(ReleasedError):
        store.save_label(alice, held_by_alice.id, "A")
    store.save_label(carol, got.id, "B")
    store.save_label(bob, store.next_assignment(bob).id, "tie")
    assert labels_per_item(store, project) == {held_by_alice.case.id: {"bob": "tie", "carol": "B"}}


def test_late_submit_is_kept_while_the_item_still_has_a_free_place(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 1, overlap=0)
    store.add_rater(project, "alice")
    store.add_rater(project, "bob")
    alice, bob = store.rater(project, "alice"), store.rater(project, "bob")
    held = store.next_assignment(alice)
    store.release_assignments(project, rater=alice)
    assert store.save_label(alice, held.id, "A") is True  # nobody took it: her label still counts
    assert store.next_assignment(bob) is None  # and the item is hers again, so it is full
    assert store.save_label(alice, held.id, "A") is False  # a double submit is still one label
    assert store.release_assignments(project, rater=alice, older_than=0) == {}  # labelled: never released
    assert labels_per_item(store, project) == {held.case.id: {"alice": "A"}}


def test_late_submit_over_http_after_the_item_went_to_someone_else(tmp_path: Path) -> None:
    store = LabelStore(f"sqlite:///{tmp_path / 'juge.db'}")
    project = make_project(store, tmp_path, 1, overlap=0)
    clients = {}
    for name in ("alice", "bob"):
        clients[name] = TestClient(create_app(store), follow_redirects=False)
        assert sign_in(clients[name], store.add_rater(project, name)).status_code == 303
    alice_page = clients["alice"].get("/item").text
    assert store.release_assignments(project, rater=store.rater(project, "alice")) == {"alice": 1}
    bob_page = clients["bob"].get("/item").text
    assert hidden(bob_page, "assignment") != hidden(alice_page, "assignment")

    r = clients["alice"].post(
        "/label",
        data={"csrf": hidden(alice_page, "csrf"), "assignment": hidden(alice_page, "assignment"), "choice": "left"},
    )
    assert r.status_code == 303 and r.headers["location"].endswith("msg=released")
    assert "handed to another rater" in clients["alice"].get(r.headers["location"]).text
    r = clients["bob"].post(
        "/label", data={"csrf": hidden(bob_page, "csrf"), "assignment": hidden(bob_page, "assignment"), "choice": "tie"}
    )
    assert r.status_code == 303
    assert [(row["rater"], row["label"]) for row in store.label_rows(project)] == [("bob", "tie")]
    store.close()


def test_release_command_prints_per_rater_counts(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'juge.db'}"
    store = LabelStore(url)
    project = make_project(store, tmp_path, 3, overlap=0, name="q4")
    for name in ("alice", "bob"):
        store.add_rater(project, name)
    alice, bob = store.rater(project, "alice"), store.rater(project, "bob")
    handed_out_hours_ago(store, store.next_assignment(alice).id, 48)
    store.next_assignment(bob)
    store.close()
    runner = CliRunner()

    r = runner.invoke(app, ["label", "release", "q4", "--dry-run", "--db-url", url])
    assert r.exit_code == 0, r.output
    assert "alice: would free 1 item" in r.output and "bob" not in r.output and "dry run" in r.output
    r = runner.invoke(app, ["label", "release", "q4", "--rater", "bob", "--db-url", url])
    assert r.exit_code == 0 and "bob: freed 1 item" in r.output and "alice" not in r.output
    r = runner.invoke(app, ["label", "release", "q4", "--db-url", url])
    assert r.exit_code == 0 and "alice: freed 1 item" in r.output and "freed 1 item in total" in r.output
    r = runner.invoke(app, ["label", "release", "q4", "--rater", "nobody", "--db-url", url])
    assert isinstance(r.exception, InputError) and "nobody" in str(r.exception)


def test_a_store_made_before_release_is_upgraded(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'juge.db'}"
    store = LabelStore(url)
    project = make_project(store, tmp_path, 2, overlap=0)
    store.add_rater(project, "alice")
    held = store.next_assignment(store.rater(project, "alice"))
    with store.engine.begin() as c:
        c.exec_driver_sql("ALTER TABLE label_assignments DROP COLUMN released_at")
        c.exec_driver_sql("DROP TABLE label_schema_version")  # as the juge before schema versions left it
    store.close()
    store = LabelStore(url)  # adds the column back, empty: the old assignment stays open
    alice = store.rater(project, "alice")
    assert store.next_assignment(alice).id == held.id
    assert store.release_assignments(project, rater=alice) == {"alice": 1}
    store.close()
