"""The labelling web app: FastAPI routes over `LabelStore`, Jinja2 templates with autoescape.

Security model: a rater opens `/login?token=...` once and confirms "sign in as NAME" (a POST
whose nonce must match a SameSite=Strict cookie set by that page, so a link on another site
cannot sign a browser in as someone else); the token goes into an HttpOnly,
SameSite=Strict cookie, one per project (`juge_label_<project id>`; pages carry ?p=<project id>),
and is checked (by its sha256) on every request. Every form
carries the rater's CSRF token. All case text is rendered escaped, and a strict
Content-Security-Policy (scripts only from /static) stops any script that slipped through.

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
from jinja2 import Environment, FileSystemLoader
from starlette.exceptions import HTTPException as StarletteHTTPException

from juge.data.records import Case
from juge.label.db import LabelError, LabelStore, Project, Rater, ReleasedError
from juge.label.rubric import canonical_label, choices, to_fixed_order

HERE = Path(__file__).parent
COOKIE = "juge_label"
LOGIN_COOKIE = "juge_login_nonce"  # the sign-in form's nonce, set by the login page
MAX_EXPLANATION = 5000
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
    " form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def fixed_choices(task: str, project: Project) -> list[str]:
    """Labels in the fixed order, as stored and exported (what an adjudicator picks from)."""
    if task == "pairwise":
        return ["A", "B", "tie"]
    return [c.value for c in choices(task, project.rubric)]


def cookie_name(project_id: int) -> str:
    """The login cookie of one project: a browser can be signed in to several projects at once."""
    return f"{COOKIE}_{project_id}"


class ChooseProject(Exception):
    """The browser is signed in to several projects and the request does not say which (?p=)."""

    def __init__(self, raters: list[Rater]):
        self.raters = raters


def current_rater(request: Request) -> Rater:
    """The rater signed in to the request's project (?p=ID, or the only project this browser is in).

    Each project has its own cookie (`cookie_name`); a cookie named plain `juge_label`, set by
    earlier versions, still counts. 401 without a valid login; several logins and no ?p= asks which.
    """
    tokens = [v for k, v in request.cookies.items() if k == COOKIE or k.startswith(COOKIE + "_")]
    if not tokens:
        raise HTTPException(401, "Open your personal login link to start labelling.")
    store = request.app.state.store
    signed_in = [r for r in map(store.rater_by_token, tokens) if r is not None]
    wanted = request.query_params.get("p")
    if wanted is not None:
        signed_in = [r for r in signed_in if str(r.project_id) == wanted]
        if not signed_in:
            raise HTTPException(401, "You are not signed in to this project. Open your login link for it.")
    if not signed_in:
        raise HTTPException(401, "This login is not valid. Ask for a new login link.")
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


def create_app(store: LabelStore) -> FastAPI:
    app = FastAPI(title="juge label", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"), autoescape=True, trim_blocks=True, lstrip_blocks=True
    )
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

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> HTMLResponse:
        return render("error.html", status=exc.status_code, status_code=exc.status_code, message=exc.detail)

    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request, token: str = "") -> Response:
        """The login link asks before it signs in (login CSRF: a link from another site must not sign
        a browser in as someone else). The form is tied to this browser by a short-lived cookie."""
        rater = store.rater_by_token(token)
        if rater is None:
            raise HTTPException(401, "This login link is not valid. Ask for a new one.")
        if request.cookies.get(cookie_name(rater.project_id)) == token:
            return RedirectResponse(f"/?p={rater.project_id}", status_code=303)  # already signed in as this
        nonce = secrets.token_urlsafe(24)
        response = render(
            "login.html", project=store.project_by_id(rater.project_id), rater_name=rater.name, token=token, nonce=nonce
        )
        response.set_cookie(LOGIN_COOKIE, nonce, httponly=True, samesite="strict", path="/login", max_age=3600)
        return response

    @app.post("/login")
    def login(request: Request, token: Annotated[str, Form()] = "", nonce: Annotated[str, Form()] = "") -> Response:
        """Sign in: the form's nonce must match this browser's login cookie, which a SameSite=Strict
        cookie never carries on a request another site starts."""
        expected = request.cookies.get(LOGIN_COOKIE, "")
        if not expected or not hmac.compare_digest(nonce.encode(), expected.encode()):
            raise HTTPException(
                403, "This sign-in form has expired or did not come from this site. Open your login link again."
            )
        rater = store.rater_by_token(token)
        if rater is None:
            raise HTTPException(401, "This login link is not valid. Ask for a new one.")
        response = RedirectResponse(f"/?p={rater.project_id}", status_code=303)
        response.set_cookie(
            cookie_name(rater.project_id), token, httponly=True, samesite="strict", max_age=30 * 24 * 3600
        )
        response.delete_cookie(LOGIN_COOKIE, path="/login", httponly=True, samesite="strict")
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
        assignment: Annotated[int, Form()],
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
    def post_undo(rater: CheckedDep, label_id: Annotated[int | None, Form()] = None) -> Response:
        """Undo the label the page offered to undo (its id is in the form), once.

        A repeat of the same form (double click, two requests in flight) changes nothing and
        redirects as usual; a form without an id came from a page shown before any label.
        """
        if label_id is None:
            msg = "nothing"
        else:
            try:
                msg = "undone" if store.undo_label(rater, label_id) else "stale"
            except LabelError as exc:
                raise HTTPException(403, str(exc)) from None
        return RedirectResponse(f"/item?p={rater.project_id}&msg={msg}", status_code=303)

    @app.post("/break", response_class=HTMLResponse)
    def post_break(rater: CheckedDep) -> HTMLResponse:
        store.end_session(rater, "break")
        return render("break.html", project=store.project_by_id(rater.project_id), rater=rater)

    @app.get("/adjudicate", response_class=HTMLResponse)
    def adjudicate_page(rater: AdjudicatorDep, msg: str = "") -> HTMLResponse:
        project = store.project_by_id(rater.project_id)
        rows = store.disagreements(project)
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
        item_id: Annotated[str, Form()],
        label: Annotated[str, Form()],
        reason: Annotated[str, Form(max_length=MAX_EXPLANATION)] = "",
    ) -> Response:
        require_adjudicator(rater)
        project = store.project_by_id(rater.project_id)
        if project.task == "passfail":
            label = canonical_label(project.task, label)
        if label not in fixed_choices(project.task, project):
            raise HTTPException(422, f"Unknown label {label!r}.")
        try:
            store.adjudicate(rater, item_id, label, reason)
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
