"""The labelling web app: FastAPI routes over `LabelStore`, Jinja2 templates with autoescape.

Security model (see docs/security.md): a rater opens `/login?token=...` once and confirms "sign in
as NAME" (a POST whose nonce must match a SameSite=Strict cookie set by that page, so a link on
another site cannot sign a browser in as someone else). Signing in opens a server-side login: the
cookie holds a random session id (stored as its sha256, expiring after LOGIN_SECONDS), never the
token. The cookie is HttpOnly, SameSite=Strict, named per port and project
(`juge_label_<port>_<project id>`; pages carry ?p=<project id>), so two juge servers on one host
never share or overwrite one. Failed sign-ins are limited per address. Every form carries the
rater's CSRF token. All case text is rendered escaped with hidden characters shown (juge.visible),
and a strict Content-Security-Policy (scripts only from /static) stops any script that slipped through.

Blindness: a rater sees the input, the answer(s) and the rubric - never model names,
`meta`, judge verdicts or other raters' labels. Pairs are shown Left/Right in a position
randomised per rater and item; the choice is mapped back to the fixed order on save.
"""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from juge.data.records import Case
from juge.errors import InputError
from juge.label.db import LOGIN_SECONDS, LabelError, LabelStore, Project, Rater, ReleasedError
from juge.label.rubric import canonical_label, choices, for_people, to_fixed_order
from juge.webapp import SECURITY_HEADERS, LoginLimiter, add_error_pages, client_address, port_of, template_env

HERE = Path(__file__).parent
COOKIE = "juge_label"
LOGIN_COOKIE = "juge_login_nonce"  # the sign-in form's nonce, set by the login page
MAX_EXPLANATION = 5000
MAX_FORM_INT = 2**62  # ids are positive 64-bit integers; a larger number is a bad form, not a database error


def fixed_choices(task: str, project: Project) -> list[str]:
    """Labels in the fixed order, as stored and exported (what an adjudicator picks from)."""
    if task == "pairwise":
        return ["A", "B", "tie"]
    return [c.value for c in choices(task, project.rubric)]


def cookie_name(project_id: int, port: int) -> str:
    """The login cookie of one project on one port: a browser can be signed in to several projects at
    once, and browsers send a host's cookies to every port, so the port keeps two servers apart."""
    return f"{COOKIE}_{port}_{project_id}"


class ChooseProject(InputError):
    """The browser is signed in to several projects and the request does not say which (?p=)."""

    def __init__(self, raters: list[Rater]):
        super().__init__("signed in to several projects: say which one (?p=)")
        self.raters = raters


def current_rater(request: Request) -> Rater:
    """The rater signed in to the request's project (?p=ID, or the only project this browser is in).

    Each project has its own cookie (`cookie_name`) holding a login session id; a cookie of an
    earlier version (the raw token) is no session and does not count. 401 without a valid login;
    several logins and no ?p= asks which.
    """
    prefix = f"{COOKIE}_{port_of(request)}_"
    sessions = [v for k, v in request.cookies.items() if k.startswith(prefix)]
    if not sessions:
        raise HTTPException(401, "Open your personal login link to start labelling.")
    store = request.app.state.store
    signed_in = [r for r in map(store.rater_by_login, sessions) if r is not None]
    wanted = request.query_params.get("p")
    if wanted is not None:
        signed_in = [r for r in signed_in if str(r.project_id) == wanted]
        if not signed_in:
            raise HTTPException(401, "You are not signed in to this project. Open your login link for it.")
    if not signed_in:
        raise HTTPException(401, "This login has expired or was closed. Open your login link again.")
    if len(signed_in) > 1:
        raise ChooseProject(signed_in)
    return signed_in[0]


def checked_rater(rater: Annotated[Rater, Depends(current_rater)], csrf: Annotated[str, Form()] = "") -> Rater:
    """The rater, if the form carries their CSRF token; 403 otherwise."""
    if not hmac.compare_digest(csrf.encode(), rater.csrf.encode()):
        raise HTTPException(403, "This form has expired or did not come from this site. Reload the page.")
    return rater


def require_adjudicator(rater: Rater) -> Rater:
    if not rater.adjudicator:
        raise HTTPException(403, "Only an adjudicator can open the review.")
    return rater


def adjudicator(rater: Annotated[Rater, Depends(current_rater)]) -> Rater:
    return require_adjudicator(rater)


RaterDep = Annotated[Rater, Depends(current_rater)]
CheckedDep = Annotated[Rater, Depends(checked_rater)]
AdjudicatorDep = Annotated[Rater, Depends(adjudicator)]


def create_app(store: LabelStore, *, trusted_proxy: str | None = None) -> FastAPI:
    """The app over `store`; `trusted_proxy` is the one peer whose X-Forwarded-For names the client
    (see `juge.webapp.client_address`)."""
    app = FastAPI(title="juge label", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.state.trusted_proxy = trusted_proxy
    limiter = app.state.limiter = LoginLimiter()
    env = template_env(HERE / "templates")  # hidden characters in any shown text are made visible, never act
    env.filters["for_people"] = for_people
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(env.get_template(name).render(**context), status_code=status)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        response = await call_next(request)
        for key, value in SECURITY_HEADERS.items():
            response.headers.setdefault(key, value)
        return response

    @app.exception_handler(ChooseProject)
    async def choose_project(request: Request, exc: ChooseProject) -> HTMLResponse:
        projects = [store.project_by_id(r.project_id) for r in exc.raters]
        return render("choose.html", projects=sorted(projects, key=lambda p: p.name))

    add_error_pages(app, render, invalid="form field")

    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request, token: str = "") -> Response:
        """The login link asks before it signs in (login CSRF: a link from another site must not sign
        a browser in as someone else). The form is tied to this browser by a short-lived cookie."""
        limiter.check(client_address(request))
        rater = store.rater_by_token(token)
        if rater is None:
            limiter.failed(client_address(request))
            raise HTTPException(401, "This login link is not valid. Ask for a new one.")
        session = request.cookies.get(cookie_name(rater.project_id, port_of(request)))
        signed_in = store.rater_by_login(session)
        if signed_in is not None and signed_in.id == rater.id:
            return RedirectResponse(f"/?p={rater.project_id}", status_code=303)  # already signed in as this
        nonce = secrets.token_urlsafe(24)
        response = render(
            "login.html", project=store.project_by_id(rater.project_id), rater_name=rater.name, token=token, nonce=nonce
        )
        response.set_cookie(
            f"{LOGIN_COOKIE}_{port_of(request)}", nonce, httponly=True, samesite="strict", path="/login", max_age=3600
        )
        return response

    @app.post("/login")
    def login(request: Request, token: Annotated[str, Form()] = "", nonce: Annotated[str, Form()] = "") -> Response:
        """Sign in: the form's nonce must match this browser's login cookie, which a SameSite=Strict
        cookie never carries on a request another site starts."""
        limiter.check(client_address(request))
        login_cookie = f"{LOGIN_COOKIE}_{port_of(request)}"
        expected = request.cookies.get(login_cookie, "")
        if not expected or not hmac.compare_digest(nonce.encode(), expected.encode()):
            raise HTTPException(
                403, "This sign-in form has expired or did not come from this site. Open your login link again."
            )
        rater = store.rater_by_token(token)
        if rater is None:
            limiter.failed(client_address(request))
            raise HTTPException(401, "This login link is not valid. Ask for a new one.")
        response = RedirectResponse(f"/?p={rater.project_id}", status_code=303)
        response.set_cookie(
            cookie_name(rater.project_id, port_of(request)),
            store.open_login(rater),
            httponly=True,
            samesite="strict",
            max_age=int(LOGIN_SECONDS),
        )
        response.delete_cookie(login_cookie, path="/login", httponly=True, samesite="strict")
        return response

    @app.post("/logout", response_class=HTMLResponse)
    def logout(request: Request, rater: CheckedDep) -> HTMLResponse:
        """Close this browser's login (server side) and drop its cookie."""
        name = cookie_name(rater.project_id, port_of(request))
        session = request.cookies.get(name)
        if session:
            store.close_login(session)
        response = render(
            "error.html", status_code=200, message="You are signed out. Open your login link to sign in again."
        )
        response.delete_cookie(name, httponly=True, samesite="strict")
        return response

    @app.get("/")
    def home(rater: RaterDep) -> Response:
        return RedirectResponse(f"/item?p={rater.project_id}", status_code=303)

    @app.get("/item", response_class=HTMLResponse)
    def item_page(rater: RaterDep, msg: str = "") -> HTMLResponse:
        project = store.project_by_id(rater.project_id)
        session_id = store.current_session(rater)
        assignment = store.next_assignment(rater)
        done, left = store.progress(rater)
        common: dict[str, Any] = {
            "project": project,
            "rater": rater,
            "done": done,
            "left": left,
            "last_label": store.last_label_id(rater),
            "pct": round(100 * done / (done + left)) if done + left else 100,
        }
        if assignment is None:
            return render("done.html", **common, msg=msg)
        store.mark_shown(assignment.id, session_id)
        case = assignment.case
        in_session = store.labels_in_session(session_id)
        if case.is_pair:
            sides = [case.output_2, case.output_1] if assignment.swapped else [case.output_1, case.output_2]
        else:
            sides = [case.output]
        return render(
            "item.html",
            **common,
            case=case,
            messages=case.conversation(),
            sides=sides,
            assignment=assignment,
            choices=choices(project.task, project.rubric),
            msg=msg,
            in_session=in_session,
            break_due=project.break_after > 0 and in_session >= project.break_after,
        )

    @app.post("/label")
    def post_label(
        rater: CheckedDep,
        assignment: Annotated[int, Form(ge=1, le=MAX_FORM_INT)],
        choice: Annotated[str, Form()],
        explanation: Annotated[str, Form(max_length=MAX_EXPLANATION)] = "",
    ) -> Response:
        project = store.project_by_id(rater.project_id)
        allowed = {c.value for c in choices(project.task, project.rubric)}
        if project.task == "passfail":
            choice = canonical_label(project.task, choice)  # a page opened before the PASS/FAIL spelling
        if choice not in allowed:
            raise HTTPException(422, f"Unknown label {choice!r}.")
        session_id = store.current_session(rater)
        swapped = store.assignment_swapped(rater, assignment)
        if swapped is None:
            raise HTTPException(403, "This item is not assigned to you.")
        if project.task == "pairwise":
            label, shown_order = to_fixed_order(choice, swapped), ("21" if swapped else "12")
        else:
            label, shown_order = choice, ""
        try:
            store.save_label(
                rater,
                assignment,
                label,
                shown_order=shown_order,
                explanation=explanation.strip() or None,
                session_id=session_id,
            )
        except ReleasedError:  # the page was open while `juge label release` gave the item to someone else
            return RedirectResponse(f"/item?p={rater.project_id}&msg=released", status_code=303)
        except LabelError as exc:
            raise HTTPException(403, str(exc)) from None
        return RedirectResponse(f"/item?p={rater.project_id}", status_code=303)

    @app.post("/undo")
    def post_undo(rater: CheckedDep, label_id: Annotated[int | None, Form(ge=1, le=MAX_FORM_INT)] = None) -> Response:
        """Undo the label the page offered to undo (its id is in the form), once.

        A repeat of the same form (double click, two requests in flight) changes nothing and
        redirects as usual; a form without an id came from a page shown before any label. The answer
        depends on this rater's own labels only (see `LabelStore.undo_label`).
        """
        if label_id is None:
            msg = "nothing"
        else:
            msg = "undone" if store.undo_label(rater, label_id) else "stale"
        return RedirectResponse(f"/item?p={rater.project_id}&msg={msg}", status_code=303)

    @app.post("/break", response_class=HTMLResponse)
    def post_break(rater: CheckedDep) -> HTMLResponse:
        store.end_session(rater, "break")
        return render("break.html", project=store.project_by_id(rater.project_id), rater=rater)

    @app.get("/adjudicate", response_class=HTMLResponse)
    def adjudicate_page(rater: AdjudicatorDep, msg: str = "") -> HTMLResponse:
        """The review: closed disagreements on items this adjudicator did not label. Nothing on the page
        (rows, counts, order) depends on the labels or verdicts on items they labelled themselves, and
        rows are headed by a neutral handle (the item's row number in the store), not the item id,
        which may name the models."""
        project = store.project_by_id(rater.project_id)
        rows = store.disagreements(project, reviewer=rater)
        for row in rows:
            row["case"] = Case.model_validate_json(row["record"])
        return render(
            "adjudicate.html",
            project=project,
            rater=rater,
            rows=rows,
            msg=msg,
            labels=fixed_choices(project.task, project),
            lists=store.list_names(project),
        )

    @app.post("/adjudicate")
    def post_adjudicate(
        rater: CheckedDep,
        item: Annotated[int, Form(ge=1, le=MAX_FORM_INT)],
        label: Annotated[str, Form()],
        reason: Annotated[str, Form(max_length=MAX_EXPLANATION)] = "",
    ) -> Response:
        """Record a final label on the review row with handle `item`; any handle not listed for this
        adjudicator (unknown, open, agreed, or an item they labelled) gets one and the same refusal."""
        require_adjudicator(rater)
        project = store.project_by_id(rater.project_id)
        if project.task == "passfail":
            label = canonical_label(project.task, label)
        if label not in fixed_choices(project.task, project):
            raise HTTPException(422, f"Unknown label {label!r}.")
        try:
            store.adjudicate(rater, item, label, reason)
        except LabelError as exc:
            raise HTTPException(422, str(exc)) from None
        return RedirectResponse(f"/adjudicate?p={rater.project_id}&msg=saved", status_code=303)

    @app.post("/lists")
    def post_list(rater: CheckedDep, name: Annotated[str, Form(min_length=1, max_length=200)]) -> Response:
        require_adjudicator(rater)
        project = store.project_by_id(rater.project_id)
        store.save_list(project, name.strip(), [row["item_id"] for row in store.disagreements(project)])
        return RedirectResponse(f"/adjudicate?p={rater.project_id}&msg=list", status_code=303)

    return app
