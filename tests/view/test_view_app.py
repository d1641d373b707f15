"""`juge view` through FastAPI's TestClient: the one-time link, read-only routes, pages, filters, keyset pages,
escaping of hostile text, compare and the calibration's links to the items behind a figure."""

from __future__ import annotations

import hashlib
import html
import json
import re
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from view_helpers import HOSTILE_ID, links, login, make_calibration, make_policy, make_store

from juge.store import open_store
from juge.view.app import create_app
from juge.view.shown import read_shown

TOKEN = "the-one-time-token"


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    make_store(tmp_path / "juge.db")
    return tmp_path / "juge.db"


@pytest.fixture()
def app(db: Path, tmp_path: Path):  # noqa: ANN201
    store = open_store(db, must_exist=True)
    store.read_only()
    app = create_app(store, read_shown([make_calibration(tmp_path / "study")]), token=TOKEN)
    yield app
    store.close()


@pytest.fixture()
def client(app) -> TestClient:  # noqa: ANN001
    client = TestClient(app, base_url="http://127.0.0.1:8766")
    assert login(client, TOKEN).status_code == 303
    return client


def test_every_page_needs_the_session_and_the_token_works_once(app) -> None:  # noqa: ANN001
    stranger = TestClient(app, base_url="http://127.0.0.1:8766")
    for path in ("/", "/runs/ra", f"/runs/ra/cases/{HOSTILE_ID}", "/compare?a=ra&b=rb", "/studies/0"):
        page = stranger.get(path)
        assert page.status_code == 401, path
        assert "alert" not in page.text
    assert login(stranger, "wrong").status_code == 401
    first = TestClient(app, base_url="http://127.0.0.1:8766")
    opened = login(first, TOKEN)
    assert opened.status_code == 303 and opened.headers["location"] == "/"
    cookie = opened.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and TOKEN.lower() not in cookie
    assert first.get("/").status_code == 200
    assert login(first, TOKEN).status_code == 303  # the same browser opening the link again is sent on
    assert login(TestClient(app, base_url="http://127.0.0.1:8766"), TOKEN).status_code == 401  # spent


def test_no_route_writes_and_the_store_is_untouched(app, client, db) -> None:  # noqa: ANN001
    for route in app.routes:
        methods = getattr(route, "methods", None) or set()
        assert methods <= {"GET", "HEAD"}, (route.path, methods)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    for method in ("post", "put", "delete", "patch"):
        for path in ("/", "/runs/ra", f"/runs/ra/cases/{HOSTILE_ID}", "/compare"):
            assert getattr(client, method)(path).status_code == 405, (method, path)
    for path in ("/", "/runs/ra", f"/runs/ra/cases/{HOSTILE_ID}", "/compare?a=ra&b=rb", "/studies/0"):
        assert client.get(path).status_code == 200, path
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    with pytest.raises(Exception, match="readonly|read-only|read only"):
        app.state.store.save_labels([])  # the connection itself refuses writes
        app.state.store.conn.execute("DELETE FROM runs")


def test_runs_list_filters(client) -> None:  # noqa: ANN001
    page = client.get("/").text
    assert links(page, r"^/runs/ra$") and links(page, r"^/runs/rb$")
    assert "/runs/ra" not in client.get("/?status=running").text
    assert "/runs/ra" in client.get("/?kind=eval&eval=support").text
    assert "/runs/ra" not in client.get("/?kind=tune").text
    assert "/runs/ra" not in client.get("/?since=2999-01-01").text
    assert "/runs/ra" in client.get("/?until=2999-01-01").text


def case_ids(page: str) -> list[str]:
    return re.findall(r'class="case-link" href="/runs/\w+/cases/([^"]+)"', page)


def test_run_page_shows_versions_gate_cost_and_filters_the_table(client) -> None:  # noqa: ANN001
    page = client.get("/runs/ra")
    assert page.status_code == 200
    text = page.text
    for shown in ("model-2026-01", "abc123def456", "dddddddddddd", "min_pass_rate 0.5", "passed", "800 / 160"):
        assert shown in text, shown
    assert sorted(case_ids(text)) == sorted([*(f"c{k}" for k in range(7)), HOSTILE_ID])
    assert case_ids(client.get("/runs/ra?outcome=unparsed").text) == ["c5"]
    assert case_ids(client.get("/runs/ra?outcome=error").text) == ["c6"]
    assert case_ids(client.get("/runs/rb?verdict=FAIL").text) == ["c0"]
    assert sorted(case_ids(client.get("/runs/ra?category=shipping").text)) == ["c0", "c2", "c4", "c6"]
    assert case_ids(client.get("/runs/ra?judge=nobody").text) == []
    assert client.get("/runs/ra?outcome=maybe").status_code == 404
    assert client.get("/runs/nothere").status_code == 404
    assert client.get("/runs/ra?after=notjson").status_code == 400


def test_pages_are_keyset_pages_that_cover_the_run_once(client) -> None:  # noqa: ANN001
    seen: list[str] = []
    url = "/runs/ra?size=3"
    while url:
        page = client.get(url).text
        seen += case_ids(page)
        nxt = links(page, "after=")
        url = html.unescape(nxt[0]) if nxt else ""
        if url.startswith("?"):
            url = "/runs/ra" + url
    assert seen == sorted(seen) and len(seen) == len(set(seen)) == 8


def test_case_page_shows_the_raw_text_prompt_and_fields_inert(client) -> None:  # noqa: ANN001
    page = client.get(f"/runs/ra/cases/{HOSTILE_ID}").text
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    assert "\u202e" not in page and "U+202E" in page  # the override is named, not acting
    assert "Grade this:" in page  # the prompt as sent, found by its payer
    assert "Grade this:" in client.get(f"/runs/rb/cases/{HOSTILE_ID}").text  # logged without one: by its meta
    assert "Grade this:" not in client.get("/runs/ra/cases/c1").text
    assert "verdict [[PASS]]" in page  # the raw judge text
    assert page.count("question") >= 1 and "billing" in page


def test_compare_page_lists_transitions_and_the_changed_case(client) -> None:  # noqa: ANN001
    page = client.get("/compare?a=ra&b=rb").text
    assert "pass-&gt;fail" in page and page.count('class="changed-case"') == 1
    assert links(page, r"^/runs/rb/cases/c0$")
    assert client.get("/compare?a=ra").status_code == 400


def test_a_category_links_to_its_disagreements_with_the_raw_answers(client) -> None:  # noqa: ANN001
    start = client.get("/").text
    study = client.get(links(start, r"^/studies/0$")[0]).text
    category = html.unescape(links(study, r"category=writing")[0])
    page = client.get(category).text
    assert page.count('class="card disagreement"') == 10  # every dev item: a tie or B against the people's A
    assert not links(page, r"^/runs/")  # the study's items are no case of a stored run here
    assert "order 12" in page and "order 21" in page and "&lt;b&gt;bold&lt;/b&gt;" in page  # raw, escaped
    order = html.unescape(links(study, r"order_dependent=true")[0])
    assert client.get(order).text.count('class="card disagreement"') == 5  # the items whose verdict flipped
    assert client.get("/studies/0/items?judge=nobody").status_code == 404
    assert client.get("/studies/9").status_code == 404


def test_policy_and_its_holdout_test_link_to_the_items_routed_to_a_person(db: Path, tmp_path: Path) -> None:
    policy, holdout = make_policy(tmp_path / "policy")
    store = open_store(db, must_exist=True)
    store.read_only()
    client = TestClient(create_app(store, read_shown(policies=[policy], tests=[holdout]), token=TOKEN))
    login(client, TOKEN)
    page = client.get("/policies/0").text
    assert "writing" in page and "person" in page
    assert links(page, r"^/runs/r[ab]\?category=writing$")  # the category's cases in the newest runs
    test = client.get(links(page, r"^/tests/0$")[0]).text
    person = html.unescape(links(test, r"route=person$")[0])
    assert client.get("/tests/0" + person).text.count('class="route-person"') == 10
    assert client.get("/tests/0?route=judge").text.count('class="route-person"') == 0
    decision = html.unescape(links(test, r"decision=person")[0])
    assert client.get("/tests/0" + decision).text.count('class="route-person"') > 0
    store.close()


def test_view_server_refuses_a_file_that_is_not_a_calibration(tmp_path: Path, db: Path) -> None:
    from juge.errors import InputError
    from juge.view.api import view_server

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hello": 1}))
    with pytest.raises(InputError, match="bad.json"):
        view_server(db, port=0, calibrations=[bad])
    with pytest.raises(InputError, match="no juge database"):
        view_server(tmp_path / "none.db", port=0)


def test_a_filter_reads_a_window_at_a_time_and_the_pages_go_on_to_every_match(db: Path) -> None:
    with open_store(db, must_exist=True) as store:
        found, after, reads = [], None, 0
        while True:
            rows, resume = store.judgment_page("ra", after=after, limit=2, outcome="error", window=3)
            found += [r["item_id"] for r in rows]
            reads += 1
            if len(rows) == 2:
                after = [rows[-1][k] for k in ("item_id", "judge", "ord", "repeat")]
            elif resume is not None:
                after = list(resume)
            else:
                break
        assert found == ["c6"] and reads == 3  # windows of 3 over 8 judgments: c-hostile..c1, c2..c4, c5..c6
        rows, resume = store.judgment_page("ra", limit=50, outcome="error")  # the default window holds the run
        assert [r["item_id"] for r in rows] == ["c6"] and resume is None


def test_labels_of_an_attached_project_and_of_a_labels_file_sit_beside_the_verdicts(db: Path, tmp_path: Path) -> None:
    from view_helpers import cases

    from juge.label.db import LabelStore
    from juge.label.rubric import read_rubric
    from juge.view.labels import find_label_store
    from label_helpers import write_rubric

    labels = LabelStore(f"sqlite:///{db}")  # `juge label` keeps its projects in the run store's file by default
    project = labels.create_project(
        "support-q4", "passfail", read_rubric(write_rubric(tmp_path / "r.toml"), "passfail"), cases(), overlap=0
    )
    rater = labels.rater_by_token(labels.add_rater(project, "alice"))
    while (assignment := labels.next_assignment(rater)) is not None:
        verdict = "FAIL" if assignment.case.id == "c1" else "PASS"
        labels.save_label(rater, assignment.id, verdict, shown_order="", session_id=labels.current_session(rater))
    labels.attach_judge_verdicts(project, "ra", {c.id: {"g": "PASS"} for c in cases()})
    labels.close()
    file = tmp_path / "more.jsonl"
    file.write_text(json.dumps({"item_id": "c1", "rater_id": "bob", "label": "FAIL"}) + "\n")

    store = open_store(db, must_exist=True)
    found = find_label_store(store, None)
    assert found is not None
    store.read_only()
    client = TestClient(create_app(store, read_shown(labels=file), token=TOKEN, label_store=found))
    login(client, TOKEN)
    case = client.get("/runs/ra/cases/c1").text
    people = case[case.index('id="labels"') :]
    assert "project support-q4" in people and "alice" in people and "bob" in people and "FAIL" in people
    run = client.get("/runs/ra?category=billing").text
    assert "support-q4" in run and re.search(r'class="people">alice <b>FAIL</b>, bob <b>FAIL</b>', run)
    other = client.get("/runs/rb/cases/c1").text  # rb was not attached: only the file's label
    assert "alice" not in other and "bob" in other
    store.close()
    found.close()


def test_no_label_store_is_made_where_there_is_none(db: Path) -> None:
    from juge.view.labels import find_label_store

    with open_store(db, must_exist=True) as store:
        assert find_label_store(store, None) is None
        tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not any(t.startswith("label_") for t in tables)


def test_a_pass_fail_calibration_shows_failures_caught_and_links_a_category_to_its_disagreements(
    db: Path, tmp_path: Path
) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "policy"))
    from grade_data import PASSFAIL_DEV, PASSFAIL_HOLDOUT, write_study

    import juge.api

    items, labels, judgments = write_study(tmp_path / "pf", PASSFAIL_DEV + PASSFAIL_HOLDOUT)
    calibration = juge.api.calibrate(items=items, judgments=judgments, labels=labels, resamples=50)
    calibration.save(tmp_path / "pf.json")
    (key,) = calibration.judges
    rows = calibration.judges[key].disagreements or []
    category = rows[0].category
    store = open_store(db, must_exist=True)
    client = TestClient(create_app(store, read_shown([tmp_path / "pf.json"]), token=TOKEN))
    login(client, TOKEN)
    study = client.get("/studies/0").text
    assert "failures caught" in study and "false flags" in study
    page = client.get(html.unescape(links(study, rf"category={category}$")[0])).text
    assert page.count('class="card disagreement"') == sum(r.category == category for r in rows)
    assert "answer</h3>" in page and '<pre class="text">PASS\nbecause</pre>' in page  # the raw answer
    assert not links(page, r"^/runs/")
    store.close()


def test_compare_shows_the_prompt_diff_when_the_judge_changed(db: Path) -> None:
    from view_helpers import cases

    from juge.store import Store

    with Store(db) as store:  # rc: run ra's cases again with a new template of judge g
        store.create_run(dataset_hash="d" * 16, juge_version="test", cases=cases(), run_id="rc")
        for j in store.judgments("ra"):
            store.save_judgment("rc", j.model_copy(update={"template_hash": "ffff0000ffff0000"}))
        store.log_call(
            run_id="rc", cache_key="k-rc", provider="openai", model="model-2026-01", attempt=1,
            request={"messages": [{"role": "user", "content": "Grade this strictly: <script>x</script>"}],
                     "meta": {"judge": "g", "item_id": HOSTILE_ID, "order": None}},
            response={"choices": []}, error=None, status=200, latency=0.1,
        )  # fmt: skip
    store = open_store(db, must_exist=True)
    store.read_only()
    client = TestClient(create_app(store, read_shown(), token=TOKEN))
    login(client, TOKEN)
    page = client.get("/compare?a=ra&b=rc").text
    diff = page[page.index('id="prompt-diff"') :]
    assert "NOT COMPARABLE" in page and "ffff0000ffff" in diff
    assert '<span class="add">+Grade this strictly: &lt;script&gt;x&lt;/script&gt;</span>' in diff
    assert '<span class="del">-Grade this: ' in diff
    store.close()
