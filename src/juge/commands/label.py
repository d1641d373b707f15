"""`juge label`: blind human labelling in the browser (init, add-rater, serve, status, release, export, review)."""

from __future__ import annotations

import errno
import ipaddress
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from juge.errors import InputError
from juge.files import is_stdout, write_atomic
from juge.reports.fit import fitted

if TYPE_CHECKING:
    from juge.data.records import Case

label_app = typer.Typer(
    help="Blind human labelling: a small web app for raters, agreement between them, adjudication.\n\n"
    "Typical use: **init** a project from cases and a rubric, **add-rater** for each person (prints a "
    "login link), **serve**, watch **status**, **release** items a rater left unlabelled, then **export** labels for `juge calibrate`.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)
console = Console(highlight=False)  # names, ids and labels are data: escaped or printed as Text

DbUrl = Annotated[
    str | None,
    typer.Option(
        "--db-url",
        envvar="JUGE_LABEL_DB_URL",
        help="SQLAlchemy URL of the label store, e.g. postgresql+psycopg://user@host/db. "
        "Default: the juge SQLite file .juge/juge.db.",
    ),
]
DEFAULT_BASE_URL = "http://127.0.0.1:8765"  # `juge label serve` on its default --host and --port
ProjectOpt = Annotated[str | None, typer.Option("--project", "-p", help="Labelling project (default: the only one).")]


def _store(db_url: str | None):  # noqa: ANN202 - keeps SQLAlchemy out of `juge --help`
    """The label store at `db_url`; a URL that does not parse or a database that cannot be reached is exit 2."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, DBAPIError

    from juge.label.db import LabelStore

    try:
        return LabelStore(db_url)
    except ArgumentError as exc:
        raise InputError(
            f"--db-url {db_url!r} is not a database URL ({exc}); expected e.g. "
            "sqlite:///labels.db or postgresql+psycopg://user@host/db"
        ) from None
    except ImportError as exc:
        raise InputError(
            f"--db-url: the database driver is not installed ({exc}); juge ships sqlite and postgresql+psycopg"
        ) from None
    except DBAPIError as exc:
        shown = make_url(db_url).render_as_string(hide_password=True) if db_url else "the default store"
        reason = str(exc.orig or exc).strip().splitlines()[0] if str(exc.orig or exc).strip() else type(exc).__name__
        raise InputError(f"--db-url {shown}: cannot open the label database: {reason}") from None


def _project(store, name: str | None, option: str | None = None):  # noqa: ANN001, ANN202
    """The project named positionally or with -p (both work on every command; the same name twice
    is fine), else the only one."""
    from juge.label.db import LabelError

    if name is not None and option is not None and name != option:
        raise InputError(f"two project names given: {name!r} and -p {option!r}; give one")
    try:
        return store.project(name if name is not None else option)
    except LabelError as exc:
        raise InputError(str(exc)) from None


def _read_label_cases(path: Path, field_map: str | None) -> list[Case]:
    """Cases to label; the MT-Bench sample layout through its adapter (model names and provenance go to meta)."""
    from juge.data.adapters import read_pairwise_items
    from juge.data.readers import parse_mapping, read_cases, read_rows

    rows = read_rows(path) if path.suffix.lower() in (".jsonl", ".json", ".ndjson") else []
    if rows and "human_ratings" in rows[0][1]:
        if field_map:
            console.print(
                Text(f"note: {path} is in the MT-Bench sample layout, read as such; --map is not used", style="yellow")
            )
        return read_pairwise_items(path, baseline_fields=()).full_cases()
    return read_cases(path, mapping=parse_mapping(field_map))


@label_app.command("init")
def init_command(
    cases: Annotated[Path, typer.Option("--cases", help="Cases to label (JSONL or CSV).")],
    task: Annotated[str, typer.Option("--task", help="pairwise (A/B/tie), score (rubric levels) or passfail.")],
    rubric: Annotated[
        Path,
        typer.Option(
            "--rubric",
            help=(
                "Rubric TOML shown beside every item, or a judge file: its rubric is used (the words the judge reads) "
                "and its setup must be the --task."
            ),
        ),
    ],
    name: Annotated[str, typer.Option("--name", help="Project name, used by every other label command.")],
    overlap: Annotated[float, typer.Option(help="Share of items labelled by several raters (for agreement).")] = 0.2,
    overlap_raters: Annotated[int, typer.Option(help="How many raters label an overlap item.")] = 2,
    break_after: Annotated[
        int, typer.Option(help="Suggest a break after this many items in a session (0: never).")
    ] = 25,
    seed: Annotated[int, typer.Option(help="Seed for item order and the overlap sample.")] = 0,
    field_map: Annotated[
        str | None,
        typer.Option(
            "--map",
            help="Read other column names as juge fields, e.g. id=item_id,output=answer. Not needed for the "
            "MT-Bench sample layout (rows with human_ratings), which is recognised.",
        ),
    ] = None,
    db_url: DbUrl = None,
) -> None:
    """Create a labelling project from cases and a rubric.

    Raters see the input (the question or conversation, and the case's `context` and `source` when it has them:
    the document a faithfulness judge checks against), the reference answer if any, the answer(s) and the rubric;
    never `meta`, item ids or model names. In the MT-Bench sample layout `source` is provenance (dataset and
    licence), so it is kept in `meta`, hidden from raters.
    """
    from juge.data.readers import case_line, parse_mapping
    from juge.errors import input_error
    from juge.label.db import LabelError
    from juge.label.rubric import TASKS, read_rubric

    if task not in TASKS:
        raise InputError(f"--task: unknown task {task!r} ({', '.join(TASKS)})")
    parsed_rubric = read_rubric(rubric, task)
    records = _read_label_cases(cases, field_map)
    if not records:
        raise input_error(cases, "no cases to label")
    for i, case in enumerate(records, start=1):
        lacks = "output_1" if task == "pairwise" and not case.is_pair else None
        lacks = "output" if task != "pairwise" and case.output is None else lacks
        if lacks is not None:
            line = case_line(cases, case.id, parse_mapping(field_map))
            what = "output_1/output_2 pair for a pairwise task" if lacks == "output_1" else "output to grade"
            raise input_error(
                cases, f"case {case.id!r}{'' if line else f' (row {i})'} has no {what}", line=line, field=lacks
            )
    if not 0 <= overlap <= 1:
        raise InputError(f"--overlap must be a share between 0 and 1, got {overlap}")
    store = _store(db_url)
    try:
        project = store.create_project(
            name,
            task,
            parsed_rubric,
            records,
            overlap=overlap,
            overlap_raters=overlap_raters,
            break_after=break_after,
            seed=seed,
        )
    except LabelError as exc:
        raise InputError(str(exc)) from None
    shared = len([it for it in store.item_table(project) if it["needed"] > 1])
    console.print(
        f"Created labelling project [b]{escape(project.name)}[/]: {len(records)} {task} items, "
        f"{shared} of them for {overlap_raters} raters. Next: juge label add-rater NAME"
    )


@label_app.command("add-rater")
def add_rater_command(
    name: Annotated[str, typer.Argument(help="Rater name (exported as rater_id).")],
    project: ProjectOpt = None,
    adjudicator: Annotated[bool, typer.Option(help="May review disagreements and record final labels.")] = False,
    base_url: Annotated[
        str,
        typer.Option(
            help=(
                "Address raters reach `juge label serve` at, only used to print the full link. Default: serve's "
                "own defaults (--host 127.0.0.1 --port 8765); serve prints its real address when it starts."
            )
        ),
    ] = DEFAULT_BASE_URL,
    db_url: DbUrl = None,
) -> None:
    """Add a rater and print their personal login link (the token is stored only as a hash).

    The token is not tied to a host: the link is the login path on whatever address `juge label serve`
    runs at. The full link printed uses --base-url (serve's defaults unless given).
    """
    from juge.label.db import LabelError

    store = _store(db_url)
    proj = _project(store, project)
    try:
        token = store.add_rater(proj, name, adjudicator=adjudicator)
    except LabelError as exc:
        raise InputError(str(exc)) from None
    path = f"/login?token={token}"
    console.print(
        f"Rater [b]{escape(name)}[/] added to {escape(proj.name)}{' as adjudicator' if adjudicator else ''}. "
        "Send their login link privately; it is shown only once:",
        highlight=False,
    )
    typer.echo(f"{base_url.rstrip('/')}{path}")
    where = (
        "the defaults of `juge label serve` (--host 127.0.0.1 --port 8765)"
        if base_url == DEFAULT_BASE_URL
        else "--base-url"
    )
    console.print(
        Text(
            f"The host and port above are {where}. If the app runs elsewhere, the link is the address "
            f"`juge label serve` prints at start followed by {path}",
            style="dim",
        )
    )


@label_app.command("rotate-link")
def rotate_link_command(
    name: Annotated[str, typer.Argument(help="Rater name.")],
    project: ProjectOpt = None,
    base_url: Annotated[
        str, typer.Option(help="Address raters reach `juge label serve` at, only used to print the full link.")
    ] = DEFAULT_BASE_URL,
    db_url: DbUrl = None,
) -> None:
    """Give a rater a new login link: the old one stops working and every browser they signed in is signed out."""
    from juge.label.db import LabelError

    store = _store(db_url)
    proj = _project(store, project)
    try:
        token = store.rotate_link(proj, name)
    except LabelError as exc:
        raise InputError(str(exc)) from None
    console.print(
        f"New login link for [b]{escape(name)}[/] in {escape(proj.name)} (the old one no longer works; "
        "send this one privately, it is shown only once):",
        highlight=False,
    )
    typer.echo(f"{base_url.rstrip('/')}/login?token={token}")


@label_app.command("revoke-rater")
def revoke_rater_command(
    name: Annotated[str, typer.Argument(help="Rater name.")],
    project: ProjectOpt = None,
    db_url: DbUrl = None,
) -> None:
    """Stop a rater from signing in (their link and every signed-in browser); their labels stay.
    `juge label rotate-link NAME` lets them back in with a new link."""
    from juge.label.db import LabelError

    store = _store(db_url)
    proj = _project(store, project)
    try:
        store.revoke_rater(proj, name)
    except LabelError as exc:
        raise InputError(str(exc)) from None
    console.print(
        f"Rater [b]{escape(name)}[/] can no longer sign in to {escape(proj.name)}; their labels stay.", highlight=False
    )


@label_app.command("serve")
def serve_command(
    host: Annotated[
        str, typer.Option(help="Interface to bind. Keep 127.0.0.1 unless behind a TLS proxy.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: any free port, printed).", min=0, max=65535)] = 8765,
    db_url: DbUrl = None,
) -> None:
    """Serve the labelling app (all projects; each rater sees their own)."""
    import uvicorn

    from juge.label.app import create_app

    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    app = create_app(_store(db_url))
    sock = _listening_socket(host, port)  # bound before the banner: a port in use is an error, not a banner
    if not loopback:
        console.print(
            f"[yellow]warning:[/] binding {escape(host)}: login tokens travel in cookies; use HTTPS in front."
        )
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{sock.getsockname()[1]}"
    console.print(Text(f"juge label: {base}/ (Ctrl-C to stop)"))
    console.print(Text(f"raters log in at {base}/login?token=<their token> (the token from `juge label add-rater`)"))
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=sock.getsockname()[1], log_level="warning"))
    server.run(sockets=[sock])


def _listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port (as uvicorn binds it: SO_REUSEADDR); in use or unusable is exit 2."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except socket.gaierror as exc:
        raise InputError(f"--host {host!r}: cannot resolve it ({exc.strerror})") from None
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InputError(f"port {port} on {host} is in use; stop the other server or pick --port") from None
        raise InputError(f"cannot listen on {host} port {port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


@label_app.command("status")
def status_command(
    name: Annotated[str | None, typer.Argument(help="Project name (or -p NAME; default: the only project).")] = None,
    project_opt: ProjectOpt = None,
    json_out: Annotated[
        Path | None,
        typer.Option("--json", help="Also write these figures as JSON to this file ('-': standard output)."),
    ] = None,
    db_url: DbUrl = None,
) -> None:
    """Who labelled how much, items done and left, and agreement between raters so far."""
    import json

    from juge.label.review import status

    store = _store(db_url)
    s = status(store, _project(store, name, project_opt))
    if json_out is not None:
        text = json.dumps(s, indent=2, ensure_ascii=False, default=str) + "\n"
        write_atomic(json_out, text)
        if is_stdout(json_out):
            return
    console.print(
        f"[b]{escape(s['project'])}[/] ({s['task']}): {s['items']} items, {s['items_closed']} done, "
        f"{s['items_left']} left; {s['labels']} labels; {s['overlap_items']} overlap items"
    )
    table = Table("rater", "labels", "sessions", "mean s/item", "role")
    for r in s["raters"]:
        mean = f"{r['seconds'] / r['labels']:.1f}" if r["labels"] and r["seconds"] else "-"
        table.add_row(
            Text(r["rater"]), str(r["labels"]), str(r["sessions"]), mean, "adjudicator" if r["adjudicator"] else "rater"
        )
    console.print(fitted(table, console))
    if s["pairs"]:
        console.print(
            f"rater vs rater: agreement {s['agreement']:.3f}, Cohen's kappa "
            f"{'-' if s['kappa'] is None else format(s['kappa'], '.3f')} (n = {s['pairs']} pairs)"
        )
    else:
        console.print("rater vs rater: no item has two labels yet (n = 0)")
    console.print(f"disagreements to review: {s['disagreements']}")


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


@label_app.command("release")
def release_command(
    name: Annotated[str | None, typer.Argument(help="Project name (or -p NAME; default: the only project).")] = None,
    project_opt: ProjectOpt = None,
    rater: Annotated[
        str | None,
        typer.Option("--rater", help="Free all open items of this rater (with --idle-hours: only the older ones)."),
    ] = None,
    idle_hours: Annotated[
        float | None,
        typer.Option(
            "--idle-hours",
            min=0,
            help="Free open items handed out more than this many hours ago (default 24 when --rater is not given).",
        ),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only print what would be freed.")] = False,
    db_url: DbUrl = None,
) -> None:
    """Give items back to the pool that a rater was handed but never labelled (a rater who stopped coming).

    Only assignments without a label are freed; a freed item goes to another rater (never twice to the
    same one, never to more raters than it needs). If the first rater still submits it from an open
    page, the label is kept only while the item still has a free place; otherwise they are told and
    nothing is stored.
    """
    from juge.label.db import LabelError

    store = _store(db_url)
    project = _project(store, name, project_opt)
    try:
        who = None if rater is None else store.rater(project, rater)
    except LabelError as exc:
        raise InputError(f"--rater: {exc}") from None
    if who is None and idle_hours is None:
        idle_hours = 24.0
    older_than = None if idle_hours is None else idle_hours * 3600
    freed = store.release_assignments(project, rater=who, older_than=older_than, dry_run=dry_run)
    verb = "would free" if dry_run else "freed"
    for person, n in freed.items():
        console.print(Text(f"{person}: {verb} {_items(n)}"))
    console.print(f"{verb} {_items(sum(freed.values()))} in total" + (" (dry run: nothing changed)" if dry_run else ""))


@label_app.command("export")
def export_command(
    output: Annotated[Path, typer.Option("--output", "-o", help="JSONL file to write.")],
    name: Annotated[str | None, typer.Argument(help="Project name (or -p NAME; default: the only project).")] = None,
    project_opt: ProjectOpt = None,
    adjudications: Annotated[
        Path | None,
        typer.Option(
            help="Also write the adjudicators' final labels (item_id, label, reason, adjudicator) to this JSONL."
        ),
    ] = None,
    db_url: DbUrl = None,
) -> None:
    """Write one row per rater per item (item_id, rater_id, label, explanation) for `juge calibrate --labels`.

    Pairwise labels are A (answer 1 better), B (answer 2 better) or tie, in the fixed order of the cases,
    whatever side each rater saw them on.
    """
    import json

    store = _store(db_url)
    project = _project(store, name, project_opt)
    rows = store.export_labels(project)
    write_atomic(output, "".join(r.model_dump_json() + "\n" for r in rows))
    console.print(Text(f"Wrote {len(rows)} labels to {output}"))
    if adjudications is not None:
        finals = store.adjudicated(project)
        write_atomic(adjudications, "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in finals))
        console.print(Text(f"Wrote {len(finals)} final labels to {adjudications}"))


@label_app.command("attach-run")
def attach_run_command(
    name: Annotated[str, typer.Argument(help="Project name (-p NAME works too).")],
    run_id: Annotated[str, typer.Argument(help="A `juge run` id (or unambiguous prefix) over the same cases.")],
    project_opt: ProjectOpt = None,
    store_path: Annotated[
        Path,
        typer.Option("--db", help="The juge store holding the run (as for juge run/calibrate --db).", envvar="JUGE_DB"),
    ] = Path(".juge/juge.db"),
    old_store_path: Annotated[Path | None, typer.Option("--store", hidden=True)] = None,
    allow_changed_outputs: Annotated[
        bool,
        typer.Option(
            "--allow-changed-outputs",
            help="Attach even if the run judged other answers than people labelled for some items; those items "
            "are left out of the judge comparison.",
        ),
    ] = False,
    db_url: DbUrl = None,
) -> None:
    """Copy a run's judge verdicts into the review, so judge-vs-people disagreements are listed.

    Verdicts are shown to adjudicators only, and only for items whose labelling is closed.
    Refused (exit 2) when no case of the run is an item of the project, and when the run judged other
    answers (its case outputs, or the outputs its system generated) than the ones people labelled for some
    items (their output hashes differ), unless --allow-changed-outputs.
    """
    from juge.label.review import changed_outputs, judge_verdicts, run_output_hashes
    from juge.store import RunNotFound

    store_path = old_store_path or store_path  # --store: the option's earlier name
    store = _store(db_url)
    project = _project(store, name, project_opt)
    try:
        verdicts = judge_verdicts(store_path, run_id, project.task)
        judged = run_output_hashes(store_path, run_id)
    except RunNotFound as exc:
        raise InputError(f"{store_path}: {exc}") from None
    table = store.item_table(project)
    item_ids = [it["item_id"] for it in table]
    if not set(verdicts) & set(item_ids):
        found = (
            f"its verdicts are on {_examples(sorted(verdicts))}"
            if verdicts
            else f"it has no usable {project.task} verdict"
        )
        raise InputError(
            f"run {run_id} ({store_path}): no case id matches an item of project {project.name} "
            f"({_examples(item_ids)}); {found}. Attach a run over the project's cases."
        )
    changed = changed_outputs({it["item_id"]: it["output_hash"] for it in table}, judged)
    shared = len(set(judged) & set(item_ids))
    if changed and not allow_changed_outputs:
        raise InputError(
            f"run {run_id} ({store_path}) judged other answers than people labelled on {len(changed)} "
            f"of the {shared} items it shares with project {project.name} ({_examples(changed)}): "
            "its verdicts there are not about what people saw. Attach a run over the labelled "
            "outputs, or pass --allow-changed-outputs to leave those items out of the comparison."
        )
    n = store.attach_judge_verdicts(project, run_id, verdicts, leave_out=changed)
    console.print(Text(f"Attached {n} judge verdicts from run {run_id} to {project.name}"))
    if changed:
        console.print(
            Text(
                f"Left out {len(changed)} items whose answers changed since labelling "
                f"({_examples(changed)}): no judge comparison on them",
                style="yellow",
            )
        )


def _examples(ids: list[str], k: int = 3) -> str:
    return ", ".join(repr(i) for i in ids[:k]) + (", ..." if len(ids) > k else "") if ids else "none"


@label_app.command("disagreements")
def disagreements_command(
    name: Annotated[str | None, typer.Argument(help="Project name (or -p NAME; default: the only project).")] = None,
    project_opt: ProjectOpt = None,
    save: Annotated[str | None, typer.Option(help="Keep the current set as a named list.")] = None,
    list_name: Annotated[
        str | None, typer.Option("--list", help="Use a saved list instead of the current set.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the item ids, one a line (for `juge run --only`).")
    ] = None,
    db_url: DbUrl = None,
) -> None:
    """List closed items where raters, or a judge and the raters, disagree; save or export the set."""
    from juge.label.db import LabelError

    store = _store(db_url)
    project = _project(store, name, project_opt)
    if list_name:
        try:
            ids = store.list_items(project, list_name)
        except LabelError as exc:
            raise InputError(str(exc)) from None
    else:
        rows = store.disagreements(project)
        ids = [r["item_id"] for r in rows]
        for r in rows:
            final = f" -> final {r['final']['label']}" if r["final"] else ""
            console.print(f"{r['item_id']}: {'; '.join(r['reasons'])}{final}", highlight=False, markup=False)
    if save:
        store.save_list(project, save, ids)
        console.print(Text(f"Saved {len(ids)} items as list {save!r}"))
    if output:
        write_atomic(output, "".join(i + "\n" for i in ids))
        console.print(Text(f"Wrote {len(ids)} item ids to {output}"))
    if not output and not save:
        console.print(f"{len(ids)} items")


def register(app: typer.Typer) -> None:
    app.add_typer(label_app, name="label")
