"""The labelling app through its HTTP API (FastAPI TestClient over a temporary SQLite store)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from juge.label.app import COOKIE, create_app
from juge.label.db import LabelStore, hash_token, raters
from label_helpers import XSS_IMG, XSS_SCRIPT, expected_fixed, hidden, make_project, shown_item, sign_in


@pytest.fixture
def store(tmp_path: Path) -> LabelStore:
    s = LabelStore(f"sqlite:///{tmp_path / 'juge.db'}")
    yield s
    s.close()


def client_for(store: LabelStore, token: str | None = None) -> TestClient:
    client = TestClient(create_app(store), follow_redirects=False)
    if token is not None:
        r = sign_in(client, token)
        assert r.status_code == 303 and r.headers["location"].startswith("/?p=")
    return client


def label_current(client: TestClient, choice: str, explanation: str = "") -> tuple[int, bool | None]:
    page = client.get("/item").text
    shown = shown_item(page)
    r = client.post(
        "/label",
        data={
            "csrf": hidden(page, "csrf"),
            "assignment": hidden(page, "assignment"),
            "choice": choice,
            "explanation": explanation,
        },
    )
    assert r.status_code == 303, r.text
    return shown


# ---- authentication and CSRF ---------------------------------------------------------------------


def test_every_page_needs_a_valid_token(store: LabelStore, tmp_path: Path) -> None:
    make_project(store, tmp_path, 3)
    anon = client_for(store)
    for path in ("/", "/item", "/adjudicate"):
        assert anon.get(path).status_code == 401
    assert anon.post("/label", data={"csrf": "x", "assignment": "1", "choice": "left"}).status_code == 401
    assert anon.post("/undo", data={"csrf": "x"}).status_code == 401
    assert anon.get("/login", params={"token": "not-a-token"}).status_code == 401
    anon.cookies.set(COOKIE, "forged")
    assert anon.get("/item").status_code == 401
    assert "login link" in anon.get("/item").text


def test_login_sets_httponly_cookie_and_token_is_stored_hashed(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 3)
    token = store.add_rater(project, "alice")
    r = sign_in(TestClient(create_app(store), follow_redirects=False), token)
    [cookie] = [c.lower() for c in r.headers.get_list("set-cookie") if c.startswith(f"{COOKIE}_")]
    assert "httponly" in cookie and "samesite=strict" in cookie
    with store.engine.connect() as c:
        stored = c.execute(select(raters.c.token_hash)).scalars().all()
    assert stored == [hash_token(token)] and token not in stored[0]


def test_a_login_link_signs_in_only_after_the_rater_confirms_on_this_site(store: LabelStore, tmp_path: Path) -> None:
    """Login CSRF: opening a link (say from another site) shows who it signs in as and sets no login;
    a sign-in POST without this browser's nonce cookie (what a cross-site form sends) is refused."""
    project = make_project(store, tmp_path, 3)
    token = store.add_rater(project, "mallory")
    victim = client_for(store)
    page = victim.get("/login", params={"token": token})
    assert page.status_code == 200 and "as <b>mallory</b>" in page.text and "proj" in page.text
    assert not [c for c in victim.cookies.jar if c.name.startswith(COOKIE)]
    assert victim.get("/item").status_code == 401
    forged = client_for(store)  # the attacker's page posts the form, but the victim's browser has no nonce
    for nonce in ("", hidden(page.text, "nonce")):
        r = forged.post("/login", data={"token": token, "nonce": nonce})
        assert r.status_code == 403 and "set-cookie" not in r.headers
    r = victim.post("/login", data={"token": token, "nonce": "guessed"})
    assert r.status_code == 403 and victim.get("/item").status_code == 401
    r = victim.post("/login", data={"token": token, "nonce": hidden(page.text, "nonce")})
    assert r.status_code == 303 and victim.get("/item").status_code == 200
    assert victim.get("/login", params={"token": token}).status_code == 303  # signed in already: straight on


def test_forms_without_the_right_csrf_token_are_refused(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 3)
    client = client_for(store, store.add_rater(project, "alice"))
    page = client.get("/item").text
    assignment = hidden(page, "assignment")
    for bad in ({}, {"csrf": ""}, {"csrf": "wrong"}):
        r = client.post("/label", data={"assignment": assignment, "choice": "left", **bad})
        assert r.status_code == 403
        assert client.post("/undo", data=bad).status_code == 403
    assert store.export_labels(project) == []
    # The real token works.
    r = client.post("/label", data={"assignment": assignment, "choice": "left", "csrf": hidden(page, "csrf")})
    assert r.status_code == 303 and len(store.export_labels(project)) == 1


def test_a_rater_cannot_label_someone_elses_item(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 4, overlap=0.0)
    alice = client_for(store, store.add_rater(project, "alice"))
    bob = client_for(store, store.add_rater(project, "bob"))
    alice_assignment = hidden(alice.get("/item").text, "assignment")
    bob_page = bob.get("/item").text
    r = bob.post("/label", data={"csrf": hidden(bob_page, "csrf"), "assignment": alice_assignment, "choice": "left"})
    assert r.status_code == 403
    assert store.export_labels(project) == []


# ---- escaping and blindness ------------------------------------------------------------------------


def test_model_output_is_escaped_and_scripts_are_blocked_by_csp(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 2)
    client = client_for(store, store.add_rater(project, "alice"))
    r = client.get("/item")
    page = r.text
    assert XSS_SCRIPT not in page and XSS_IMG not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in page
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert "<script>" not in page.replace('<script src="/static/label.js" defer></script>', "")


def test_rater_never_sees_model_names_item_ids_or_other_labels(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 1, overlap=1.0)  # the one item goes to both raters
    alice = client_for(store, store.add_rater(project, "alice"))
    bob = client_for(store, store.add_rater(project, "bob"))
    label_current(alice, "tie", explanation="ALICE-NOTE")
    bob_page = bob.get("/item").text
    for secret in ("secret-model", "item-0000", "ALICE-NOTE", "alice", "model_1"):
        assert secret not in bob_page
    assert bob.get("/adjudicate").status_code == 403


# ---- labelling: position mapping, undo, overlap, sessions -------------------------------------------


def test_positions_are_randomised_and_mapped_back_to_fixed_order(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 40, overlap=0.0)
    client = client_for(store, store.add_rater(project, "alice"))
    rng = random.Random(1)
    pressed: dict[str, str] = {}
    swaps = []
    for _ in range(40):
        choice = rng.choice(["left", "right", "tie"])
        number, swapped = label_current(client, choice)
        swaps.append(swapped)
        pressed[f"item-{number:04d}"] = expected_fixed(choice, swapped)
    assert 5 < sum(swaps) < 35  # both positions occur (p of failing by chance < 1e-5)
    exported = {lab.item_id: lab.label for lab in store.export_labels(project)}
    assert exported == pressed
    orders = {r["item_id"]: r["shown_order"] for r in store.label_rows(project)}
    assert {o for o in orders.values()} == {"12", "21"}


def test_undo_removes_the_last_label_and_shows_that_item_again(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 5, overlap=0.0)
    client = client_for(store, store.add_rater(project, "alice"))
    first, _ = label_current(client, "left")
    second, _ = label_current(client, "right")
    page = client.get("/item").text
    r = client.post("/undo", data={"csrf": hidden(page, "csrf"), "label_id": hidden(page, "label_id")})
    assert r.status_code == 303 and r.headers["location"].endswith("&msg=undone")
    assert [lab.item_id for lab in store.export_labels(project)] == [f"item-{first:04d}"]
    again = client.get("/item?msg=undone").text
    assert shown_item(again)[0] == second and "last label was removed" in again
    number, swapped = label_current(client, "tie")
    assert number == second
    assert {lab.item_id: lab.label for lab in store.export_labels(project)}[f"item-{second:04d}"] == "tie"


def test_the_same_undo_posted_twice_removes_one_label(store: LabelStore, tmp_path: Path) -> None:
    """A double click on Undo sends the same form twice: the second is a no-op, not a second undo."""
    project = make_project(store, tmp_path, 6, overlap=0.0)
    client = client_for(store, store.add_rater(project, "alice"))
    for choice in ("left", "right", "tie", "left"):
        label_current(client, choice)
    page = client.get("/item").text
    form = {"csrf": hidden(page, "csrf"), "label_id": hidden(page, "label_id")}
    assert client.post("/undo", data=form).headers["location"].endswith("&msg=undone")
    again = client.post("/undo", data=form)
    assert again.status_code == 303 and again.headers["location"].endswith("&msg=stale")
    assert len(store.export_labels(project)) == 3
    assert "already undone" in client.get(again.headers["location"]).text
    # A fresh page offers the new last label, so undoing step by step still works.
    page = client.get("/item").text
    assert (
        client.post("/undo", data={"csrf": hidden(page, "csrf"), "label_id": hidden(page, "label_id")})
        .headers["location"]
        .endswith("&msg=undone")
    )
    assert len(store.export_labels(project)) == 2


def test_undo_of_an_older_label_or_without_an_id_changes_nothing(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 4, overlap=0.0)
    client = client_for(store, store.add_rater(project, "alice"))
    page = client.get("/item").text
    assert 'name="label_id"' not in page  # nothing labelled yet: nothing offered to undo
    label_current(client, "left")
    old_page = client.get("/item").text
    label_current(client, "right")
    r = client.post("/undo", data={"csrf": hidden(old_page, "csrf"), "label_id": hidden(old_page, "label_id")})
    assert r.headers["location"].endswith("&msg=stale") and len(store.export_labels(project)) == 2
    r = client.post("/undo", data={"csrf": hidden(old_page, "csrf")})
    assert r.headers["location"].endswith("&msg=nothing") and len(store.export_labels(project)) == 2


def test_undo_of_another_raters_label_changes_nothing(store: LabelStore, tmp_path: Path) -> None:
    """Answered as an undo of a label that is gone: whether a label id exists says nothing to a rater."""
    project = make_project(store, tmp_path, 4, overlap=0.0)
    other = make_project(store, tmp_path, 2, name="other")
    alice = client_for(store, store.add_rater(project, "alice"))
    bob = client_for(store, store.add_rater(project, "bob"))
    carol = client_for(store, store.add_rater(other, "carol"))
    label_current(alice, "left")
    label_current(bob, "right")
    label_current(carol, "tie")
    alice_label = hidden(alice.get("/item").text, "label_id")
    for thief in (bob, carol):  # same project, and another project
        page = thief.get("/item").text
        r = thief.post("/undo", data={"csrf": hidden(page, "csrf"), "label_id": alice_label})
        assert r.status_code == 303 and r.headers["location"].endswith("&msg=stale")
    assert sorted(lab.rater_id for lab in store.export_labels(project)) == ["alice", "bob"]
    assert len(store.export_labels(other)) == 1


def test_double_submit_stores_the_label_once(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 3, overlap=0.0)
    client = client_for(store, store.add_rater(project, "alice"))
    page = client.get("/item").text
    form = {"csrf": hidden(page, "csrf"), "assignment": hidden(page, "assignment"), "choice": "left"}
    assert client.post("/label", data=form).status_code == 303
    assert client.post("/label", data={**form, "choice": "right"}).status_code == 303
    labels = store.export_labels(project)
    assert len(labels) == 1 and labels[0].label in ("A", "B")
    assert labels[0].label == expected_fixed("left", shown_item(page)[1])


def test_overlap_share_goes_to_exactly_two_raters(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 50, overlap=0.2, seed=3)
    table = store.item_table(project)
    assert sum(it["needed"] == 2 for it in table) == 10 and sum(it["needed"] == 1 for it in table) == 40
    clients = [client_for(store, store.add_rater(project, name)) for name in ("a", "b", "c")]
    active = list(clients)
    while active:  # the raters take turns until nothing is left for any of them
        for client in list(active):
            page = client.get("/item").text
            if "All done" in page:
                active.remove(client)
                continue
            client.post(
                "/label", data={"csrf": hidden(page, "csrf"), "assignment": hidden(page, "assignment"), "choice": "tie"}
            )
    table = store.item_table(project)
    assert all(len(it["labels"]) == it["needed"] for it in table)
    assert len(store.export_labels(project)) == 60


def test_progress_break_and_sessions_are_recorded(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 6, overlap=0.0, break_after=2)
    client = client_for(store, store.add_rater(project, "alice"))
    page = client.get("/item").text
    assert "<b>0</b> labelled" in page and '<b id="left">6</b> left' in page and "Take a break" not in page
    label_current(client, "left")
    label_current(client, "right")
    page = client.get("/item").text
    assert "<b>2</b> labelled" in page and '<b id="left">4</b> left' in page and "Take a break" in page
    r = client.post("/break", data={"csrf": hidden(page, "csrf")})
    assert r.status_code == 200 and "Start a new session" in r.text
    page = client.get("/item").text
    assert "Take a break" not in page  # a new session has started
    label_current(client, "tie")
    rows = store.label_rows(project)
    assert len({r["session_id"] for r in rows}) == 2
    assert all(r["seconds"] is not None and r["seconds"] >= 0 for r in rows)
    counts = store.rater_counts(project)
    assert counts[0]["sessions"] == 2 and counts[0]["labels"] == 3


def test_score_task_keys_and_labels(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 2, task="score", overlap=0.0)
    client = client_for(store, store.add_rater(project, "alice"))
    page = client.get("/item").text
    assert 'data-key="3"' in page and "Fully helpful" in page and "Facts, numbers and code are right." in page
    assert shown_item(page)[1] is None
    r = client.post(
        "/label", data={"csrf": hidden(page, "csrf"), "assignment": hidden(page, "assignment"), "choice": "7"}
    )
    assert r.status_code == 422
    label_current(client, "3", explanation="clear and right")
    [label] = store.export_labels(project)
    assert label.label == 3 and label.explanation == "clear and right"


# ---- adjudication ------------------------------------------------------------------------------------


def test_adjudicator_reviews_closed_disagreements_only(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 3, overlap=1.0)  # every item goes to two raters
    alice = client_for(store, store.add_rater(project, "alice"))
    bob = client_for(store, store.add_rater(project, "bob"))
    judge = client_for(store, store.add_rater(project, "judy", adjudicator=True))
    labelled: dict[str, dict[int, str]] = {"alice": {}, "bob": {}}
    for name, client, choice in (("alice", alice, "tie"), ("bob", bob, "tie")):
        for _ in range(3):
            number, _swapped = label_current(client, choice)
            labelled[name][number] = "tie"
    # Everyone said tie: no disagreement between people. A judge that says A on item 0 is listed.
    store.attach_judge_verdicts(project, "run1", {"item-0000": {"j": "A"}, "item-0001": {"j": "tie"}})
    rows = store.disagreements(project)
    assert [(r["item_id"], r["reasons"]) for r in rows] == [("item-0000", ["judge j says A"])]
    page = judge.get("/adjudicate").text
    pks = {it["item_id"]: it["pk"] for it in store.item_table(project)}
    # Headed by a neutral handle: item ids may name the models.
    assert f"Item {pks['item-0000']} " in page and "judge j" in page and "item-000" not in page
    assert re.findall(r'name="item" value="(\d+)"', page) == [str(pks["item-0000"])]
    r = judge.post(
        "/adjudicate",
        data={"csrf": hidden(page, "csrf"), "item": pks["item-0000"], "label": "A", "reason": "answer 1 is right"},
    )
    assert r.status_code == 303
    assert store.disagreements(project)[0]["final"] == {
        "label": "A",
        "reason": "answer 1 is right",
        "adjudicator": "judy",
    }
    r = judge.post("/lists", data={"csrf": hidden(page, "csrf"), "name": "rubric-v1"})
    assert r.status_code == 303 and store.list_items(project, "rubric-v1") == ["item-0000"]
    # A non-adjudicator cannot post a final label even with their own valid CSRF token.
    alice_csrf = hidden(alice.get("/item").text, "csrf")
    assert (
        alice.post(
            "/adjudicate", data={"csrf": alice_csrf, "item": pks["item-0000"], "label": "B", "reason": "x"}
        ).status_code
        == 403
    )


def test_open_items_never_reach_the_review(store: LabelStore, tmp_path: Path) -> None:
    project = make_project(store, tmp_path, 1, overlap=1.0)
    alice = client_for(store, store.add_rater(project, "alice"))
    store.attach_judge_verdicts(project, "run1", {"item-0000": {"j": "A"}})
    label_current(alice, "tie")  # one of two labels: the item is still open
    assert store.disagreements(project) == []


def test_real_mtbench_items_show_no_model_names_votes_or_ids(
    store: LabelStore, tmp_path: Path, sample_dir: Path
) -> None:
    from juge.data.readers import read_cases
    from juge.judges.rubric import load_rubric
    from label_helpers import write_rubric

    mapping = {"id": "item_id", "output_1": "answer_1", "output_2": "answer_2", "group": "question_id"}
    cases = read_cases(sample_dir / "items.jsonl", mapping=mapping)[:40]
    project = store.create_project("mt", "pairwise", load_rubric(write_rubric(tmp_path / "r.toml")), cases)
    client = client_for(store, store.add_rater(project, "alice"))
    rater = store.rater(project, "alice")
    checked = 0
    for _ in range(15):
        page = client.get("/item").text
        case = store.next_assignment(rater).case  # the open assignment: the item on the page
        visible_text = " ".join(
            filter(None, [case.question, case.output_1, case.output_2, case.reference, case.source])
        )
        for secret in (case.meta["model_1"], case.meta["model_2"], case.id):
            if secret not in visible_text:
                assert secret not in page
                checked += 1
        assert "expert_" not in page and "author_" not in page and "human_ratings" not in page
        assert "gpt4_2023" not in page
        client.post(
            "/label", data={"csrf": hidden(page, "csrf"), "assignment": hidden(page, "assignment"), "choice": "tie"}
        )
    assert checked >= 30


def test_one_browser_labels_in_two_projects(store: LabelStore, tmp_path: Path) -> None:
    """Each project has its own login cookie, so signing in to a second project keeps the first."""
    first = make_project(store, tmp_path, 2, name="first")
    second = make_project(store, tmp_path, 2, task="score", name="second")
    browser = client_for(store, store.add_rater(first, "alice"))
    client_for_second = sign_in(browser, store.add_rater(second, "alice"))
    assert client_for_second.status_code == 303
    assert {c.name for c in browser.cookies.jar} == {f"{COOKIE}_80_{first.id}", f"{COOKIE}_80_{second.id}"}
    chooser = browser.get("/item")  # no project named: the page asks which
    assert chooser.status_code == 200 and f"/item?p={first.id}" in chooser.text and "second" in chooser.text
    for project, choice in ((first, "left"), (second, "2"), (first, "tie")):
        page = browser.get(f"/item?p={project.id}").text
        assert f'action="/label?p={project.id}"' in page
        r = browser.post(
            f"/label?p={project.id}",
            data={"csrf": hidden(page, "csrf"), "assignment": hidden(page, "assignment"), "choice": choice},
        )
        assert r.status_code == 303 and r.headers["location"] == f"/item?p={project.id}", r.text
    assert len(store.label_rows(first)) == 2 and [r["label"] for r in store.label_rows(second)] == ["2"]
    assert browser.get("/item?p=999").status_code == 401  # not signed in to that project
