"""Blindness, route by route: nothing a plain rater or an adjudicator can request answers differently when the
others agreed with their labels or disagreed (a person, or an attached judge run).

Issue 27: undo answered 403 "in review" on an item whose partner disagreed and 303 "stale" when nobody did, and
the review page counted disagreements on the adjudicator's own items. Here one labelling history is built in
several worlds that differ only in the other raters' labels and the judge's verdicts on the observer's items,
every secret the app draws is made deterministic, and the same requests (every route the app has, with every
label id and item handle there is) must get byte-identical answers in every world.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from sqlalchemy import select
from starlette.routing import Mount

import juge.label.app
import juge.label.db
from juge.label.app import create_app
from juge.label.db import LabelStore, Rater, labels, raters
from label_helpers import hidden, make_project

OTHER = {"PASS": "FAIL", "A": "B"}  # the opposite of the label everyone gives in the agreeing world
WORLDS = ("agree", "people disagree", "judge disagrees")
RATERS = ("pat", "quin", "judy", "rita", "kim")


class CountingSecrets:
    """Stands in for `secrets` in the app and the store: the same draws in every world, so answers compare."""

    def __init__(self) -> None:
        self.n = itertools.count()

    def token_urlsafe(self, nbytes: int = 32) -> str:
        return f"tok{next(self.n):08d}"

    def token_hex(self, nbytes: int = 32) -> str:
        return f"{next(self.n):016x}"

    def randbelow(self, n: int) -> int:
        return next(self.n) % n


def world(tmp: Path, task: str, observer: str, kind: str) -> tuple[LabelStore, dict[str, Any]]:
    """A project where `observer` (pat, a plain rater, or judy, an adjudicator) labelled two items and has one
    open. Their partners (quin on pat's items, rita on judy's) and a judge agree with them in world "agree";
    in the others a partner or the judge disagrees on the observer's items (for pat, on judy's items too:
    a plain rater sees nothing of anyone). quin and rita also disagree on an item of their own in every world,
    so the review has a row whatever happens."""
    store = LabelStore(f"sqlite:///{tmp / f'{observer}-{kind}.db'}")
    project = make_project(store, tmp, 8, task=task, overlap=1.0, overlap_raters=2)
    tokens = {name: store.add_rater(project, name, adjudicator=name in ("judy", "kim")) for name in RATERS}
    who = {name: store.rater(project, name) for name in ("pat", "quin", "judy", "rita")}
    mine = "A" if task == "pairwise" else "PASS"
    varied: set[str] = set()

    def label(rater: Rater, value: str) -> str:
        assignment = store.next_assignment(rater)
        assert assignment is not None
        store.save_label(rater, assignment.id, value)
        return assignment.case.id

    def partner(rater: Rater, vary: bool) -> None:
        item = label(rater, OTHER[mine] if vary and kind == "people disagree" else mine)
        if vary:
            varied.add(item)

    pat_items = [label(who["pat"], mine) for _ in range(2)]
    for _ in pat_items:  # quin gets pat's two items (the first free slots)
        partner(who["quin"], vary=observer == "pat")
    judy_items = [label(who["judy"], mine) for _ in range(2)]
    for _ in judy_items:
        partner(who["rita"], vary=True)
    shared = label(who["quin"], mine)  # quin and rita share a fifth item and always disagree on it
    assert label(who["rita"], OTHER[mine]) == shared
    own = pat_items if observer == "pat" else judy_items
    assert varied == set(pat_items + judy_items if observer == "pat" else judy_items)
    judged = {i: OTHER[mine] if kind == "judge disagrees" and i in varied else mine for i in pat_items + judy_items}
    store.attach_judge_verdicts(project, "run1", {i: {"judge-x": v} for i, v in judged.items()})
    # The worlds really differ on the observer's items: what the test says it compares.
    in_review = {row["item_id"] for row in store.disagreements(project)}
    assert set(own) <= in_review if kind != "agree" else not set(own) & in_review
    return store, {"project": project, "own": own, "token": tokens[observer], "mine": mine}


def route_keys(app: Any) -> set[tuple[str, str]]:
    """Every (method, path) the app answers, read from its routes (static files as one mount)."""
    keys: set[tuple[str, str]] = set()
    for route in app.routes:
        if isinstance(route, APIRoute):
            keys |= {(m, route.path) for m in route.methods}
        elif isinstance(route, Mount):
            keys.add(("GET", route.path))
        else:
            raise AssertionError(f"a route of an unknown kind: {route!r}; add it to the probes")
    return keys


Probe = Callable[[TestClient, dict[str, Any]], Iterator[Any]]


def probes_for(store: LabelStore, project: Any, token: str) -> dict[tuple[str, str], Probe]:
    """Per route, the requests to send: every label id and item handle in the store, right and wrong forms."""

    def ids() -> tuple[list[int], list[int]]:
        with store.engine.connect() as c:
            rows = c.execute(
                select(labels.c.id, raters.c.name).join(raters, raters.c.id == labels.c.rater_id).order_by(labels.c.id)
            ).all()
        return [r.id for r in rows], [it["pk"] for it in store.item_table(project)]

    def csrf(client: TestClient) -> str:
        return hidden(client.get("/item").text, "csrf")

    def login_page(client: TestClient, ctx: dict[str, Any]) -> Iterator[Any]:
        yield client.get("/login", params={"token": token})
        yield client.get("/login", params={"token": "not-a-token"})
        yield client.get("/login")

    def login(client: TestClient, ctx: dict[str, Any]) -> Iterator[Any]:
        yield client.post("/login", data={"token": token, "nonce": "forged"})
        page = client.get("/login", params={"token": token})
        if page.status_code == 200:
            yield client.post("/login", data={"token": token, "nonce": hidden(page.text, "nonce")})

    def home(client: TestClient, ctx: dict[str, Any]) -> Iterator[Any]:
        yield client.get("/")
        yield client.get("/", params={"p": project.id})

    def item(client: TestClient, ctx: dict[str, Any]) -> Iterator[Any]:
        for msg in ("", "undone", "stale", "nothing", "released"):
            yield client.get("/item", params={"p": project.id, "msg": msg})

    def label(client: TestClient, ctx: dict[str, Any]) -> Iterator[Any]:
        page = client.get("/item").text
        token_ = hidden(page, "csrf")
        choice = re.findall(r'name="choice" value="([^"]+)"', page)[0]
        current = hidden(page, "assignment")
        yield client.post("/label", data={"csrf": token_, "assignment": current, "choice": "nonsense"})
        for assignment in range(1, 20):  # others' assignments (403) and unknown ones
            if str(assignment) != current:
                yield client.post("/label", data={"csrf": token_, "assignment": assignment, "choice": choice})
        yield client.post("/label", data={"csrf": token_, "assignment": current, "choice": choice})
        yield client.post("/label", data={"csrf": token_, "assignment": current, "choice": choice})  # twice

    def undo(client: TestClient, ctx: dict[str, Any]) -> Iterator[Any]:
        token_ = csrf(client)
        label_ids, _ = ids()
        offered = hidden(client.get("/item").text, "label_id")
        for label_id in [*label_ids, 10**6]:  # every label there is, the page's own last label at the end
            if str(label_id) != offered:
                yield client.post("/undo", data={"csrf": token_, "label_id": label_id})
        yield client.post("/undo", data={"csrf": token_})
        yield client.post("/undo", data={"csrf": token_, "label_id": offered})  # u on the page: undone
        yield client.post("/undo", data={"csrf": token_, "label_id": offered})  # and again: stale

    def take_break(client: TestClient, ctx: dict[str, Any]) -> Iterator[Any]:
        yield client.post("/break", data={"csrf": "wrong"})
        yield client.post("/break", data={"csrf": csrf(client)})

    def review(client: TestClient, ctx: dict[str, Any]) -> Iterator[Any]:
        for msg in ("", "saved", "list"):
            yield client.get("/adjudicate", params={"msg": msg})

    def adjudicate(client: TestClient, ctx: dict[str, Any]) -> Iterator[Any]:
        token_ = csrf(client)
        _, handles = ids()
        for handle in [*handles, 10**6]:  # own items, listed, open, unknown
            yield client.post("/adjudicate", data={"csrf": token_, "item": handle, "label": ctx["mine"], "reason": "r"})
        yield client.post("/adjudicate", data={"csrf": token_, "item": handles[0], "label": "nonsense", "reason": "r"})
        yield client.post("/adjudicate", data={"csrf": token_, "item_id": ctx["own"][0], "label": "A", "reason": "r"})

    def lists(client: TestClient, ctx: dict[str, Any]) -> Iterator[Any]:
        token_ = csrf(client)
        yield client.post("/lists", data={"csrf": token_, "name": "mine"})
        yield client.post("/lists", data={"csrf": token_, "name": ""})

    def static(client: TestClient, ctx: dict[str, Any]) -> Iterator[Any]:
        for name in ("label.css", "label.js", "missing.css"):
            yield client.get(f"/static/{name}")

    def logout(client: TestClient, ctx: dict[str, Any]) -> Iterator[Any]:
        yield client.post("/logout", data={"csrf": "wrong"})
        yield client.post("/logout", data={"csrf": csrf(client)})

    return {
        ("GET", "/login"): login_page,
        ("POST", "/login"): login,
        ("GET", "/"): home,
        ("GET", "/item"): item,
        ("POST", "/label"): label,
        ("POST", "/undo"): undo,
        ("POST", "/break"): take_break,
        ("GET", "/adjudicate"): review,
        ("POST", "/adjudicate"): adjudicate,
        ("POST", "/lists"): lists,
        ("GET", "/static"): static,
        ("POST", "/logout"): logout,  # last: it signs the observer out
    }


HEADERS = ("location", "set-cookie", "content-type", "content-length", "content-security-policy", "cache-control")


def no_clock(header: str) -> str:
    """A cookie's `expires=` date is the clock's (Max-Age, compared, says the same)."""
    return re.sub(r"expires=[^;]*; ", "", header)


def answer(response: Any) -> tuple[Any, ...]:
    """What a client can read from a response: status, the headers that matter, the body."""
    headers = tuple((k, tuple(map(no_clock, response.headers.get_list(k)))) for k in HEADERS)
    return response.request.method, str(response.request.url), response.status_code, headers, response.content


def transcript(tmp: Path, task: str, observer: str, kind: str, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every answer the observer gets, route by route, each followed by a fresh look at their pages."""
    fake = CountingSecrets()
    monkeypatch.setattr(juge.label.db, "secrets", fake)
    monkeypatch.setattr(juge.label.app, "secrets", fake)
    store, ctx = world(tmp, task, observer, kind)
    try:
        app = create_app(store)
        probes = probes_for(store, ctx["project"], ctx["token"])
        assert set(probes) == route_keys(app), "a route without probes: add it to probes_for"
        client = TestClient(app, follow_redirects=False)
        out: list[Any] = []
        looks = ("/item", "/adjudicate")
        for key, probe in probes.items():
            for response in probe(client, ctx):
                out.append((key, answer(response)))
                if response.status_code == 303:  # something may have changed: look at the pages again
                    out += [(key, answer(client.get(look))) for look in looks]
            out += [(key, answer(client.get(look))) for look in looks]
        return out
    finally:
        store.close()


@pytest.mark.parametrize("observer", ["pat", "judy"])
def test_no_route_answers_differently_when_the_others_disagreed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, observer: str
) -> None:
    runs = {kind: transcript(tmp_path, "passfail", observer, kind, monkeypatch) for kind in WORLDS}
    base = runs["agree"]
    statuses = {a[2] for _, a in base}
    assert {200, 303, 400, 401, 403, 404, 422} <= statuses  # the probes reach the refusals too
    redirects = [a[3][0][1][0] for _, a in base if a[2] == 303]
    assert any(r.endswith("msg=undone") for r in redirects)  # the observer's own undo went through
    assert any(r.endswith("msg=saved") for r in redirects) == (observer == "judy")  # and judy's final label
    for kind in WORLDS[1:]:
        assert len(runs[kind]) == len(base)
        for (key, want), (_, got) in zip(base, runs[kind], strict=True):
            assert got == want, f"{observer}: {key} answers differently when {kind}: {want[:3]} vs {got[:3]}"


@pytest.mark.slow
@pytest.mark.parametrize("observer", ["pat", "judy"])
def test_no_route_answers_differently_on_pairs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, observer: str) -> None:
    runs = {kind: transcript(tmp_path, "pairwise", observer, kind, monkeypatch) for kind in WORLDS}
    for kind in WORLDS[1:]:
        for (key, want), (_, got) in zip(runs["agree"], runs[kind], strict=True):
            assert got == want, f"{observer}: {key} answers differently when {kind}: {want[:3]} vs {got[:3]}"
