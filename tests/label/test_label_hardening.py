"""The labelling app after the attack: sessions instead of tokens in cookies, revoking and rotating,
sign-out, guessing limits, rater names, bad numbers, adjudicators who also label, hidden characters."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from cli_helpers import run_cli
from juge.data.records import Case
from juge.label.app import COOKIE, SECURITY_HEADERS, create_app
from juge.label.db import LabelError, LabelStore
from juge.label.rubric import read_rubric
from label_helpers import hidden, make_project, sign_in, write_rubric


@pytest.fixture
def store(tmp_path: Path) -> LabelStore:
    s = LabelStore(f"sqlite:///{tmp_path / 'juge.db'}")
    yield s
    s.close()


def browser_for(store: LabelStore, token: str, base_url: str = "http://testserver") -> TestClient:
    client = TestClient(create_app(store), follow_redirects=False, base_url=base_url)
    r = sign_in(client, token)
    assert r.status_code == 303, r.text
    return client


def label_current(client: TestClient, choice: str) -> None:
    page = client.get("/item").text
    r = client.post(
        "/label", data={"csrf": hidden(page, "csrf"), "assignment": hidden(page, "assignment"), "choice": choice}
    )
    assert r.status_code == 303, r.text


def has_security_headers(response) -> bool:
    return all(response.headers.get(k) == v for k, v in SECURITY_HEADERS.items())


# ---- the login cookie ------------------------------------------------------------------------------


def test_the_cookie_holds_a_server_side_session_never_the_token(store, tmp_path) -> None:
    project = make_project(store, tmp_path, 2)
    token = store.add_rater(project, "alice")
    client = TestClient(create_app(store), follow_redirects=False, base_url="http://testserver:8765")
    r = sign_in(client, token)
    [cookie] = [c for c in r.headers.get_list("set-cookie") if c.startswith(f"{COOKIE}_8765_{project.id}=")]
    value = cookie.split(";")[0].split("=", 1)[1]
    attributes = cookie.lower()
    assert token not in cookie and value
    assert "httponly" in attributes and "samesite=strict" in attributes
    max_age = int(attributes.split("max-age=")[1].split(";")[0])
    assert 0 < max_age <= 24 * 3600
    assert store.rater_by_login(value).name == "alice"
    assert client.get("/item").status_code == 200


def test_a_token_or_a_cookie_of_another_port_signs_nobody_in(store, tmp_path) -> None:
    project = make_project(store, tmp_path, 2)
    token = store.add_rater(project, "alice")
    other_port = browser_for(store, token, base_url="http://testserver:9999")
    session = next(c.value for c in other_port.cookies.jar if c.name.startswith(COOKIE))
    here = TestClient(create_app(store), follow_redirects=False, base_url="http://testserver:8765")
    here.cookies.set(f"{COOKIE}_9999_{project.id}", session)  # the browser sends every port's cookies
    assert here.get("/item").status_code == 401
    here.cookies.clear()
    here.cookies.set(f"{COOKIE}_8765_{project.id}", token)  # a raw token (what earlier versions stored)
    assert here.get("/item").status_code == 401


def test_a_login_expires(store, tmp_path) -> None:
    project = make_project(store, tmp_path, 2)
    store.add_rater(project, "alice")
    rater = store.rater(project, "alice")
    session = store.open_login(rater, now=1000.0)
    assert store.rater_by_login(session, now=1001.0) is not None
    assert store.rater_by_login(session, now=1000.0 + 13 * 3600) is None


def test_sign_out_closes_the_session_on_the_server(store, tmp_path) -> None:
    project = make_project(store, tmp_path, 2)
    client = browser_for(store, store.add_rater(project, "alice"))
    session = next(c.value for c in client.cookies.jar if c.name.startswith(COOKIE))
    page = client.get("/item").text
    assert 'action="/logout' in page
    r = client.post(f"/logout?p={project.id}", data={"csrf": hidden(page, "csrf")})
    assert r.status_code == 200 and "signed out" in r.text
    assert store.rater_by_login(session) is None
    client.cookies.set(f"{COOKIE}_80_{project.id}", session)  # a copy of the cookie kept elsewhere
    assert client.get("/item").status_code == 401


def test_revoke_and_rotate_from_the_command_line(store, tmp_path, monkeypatch, capsys) -> None:
    project = make_project(store, tmp_path, 2)
    token = store.add_rater(project, "alice")
    client = browser_for(store, token)
    url = f"sqlite:///{tmp_path / 'juge.db'}"
    code, out, err = run_cli(monkeypatch, capsys, "label", "revoke-rater", "alice", "--db-url", url)
    assert code == 0, err
    assert client.get("/item").status_code == 401
    assert TestClient(create_app(store)).get("/login", params={"token": token}).status_code == 401
    assert store.is_revoked(store.rater(project, "alice"))
    code, out, err = run_cli(monkeypatch, capsys, "label", "rotate-link", "alice", "--db-url", url)
    assert code == 0, err
    new_token = out.strip().splitlines()[-1].split("token=")[1]
    assert new_token != token
    assert TestClient(create_app(store)).get("/login", params={"token": token}).status_code == 401
    assert browser_for(store, new_token).get("/item").status_code == 200
    code, out, err = run_cli(monkeypatch, capsys, "label", "revoke-rater", "nobody", "--db-url", url)
    assert code == 2 and "nobody" in err


def test_failed_sign_ins_are_limited_per_address(store, tmp_path) -> None:
    project = make_project(store, tmp_path, 2)
    token = store.add_rater(project, "alice")
    client = TestClient(create_app(store), follow_redirects=False)
    statuses = [client.get("/login", params={"token": f"guess-{k}"}).status_code for k in range(12)]
    assert statuses[:10] == [401] * 10 and statuses[10:] == [429, 429]
    blocked = client.get("/login", params={"token": token})  # even the right token waits now
    assert blocked.status_code == 429 and has_security_headers(blocked)


# ---- names and numbers ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "   ", "x" * 65, "ali\u202ece", "tab\tname", " alice", "line\nbreak"])
def test_bad_rater_names_are_refused(store, tmp_path, name, monkeypatch, capsys) -> None:
    project = make_project(store, tmp_path, 2)
    with pytest.raises(LabelError):
        store.add_rater(project, name)
    code, out, err = run_cli(
        monkeypatch, capsys, "label", "add-rater", name, "--db-url", f"sqlite:///{tmp_path / 'juge.db'}"
    )
    assert code == 2


def test_rater_names_of_1_to_64_printable_characters_are_accepted(store, tmp_path) -> None:
    project = make_project(store, tmp_path, 2)
    for name in ("a", "x" * 64, "Zoë O'Brien", "李雷"):
        store.add_rater(project, name)


@pytest.mark.parametrize("field", ["assignment", "label_id"])
def test_numbers_out_of_range_are_400_with_the_security_headers(store, tmp_path, field) -> None:
    project = make_project(store, tmp_path, 2)
    client = browser_for(store, store.add_rater(project, "alice"))
    page = client.get("/item").text
    huge = "9" * 40
    if field == "assignment":
        r = client.post("/label", data={"csrf": hidden(page, "csrf"), "assignment": huge, "choice": "tie"})
    else:
        r = client.post("/undo", data={"csrf": hidden(page, "csrf"), "label_id": huge})
    assert r.status_code == 400 and has_security_headers(r)


# ---- adjudicators who also label ------------------------------------------------------------------


def test_an_adjudicator_who_labels_never_sees_the_others_labels_on_their_items(store, tmp_path) -> None:
    project = make_project(store, tmp_path, 2, overlap=1.0)  # every item to two raters
    bob = browser_for(store, store.add_rater(project, "bob"))
    judy = browser_for(store, store.add_rater(project, "judy", adjudicator=True))
    for _ in range(2):
        label_current(bob, "tie")
        label_current(judy, "left")  # A or B, whatever side she saw: never a tie
    # Whatever side each saw, bob's and judy's labels differ only if the sides matched; make sure some disagree.
    disputed = [r["item_id"] for r in store.disagreements(project)]
    assert disputed, "the two raters should disagree on some item"
    page = judy.get("/adjudicate").text
    for item_id in disputed:
        assert item_id not in page  # judy labelled every item: none is shown to her
    assert 'name="item"' not in page and "(0 closed items)" in page  # nor counted
    pks = {it["item_id"]: it["pk"] for it in store.item_table(project)}
    r = judy.post(
        "/adjudicate", data={"csrf": hidden(page, "csrf"), "item": pks[disputed[0]], "label": "A", "reason": "mine"}
    )
    assert r.status_code == 422 and store.adjudicated(project) == []


def test_an_undo_of_a_label_whose_item_is_in_review_is_an_ordinary_undo(store, tmp_path) -> None:
    """Refusing it told the rater that the others disagreed (issue 27): the label is removed as any last label
    is, its item reopens (so it leaves the review) and comes back to the rater first."""
    project = make_project(store, tmp_path, 2, overlap=1.0)
    bob = browser_for(store, store.add_rater(project, "bob"))
    judy = browser_for(store, store.add_rater(project, "judy", adjudicator=True))
    label_current(bob, "tie")
    label_current(judy, "tie")
    store.attach_judge_verdicts(project, "run1", {"item-0000": {"j": "A"}})  # now in review
    assert [r["item_id"] for r in store.disagreements(project)] == ["item-0000"]
    page = judy.get("/item").text
    r = judy.post("/undo", data={"csrf": hidden(page, "csrf"), "label_id": hidden(page, "label_id")})
    assert r.status_code == 303 and r.headers["location"].endswith("&msg=undone")
    assert [row["rater"] for row in store.label_rows(project)] == ["bob"]
    assert store.disagreements(project) == []
    assert "Question number 0?" in judy.get("/item").text


def test_an_adjudicator_can_adjudicate_only_listed_items(store, tmp_path) -> None:
    project = make_project(store, tmp_path, 3, overlap=1.0)
    store.add_rater(project, "bob")
    judy = browser_for(store, store.add_rater(project, "judy", adjudicator=True))
    page = judy.get("/adjudicate").text
    pks = {it["item_id"]: it["pk"] for it in store.item_table(project)}
    for handle in (pks["item-0001"], 10**9):  # nobody labelled item-0001: not in review; no such item
        r = judy.post("/adjudicate", data={"csrf": hidden(page, "csrf"), "item": handle, "label": "A", "reason": "x"})
        assert r.status_code == 422
    assert store.adjudicated(project) == []


# ---- hidden characters ----------------------------------------------------------------------------


RTL = "Price: \u202e$7 is wrong\u202c and a zero\u200bwidth"


def test_bidi_and_hidden_characters_are_shown_on_the_rater_and_review_pages(store, tmp_path) -> None:
    rubric = read_rubric(write_rubric(tmp_path / "rubric.toml"), "pairwise")
    case = Case(id="c1", question=f"Q {RTL}", output_1=f"one {RTL}", output_2="two")
    project = store.create_project("p", "pairwise", rubric, [case], overlap=1.0)
    alice = browser_for(store, store.add_rater(project, "alice"))
    bob = browser_for(store, store.add_rater(project, "bob"))
    judy = browser_for(store, store.add_rater(project, "judy", adjudicator=True))
    page = alice.get("/item").text
    assert "\u202e" not in page and "\u200b" not in page
    assert page.count('class="hidden-char"') >= 4 and "U+202E" in page and "U+200B" in page
    label_current(alice, "left")
    page = bob.get("/item").text
    r = bob.post(
        "/label", data={"csrf": hidden(page, "csrf"), "assignment": hidden(page, "assignment"), "choice": "tie"}
    )
    assert r.status_code == 303
    review = judy.get("/adjudicate").text
    assert "U+202E" in review and "\u202e" not in review


def test_reports_show_hidden_characters(tmp_path) -> None:
    from juge.reports.render import md_text
    from juge.visible import visible_html, visible_text

    assert "\u202e" not in md_text(RTL) and "U+202E" in md_text(RTL)
    assert visible_text("a\u202eb") == "a⟨U+202E⟩b"
    shown = str(visible_html("<b>\u202e"))
    assert "&lt;b&gt;" in shown and "U+202E" in shown and "\u202e" not in shown
    assert visible_html("plain") == "plain" and visible_html(3) == 3
