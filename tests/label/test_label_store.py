"""The label store on SQLite and on a real PostgreSQL server: concurrency, exactly-once, review, export.

The PostgreSQL cases start a throwaway server on 127.0.0.1 for the test session and
skip (with the reason) only when no server binary is installed.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from sklearn.metrics import cohen_kappa_score

from juge.data.readers import read_labels
from juge.label.db import LabelStore
from juge.label.review import status
from label_helpers import (
    expected_fixed,
    hidden,
    live_server,
    make_project,
    shown_item,
    sign_in,
)

N_RATERS = 20
LABELS_EACH = 25  # 20 x 25 = 500 labels


@pytest.fixture
def store(db_url: str) -> LabelStore:
    s = LabelStore(db_url)
    yield s
    s.close()


def rater_session(base: str, token: str, name: str, seed: int) -> list[tuple[str, str, str]]:
    """One rater labelling LABELS_EACH items over HTTP; every 5th label is posted twice (a double submit)."""
    rng = random.Random(seed)
    done = []
    with httpx.Client(base_url=base, follow_redirects=False, timeout=120) as client:
        assert sign_in(client, token).status_code == 303
        for k in range(LABELS_EACH):
            page = client.get("/item")
            assert page.status_code == 200, page.text
            number, swapped = shown_item(page.text)
            choice = rng.choice(["left", "right", "tie"])
            form = {"csrf": hidden(page.text, "csrf"), "assignment": hidden(page.text, "assignment"), "choice": choice}
            assert client.post("/label", data=form).status_code == 303
            if k % 5 == 0:
                again = client.post("/label", data={**form, "choice": "tie" if choice != "tie" else "left"})
                assert again.status_code == 303
            done.append((name, f"item-{number:04d}", expected_fixed(choice, swapped)))
    return done


@pytest.mark.parametrize(
    "db_url", ["sqlite", pytest.param("postgres", marks=[pytest.mark.postgres, pytest.mark.slow])], indirect=True
)
def test_twenty_concurrent_raters_store_every_label_exactly_once(
    store: LabelStore, db_url: str, tmp_path: Path
) -> None:
    project = make_project(store, tmp_path, 450, overlap=0.2)  # 360 + 90 x 2 = 540 slots for 500 labels
    tokens = {f"rater{i:02d}": store.add_rater(project, f"rater{i:02d}") for i in range(N_RATERS)}
    with live_server(db_url) as base:
        start = time.monotonic()
        with ThreadPoolExecutor(N_RATERS) as pool:
            futures = [
                pool.submit(rater_session, base, token, name, i) for i, (name, token) in enumerate(tokens.items())
            ]
            posted = [row for f in futures for row in f.result()]
        elapsed = time.monotonic() - start
    assert len(posted) == N_RATERS * LABELS_EACH == 500
    stored = [(lab.rater_id, lab.item_id, lab.label) for lab in store.export_labels(project)]
    assert len(stored) == 500
    assert Counter(stored) == Counter(posted)  # every label once, with the position mapped back
    per_item = Counter(item for _r, item, _l in stored)
    needed = {it["item_id"]: it["needed"] for it in store.item_table(project)}
    assert all(count <= needed[item] for item, count in per_item.items())
    print(f"{db_url.split(':')[0]}: 500 labels from 20 raters in {elapsed:.1f} s")


def test_racing_raters_never_overfill_an_item(store: LabelStore, tmp_path: Path) -> None:
    """Many raters asking for work at once: each item goes to exactly `needed` raters, never more."""
    project = make_project(store, tmp_path, 12, overlap=0.5, overlap_raters=3)
    names = [f"r{i}" for i in range(10)]
    for name in names:
        store.add_rater(project, name)
    by_name = {name: store.rater(project, name) for name in names}
    barrier = threading.Barrier(len(names))

    def work(name: str) -> int:
        rater = by_name[name]
        barrier.wait()
        n = 0
        while (a := store.next_assignment(rater)) is not None:
            assert store.save_label(rater, a.id, "tie")
            n += 1
        return n

    with ThreadPoolExecutor(len(names)) as pool:
        total = sum(pool.map(work, names))
    table = store.item_table(project)
    assert total == sum(it["needed"] for it in table) == 6 * 3 + 6
    assert all(len(it["labels"]) == it["needed"] for it in table)


def test_undo_and_unique_labels_in_the_store(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 3, overlap=0.0)
    store.add_rater(project, "alice")
    alice = store.rater(project, "alice")
    first = store.next_assignment(alice)
    assert store.save_label(alice, first.id, "A")
    assert not store.save_label(alice, first.id, "B")  # one label per rater per item
    second = store.next_assignment(alice)
    assert second.item_pk != first.item_pk and store.save_label(alice, second.id, "B")
    last = store.last_label_id(alice)
    assert store.undo_label(alice, last) == second.case.id
    assert store.undo_label(alice, last) is None  # the same undo again changes nothing
    assert store.next_assignment(alice).id == second.id  # the undone item comes back first
    assert [(lab.item_id, lab.label) for lab in store.export_labels(project)] == [(first.case.id, "A")]


def test_concurrent_undos_of_one_label_remove_exactly_one(store: LabelStore, tmp_path: Path) -> None:
    """The reviewer's race: two undo requests in flight at once once removed two labels (4 -> 2)."""
    project = make_project(store, tmp_path, 6, overlap=0.0)
    token = store.add_rater(project, "alice")
    with live_server(store.url) as base, httpx.Client(base_url=base, follow_redirects=False, timeout=60) as client:
        assert sign_in(client, token).status_code == 303
        for _ in range(4):
            page = client.get("/item").text
            client.post(
                "/label",
                data={"csrf": hidden(page, "csrf"), "assignment": hidden(page, "assignment"), "choice": "left"},
            )
        page = client.get("/item").text
        form = {"csrf": hidden(page, "csrf"), "label_id": hidden(page, "label_id")}
        barrier = threading.Barrier(4)

        def undo(_: int) -> str:
            barrier.wait()
            r = client.post("/undo", data=form)
            assert r.status_code == 303, r.text
            return r.headers["location"].rsplit("=", 1)[1]

        with ThreadPoolExecutor(4) as pool:
            outcomes = sorted(pool.map(undo, range(4)))
    assert outcomes == ["stale", "stale", "stale", "undone"]
    assert len(store.export_labels(project)) == 3


def test_export_loads_with_read_labels_and_status_kappa_matches_sklearn(store: LabelStore, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from juge.cli import app

    project = make_project(store, tmp_path, 30, overlap=1.0, seed=5)
    for name in ("ann", "ben"):
        store.add_rater(project, name)
    people = [store.rater(project, name) for name in ("ann", "ben")]
    rng = random.Random(7)
    truth = {}
    for rater in people:
        while (a := store.next_assignment(rater)) is not None:
            label = rng.choice(["A", "B", "tie"]) if rng.random() < 0.5 else ["A", "B", "tie"][a.item_pk % 3]
            store.save_label(rater, a.id, label)
            truth[(rater.name, a.case.id)] = label
    out = tmp_path / "labels.jsonl"
    result = CliRunner().invoke(app, ["label", "export", "proj", "-o", str(out), "--db-url", store.url])
    assert result.exit_code == 0, result.output
    loaded = read_labels(out, allowed=["A", "B", "tie"])
    assert {(lab.rater_id, lab.item_id): lab.label for lab in loaded} == truth and len(loaded) == 60
    s = status(store, project)
    ann = [truth[("ann", f"item-{i:04d}")] for i in range(30)]
    ben = [truth[("ben", f"item-{i:04d}")] for i in range(30)]
    assert s["pairs"] == 30 and s["items_closed"] == 30 and s["items_left"] == 0
    assert s["agreement"] == pytest.approx(sum(x == y for x, y in zip(ann, ben)) / 30)
    assert s["kappa"] == pytest.approx(cohen_kappa_score(ann, ben))
    assert s["disagreements"] == sum(x != y for x, y in zip(ann, ben))


def test_sessions_end_after_a_break_or_an_idle_gap(store: LabelStore, tmp_path: Path) -> None:
    from sqlalchemy import select

    from juge.label.db import SESSION_IDLE_SECONDS, sessions

    project = make_project(store, tmp_path, 2)
    store.add_rater(project, "alice")
    alice = store.rater(project, "alice")
    t0 = 1_000_000.0
    first = store.current_session(alice, now=t0)
    assert store.current_session(alice, now=t0 + 60) == first
    second = store.current_session(alice, now=t0 + 60 + SESSION_IDLE_SECONDS + 1)
    assert second != first
    store.end_session(alice, "break")
    third = store.current_session(alice)
    with store.engine.connect() as c:
        rows = {r.id: r for r in c.execute(select(sessions)).all()}
    assert rows[first].end_reason == "idle" and rows[first].ended_at == t0 + 60
    assert rows[second].end_reason == "break" and rows[third].ended_at is None
