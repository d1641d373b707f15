"""The viewer's routes: GET only, over a store opened read-only (see docs/view.md).

Security model: ``juge view`` prints a URL with a one-time token. Opening it once sets a session cookie
(random id, HttpOnly, SameSite=Strict, named per port) and the token is spent; every other page needs that
session (401 without it). No route takes POST, PUT or DELETE, and the store's connection refuses writes
(`Store.read_only`). Every shown text is escaped with its hidden characters made visible (juge.webapp's
template environment), under the same Content-Security-Policy as the labelling app (scripts only from /static).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from juge.errors import InputError
from juge.label.db import LabelStore
from juge.stats.estimate import format_estimate
from juge.store import Store
from juge.view import pages
from juge.view.labels import RunLabels
from juge.view.shown import Shown
from juge.webapp import SECURITY_HEADERS, LoginLimiter, add_error_pages, client_address, port_of, template_env

HERE = Path(__file__).parent
COOKIE = "juge_view"
OPEN_PATHS = ("/login", "/static/")


def cookie_name(port: int) -> str:
    """Browsers send a host's cookies to every port: the port keeps two viewers (or a viewer and the
    labelling app) apart."""
    return f"{COOKIE}_{port}"


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def create_app(store: Store, shown: Shown, *, token: str, label_store: LabelStore | None = None) -> FastAPI:
    """The viewer over `store` (already read-only) and the files in `shown`; `token` opens it once. People's labels
    come from `shown`'s labels file and the projects of `label_store` that a run was attached to."""
    app = FastAPI(title="juge view", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.state.label_store = label_store
    labels = RunLabels(label_store, shown.labels, shown.labels_file)
    app.state.token_digest = _digest(token)  # None once spent
    app.state.sessions = set()  # sha256 of each session id handed out
    lock = threading.Lock()  # one store connection, shared by the worker threads
    limiter = LoginLimiter()
    env = template_env(HERE / "templates")
    env.globals["estimate"] = format_estimate
    env.globals["query"] = lambda **kw: urlencode({k: v for k, v in kw.items() if v not in (None, "")})
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(env.get_template(name).render(**context), status_code=status)

    @contextmanager
    def reading() -> Iterator[Store]:
        with lock:
            yield store

    def signed_in(request: Request) -> bool:
        session = request.cookies.get(cookie_name(port_of(request)))
        return session is not None and _digest(session) in app.state.sessions

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        if not request.url.path.startswith(OPEN_PATHS) and not signed_in(request):
            response: Response = render(
                "error.html",
                status=401,
                status_code=401,
                message="Open the link `juge view` printed (it signs this browser in once).",
            )
        else:
            response = await call_next(request)
        for key, value in SECURITY_HEADERS.items():
            response.headers.setdefault(key, value)
        return response

    add_error_pages(app, render, invalid="parameter")

    @app.exception_handler(InputError)
    async def input_error(request: Request, exc: InputError) -> HTMLResponse:
        return render("error.html", status=404, status_code=404, message=str(exc))

    @app.get("/login")
    def login(request: Request, token: str = "") -> Response:
        """Spend the one-time token on a session for this browser. A browser already signed in is sent on
        (the link opened twice); a wrong or spent token is refused, and failures are limited per address."""
        if signed_in(request):
            return RedirectResponse("/", status_code=303)
        limiter.check(client_address(request))
        expected = app.state.token_digest
        if expected is None or not hmac.compare_digest(_digest(token), expected):
            limiter.failed(client_address(request))
            raise HTTPException(
                401, "This link is not valid or was used already: stop `juge view` and start it again for a new one."
            )
        app.state.token_digest = None
        session = secrets.token_urlsafe(32)
        app.state.sessions.add(_digest(session))
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(cookie_name(port_of(request)), session, httponly=True, samesite="strict")
        return response

    @app.get("/", response_class=HTMLResponse)
    def start(
        eval: str = "", status: str = "", kind: str = "", since: str = "", until: str = "", category: str = ""
    ) -> HTMLResponse:
        filters = {"eval": eval, "status": status, "kind": kind, "since": since, "until": until}
        with reading() as s:
            runs, kinds = pages.run_list(s, **filters)
        return render("start.html", runs=runs, kinds=kinds, filters=filters, shown=shown, category=category)

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def run_page(
        run_id: str,
        outcome: str = "",
        judge: str = "",
        verdict: str = "",
        category: str = "",
        check: str = "",
        after: str = "",
        size: int = 50,
    ) -> HTMLResponse:
        filters = {"outcome": outcome, "judge": judge, "verdict": verdict, "category": category, "check": check}
        if not 1 <= size <= 500:
            raise HTTPException(400, "size: give 1 to 500 rows a page.")
        with reading() as s:
            data = pages.run_page(s, run_id, filters, after=_cursor(after), size=size, labels=labels)
        return render("run.html", **data, filters=filters, size=size)

    @app.get("/runs/{run_id}/cases/{item_id:path}", response_class=HTMLResponse)
    def case_page(run_id: str, item_id: str) -> HTMLResponse:
        with reading() as s:
            data = pages.case_page(s, run_id, item_id, labels)
        return render("case.html", **data)

    @app.get("/compare", response_class=HTMLResponse)
    def compare_page(a: str = "", b: str = "") -> HTMLResponse:
        if not a or not b:
            raise HTTPException(400, "Pick two runs to compare (a and b).")
        with reading() as s:
            data = pages.compare_page(s, a, b)
        return render("compare.html", **data)

    @app.get("/studies/{n}", response_class=HTMLResponse)
    def study_page(n: int) -> HTMLResponse:
        path, calibration = _nth(shown.calibrations, n, "calibration")
        return render("study.html", n=n, path=path, study=pages.study_overview(calibration))

    @app.get("/studies/{n}/items", response_class=HTMLResponse)
    def study_items(n: int, judge: str = "", category: str = "", order_dependent: bool = False) -> HTMLResponse:
        path, calibration = _nth(shown.calibrations, n, "calibration")
        rows = pages.study_disagreements(calibration, judge=judge, category=category, order_dependent=order_dependent)
        with reading() as s:
            in_runs = pages.runs_holding(s, [r.item_id for r in rows])
        return render(
            "disagreements.html",
            n=n,
            path=path,
            judge=judge,
            category=category,
            order_dependent=order_dependent,
            rows=rows,
            labels=shown.labels,
            in_runs=in_runs,
        )

    @app.get("/policies/{n}", response_class=HTMLResponse)
    def policy_page(n: int) -> HTMLResponse:
        path, policy = _nth(shown.policies, n, "policy")
        tests = [(i, p, t) for i, (p, t) in enumerate(shown.tests) if t.policy_hash == policy.policy_hash]
        with reading() as s:
            runs, _ = pages.run_list(s)
        return render("policy.html", n=n, path=path, policy=policy, tests=tests, runs=runs[:3])

    @app.get("/tests/{n}", response_class=HTMLResponse)
    def test_page(n: int, route: str = "", decision: str = "", category: str = "") -> HTMLResponse:
        path, test = _nth(shown.tests, n, "policy test")
        items = [
            i
            for i in test.items
            if (not route or i.route == route)
            and (not decision or i.decision == decision)
            and (not category or i.category == category)
        ]
        return render(
            "test.html",
            n=n,
            path=path,
            test=test,
            items=items,
            filters={"route": route, "decision": decision, "category": category},
            labels=shown.labels,
        )

    return app


def _nth(files: list[Any], n: int, what: str) -> Any:
    if not 0 <= n < len(files):
        raise HTTPException(404, f"No {what} number {n} was opened (give it to `juge view`).")
    return files[n]


def _cursor(after: str) -> list[Any] | None:
    """The key a page starts after (item id, judge, order, repeat), as the previous page's link wrote it."""
    if not after:
        return None
    try:
        key = json.loads(after)
    except ValueError:
        key = None
    valid = isinstance(key, list) and len(key) == 4 and all(isinstance(k, str) for k in key[:3])
    if not valid or type(key[3]) is not int:
        raise HTTPException(400, "after: not a page key this viewer wrote.")
    return key
