"""`juge label`: blind human labelling in the browser (init, add-rater, serve, status, release, export, review).

Each command parses its options, calls one function of `juge.label.api` and prints what it returns.
The project is named the same way everywhere: as the first argument or with -p/--project.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from juge.calibration.source import StudySource
from juge.commands.console import Console
from juge.commands.inputs import INPUT_OPTIONS, map_with_id, reads_inputs
from juge.errors import InputError
from juge.files import is_stdout, writable
from juge.reports.fit import fitted
from juge.visible import terminal_safe

if TYPE_CHECKING:
    from juge.label.results import LabelResult

label_app = typer.Typer(
    help="Blind human labelling: a small web app for raters, agreement between them, adjudication.\n\n"
    "Typical use: **init** a project from cases and a rubric, **add-rater** for each person (prints a "
    "login link), **serve**, watch **status**, **release** items a rater left unlabelled, then **export** labels "
    "for `juge calibrate`. Every command that works on one project takes it as its first argument or with "
    "-p/--project (optional when the store holds one project).",
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
DbFile = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="The label store as on the other juge commands: a SQLite file (or a database URL); wins over --db-url.",
    ),
]


def _store(db_url: str | None, db: str | None) -> str | None:
    """The label store's URL: --db (a file without a scheme is that SQLite file), else --db-url."""
    if db is None:
        return db_url
    return db if "://" in db else f"sqlite:///{db}"


DEFAULT_BASE_URL = "http://127.0.0.1:8765"  # `juge label serve` on its default --host and --port
ProjectOpt = Annotated[str | None, typer.Option("--project", "-p", help="Labelling project (default: the only one).")]
ProjectArg = Annotated[
    str | None, typer.Argument(metavar="PROJECT", help="Project name (or -p NAME; default: the only project).")
]
JsonOut = Annotated[
    Path | None,
    typer.Option(
        "--json",
        help="Also write these figures as JSON to this file ('-': standard output, nothing else).",
        callback=lambda path: writable(path, "--json"),  # an unwritable path fails before anything is stored
    ),
]


def _one(name: str | None, option: str | None) -> str | None:
    """The project named positionally or with -p (the same name twice is fine)."""
    if name is not None and option is not None and name != option:
        raise InputError(f"two project names given: {name!r} and -p {option!r}; give one")
    return name if name is not None else option


def _project_and(args: list[str], option: str | None, what: str) -> tuple[str | None, str]:
    """`[PROJECT] THING` arguments: one is the thing (project from -p or the only one), two are project and thing."""
    if len(args) not in (1, 2):
        raise typer.BadParameter(f"expected [PROJECT] {what}, got {len(args)} arguments")
    return (_one(args[0], option), args[1]) if len(args) == 2 else (option, args[0])


def _json(result: LabelResult, json_out: Path | None) -> bool:
    """Write `result` as JSON when --json is given; True when it went to standard output (print nothing else)."""
    if json_out is None:
        return False
    result.save(json_out)
    return is_stdout(json_out)


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def _examples(ids: list[str], k: int = 3) -> str:
    return ", ".join(repr(i) for i in ids[:k]) + (", ..." if len(ids) > k else "") if ids else "none"


@label_app.command("init")
@reads_inputs("format", "quoting", "member")
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
    name: Annotated[
        str | None,
        typer.Argument(metavar="PROJECT", help="Project name, used by every other label command (or -p/--name NAME)."),
    ] = None,
    project_opt: Annotated[
        str | None, typer.Option("--project", "-p", "--name", help="Project name (instead of the argument).")
    ] = None,
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
    id_from: Annotated[str | None, typer.Option("--id", help=INPUT_OPTIONS["id"].help)] = None,
    select: Annotated[
        str | None,
        typer.Option(
            "--select",
            help="Label only --budget of the cases: random (a simple random sample), stratified (by category; with "
            "--run, Neyman's optimal allocation by each category's spread, else in proportion to size; at least 2 "
            "each) or decisive (cases of open policy categories, order-dependent pairs, scores near the threshold "
            "drawn more often, every case with a positive chance). Each item's chance is recorded in its "
            "meta.juge_selection and in --json; estimate from such labels with juge estimate --selection.",
        ),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option("--budget", min=1, help="With --select: how many items to draw (decisive: on average)."),
    ] = None,
    run: Annotated[
        str | None,
        typer.Option(
            "--run",
            help="With --select: a juge run over these cases; its judge's verdicts give each category's spread "
            "(stratified) and the order-dependent pairs and scores near the threshold (decisive).",
        ),
    ] = None,
    run_db: Annotated[
        Path | None, typer.Option("--run-db", help="The juge store holding --run (default .juge/juge.db).")
    ] = None,
    judgments: Annotated[
        Path | None,
        typer.Option(
            "--judgments",
            help="With --select, instead of --run: recorded judge calls (JSONL, as juge calibrate reads them).",
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="With --judgments: the judge whose calls to read (default: the --policy's or --plan's judge, "
            "else every judge's).",
        ),
    ] = None,
    pilot_labels: Annotated[
        Path | None,
        typer.Option(
            "--pilot-labels",
            help="With --run: pass/fail labels already in hand on some of the cases (item_id, rater_id, label); a "
            "category with 10 or more is allocated by the spread of the judge's errors there.",
        ),
    ] = None,
    policy: Annotated[
        Path | None,
        typer.Option("--policy", help="With --select decisive: a policy file; its open categories are drawn more."),
    ] = None,
    plan: Annotated[
        Path | None,
        typer.Option(
            "--plan",
            help="With --select decisive: the --json of juge plan; its categories not settled now are drawn more.",
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", help="With --run: the score that passes (default: the run's [gate] min_score)."),
    ] = None,
    json_out: JsonOut = None,
    db_url: DbUrl = None,
    db: DbFile = None,
    source: StudySource = StudySource(),
) -> None:
    """Create a labelling project from cases and a rubric.

    Raters see the input (the question or conversation, and the case's `context` and `source` when it has them:
    the document a faithfulness judge checks against), the reference answer if any, the answer(s) and the rubric;
    never `meta`, item ids or model names. In the MT-Bench sample layout `source` is provenance (dataset and
    licence), so it is kept in `meta`, hidden from raters.
    """
    from juge.label.api import label_init

    project = _one(name, project_opt)
    if project is None:
        raise typer.BadParameter("name the new project: juge label init NAME (or -p NAME)")
    from juge.data.readers import member_path

    made = label_init(
        project,
        cases=Path(member_path(cases, source.member)),
        task=task,
        rubric=rubric,
        overlap=overlap,
        overlap_raters=overlap_raters,
        break_after=break_after,
        seed=seed,
        field_map=map_with_id(field_map, id_from),
        db_url=_store(db_url, db),
        format=source.format,
        select=select,  # type: ignore[arg-type]  # checked by label_init
        budget=budget,
        run=run,
        run_db=run_db,
        judgments=judgments,
        judge=judge,
        pilot_labels=pilot_labels,
        policy=policy,
        plan=plan,
        threshold=threshold,
    )
    if _json(made, json_out):
        return
    for note in made.notes:
        console.print(Text(f"note: {note}", style="yellow"))
    if made.selection is not None:
        sel = made.selection
        drawn = sum(s.selected for s in sel.strata)
        how = sel.method if sel.allocation == sel.method else f"{sel.method}, {sel.allocation}"
        console.print(
            Text(  # the strata are the cases' categories: data, escaped
                terminal_safe(
                    f"Drew {drawn} of {sel.population} cases ({how}): "
                    + ", ".join(f"{s.stratum} {s.selected}/{s.population}" for s in sel.strata)
                    + f". {sel.why}. Each item's chance is in its meta.juge_selection."
                )
            )
        )
        if json_out is not None:
            console.print(
                Text(
                    f"Once labelled: juge estimate --run {sel.run_id or 'RUN_ID'} --labels LABELS --selection {json_out}"
                ),
                soft_wrap=True,
            )
        else:
            # estimate --selection reads only this command's --json: without it the labels cannot be weighted.
            console.print(
                Text(
                    "warning: without --json FILE the draw is not kept for juge estimate --selection, which weights "
                    "these labels by their chances; draw again into a new project with --json FILE",
                    style="yellow",
                )
            )
    console.print(
        f"Created labelling project [b]{escape(made.project)}[/]: {made.items} {made.task} items, "
        f"{made.overlap_items} of them for {made.overlap_raters} raters. Next: juge label add-rater NAME"
    )


_RATER_ARGS = typer.Argument(
    metavar="[PROJECT] NAME", help="The rater's name (exported as rater_id), after the project name if given."
)


@label_app.command("add-rater")
def add_rater_command(
    args: Annotated[list[str], _RATER_ARGS],
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
    db: DbFile = None,
) -> None:
    """Add a rater and print their personal login link (the token is stored only as a hash).

    The token is not tied to a host: the link is the login path on whatever address `juge label serve`
    runs at. The full link printed uses --base-url (serve's defaults unless given).
    """
    from juge.label.api import label_add_rater

    proj, name = _project_and(args, project, "NAME")
    link = label_add_rater(name, project=proj, adjudicator=adjudicator, db_url=_store(db_url, db))
    console.print(
        f"Rater [b]{escape(link.rater)}[/] added to {escape(link.project)}"
        f"{' as adjudicator' if link.adjudicator else ''}. Send their login link privately; it is shown only once:",
        highlight=False,
    )
    typer.echo(link.link(base_url))
    where = (
        "the defaults of `juge label serve` (--host 127.0.0.1 --port 8765)"
        if base_url == DEFAULT_BASE_URL
        else "--base-url"
    )
    console.print(
        Text(
            f"The host and port above are {where}. If the app runs elsewhere, the link is the address "
            f"`juge label serve` prints at start followed by {link.path}",
            style="dim",
        )
    )


@label_app.command("rotate-link")
def rotate_link_command(
    args: Annotated[list[str], _RATER_ARGS],
    project: ProjectOpt = None,
    base_url: Annotated[
        str, typer.Option(help="Address raters reach `juge label serve` at, only used to print the full link.")
    ] = DEFAULT_BASE_URL,
    db_url: DbUrl = None,
    db: DbFile = None,
) -> None:
    """Give a rater a new login link: the old one stops working and every browser they signed in is signed out."""
    from juge.label.api import label_rotate_link

    proj, name = _project_and(args, project, "NAME")
    link = label_rotate_link(name, project=proj, db_url=_store(db_url, db))
    console.print(
        f"New login link for [b]{escape(link.rater)}[/] in {escape(link.project)} (the old one no longer works; "
        "send this one privately, it is shown only once):",
        highlight=False,
    )
    typer.echo(link.link(base_url))


@label_app.command("revoke-rater")
def revoke_rater_command(
    args: Annotated[list[str], _RATER_ARGS],
    project: ProjectOpt = None,
    db_url: DbUrl = None,
    db: DbFile = None,
) -> None:
    """Stop a rater from signing in (their link and every signed-in browser); their labels stay.
    `juge label rotate-link NAME` lets them back in with a new link."""
    from juge.label.api import label_revoke_rater

    proj, name = _project_and(args, project, "NAME")
    done = label_revoke_rater(name, project=proj, db_url=_store(db_url, db))
    console.print(
        f"Rater [b]{escape(done.rater)}[/] can no longer sign in to {escape(done.project)}; their labels stay.",
        highlight=False,
    )


@label_app.command("serve")
def serve_command(
    host: Annotated[
        str, typer.Option(help="Interface to bind. Keep 127.0.0.1 unless behind a TLS proxy.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: any free port, printed).", min=0, max=65535)] = 8765,
    db_url: DbUrl = None,
    db: DbFile = None,
    trusted_proxy: Annotated[
        str | None,
        typer.Option(
            "--trusted-proxy",
            metavar="ADDR",
            help="IP address of the reverse proxy in front: its X-Forwarded-For names the client for the"
            " failed-sign-in limit. Without it the socket's peer counts, whatever the header says.",
        ),
    ] = None,
) -> None:
    """Serve the labelling app (all projects; each rater sees their own)."""
    from juge.label.api import label_server

    server = label_server(
        host, port, db_url=_store(db_url, db), trusted_proxy=trusted_proxy
    )  # bound before the banner: a port in use is an error
    for warning in server.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    console.print(Text(f"juge label: {server.url}/ (Ctrl-C to stop)"))
    console.print(
        Text(f"raters log in at {server.url}/login?token=<their token> (the token from `juge label add-rater`)")
    )
    server.run()


@label_app.command("status")
def status_command(
    name: ProjectArg = None,
    project_opt: ProjectOpt = None,
    json_out: JsonOut = None,
    db_url: DbUrl = None,
    db: DbFile = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap resamples.")] = 0,
    resamples: Annotated[int, typer.Option("--resamples", min=100, help="Bootstrap resamples.")] = 2000,
) -> None:
    """Who labelled how much, items done and left, and agreement between raters so far (95 % intervals:
    percentile bootstrap over items)."""
    from juge.label.api import label_status
    from juge.stats.estimate import format_estimate

    s = label_status(_one(name, project_opt), db_url=_store(db_url, db), resamples=resamples, seed=seed)
    if _json(s, json_out):
        return
    console.print(
        f"[b]{escape(s.project)}[/] ({s.task}): {s.items} items, {s.items_closed} done, "
        f"{s.items_left} left; {s.labels} labels; {s.overlap_items} overlap items"
    )
    table = Table("rater", "labels", "sessions", "mean s/item", "median s/item", "role")
    for r in s.raters:
        mean = "-" if r.mean_seconds is None else f"{r.mean_seconds:.1f}"
        median = Text(
            "-" if r.median_seconds is None else f"{r.median_seconds:.1f}" + (" too fast" if r.too_fast else "")
        )
        if r.too_fast:
            median.stylize("bold yellow")
        role = "adjudicator" if r.adjudicator else "rater"
        table.add_row(Text(r.rater), str(r.labels), str(r.sessions), mean, median, role)
    console.print(fitted(table, console))
    for r in s.raters:
        if r.too_fast:
            console.print(
                Text(
                    f"warning: {r.rater} took a median {r.median_seconds:.1f} s per label (under "
                    f"{s.too_fast_seconds:g} s, over {r.timed_labels} timed labels): faster than an item can be "
                    "read; check their labels before you use them",
                    style="yellow",
                ),
                soft_wrap=True,
            )
    if s.pairs and s.agreement_estimate is not None:
        # One figure a line, so a narrow terminal never splits an interval.
        console.print(Text("person vs person (n: pairs of raters on one item; 95 % intervals, bootstrap over items):"))
        console.print(Text(f"  agreement      {format_estimate(s.agreement_estimate)}"))
        console.print(Text(f"  Cohen's kappa  {format_estimate(s.kappa_estimate)}"))
    else:
        console.print("person vs person: no item has two labels yet (n = 0)")
    console.print(f"disagreements to review: {s.disagreements}")


@label_app.command("release")
def release_command(
    name: ProjectArg = None,
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
    json_out: JsonOut = None,
    db_url: DbUrl = None,
    db: DbFile = None,
) -> None:
    """Give items back to the pool that a rater was handed but never labelled (a rater who stopped coming).

    Only assignments without a label are freed; a freed item goes to another rater (never twice to the
    same one, never to more raters than it needs). If the first rater still submits it from an open
    page, the label is kept only while the item still has a free place; otherwise they are told and
    nothing is stored.
    """
    from juge.label.api import label_release

    freed = label_release(
        _one(name, project_opt), rater=rater, idle_hours=idle_hours, dry_run=dry_run, db_url=_store(db_url, db)
    )
    if _json(freed, json_out):
        return
    verb = "would free" if dry_run else "freed"
    for person, n in freed.freed.items():
        console.print(Text(f"{person}: {verb} {_items(n)}"))
    console.print(f"{verb} {_items(freed.total)} in total" + (" (dry run: nothing changed)" if dry_run else ""))


@label_app.command("export")
def export_command(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="File to write: .jsonl (JSON lines) or .csv, by its suffix.")
    ],
    name: ProjectArg = None,
    project_opt: ProjectOpt = None,
    adjudications: Annotated[
        Path | None,
        typer.Option(
            help="Also write the adjudicators' final labels (item_id, label, reason, adjudicator) to this file"
            " (.jsonl or .csv)."
        ),
    ] = None,
    json_out: JsonOut = None,
    db_url: DbUrl = None,
    db: DbFile = None,
) -> None:
    """Write one row per rater per item (item_id, rater_id, label, explanation) for `juge calibrate --labels`.

    Pairwise labels are A (answer 1 better), B (answer 2 better) or tie, in the fixed order of the cases,
    whatever side each rater saw them on.
    """
    from juge.label.api import label_export

    done = label_export(_one(name, project_opt), output=output, adjudications=adjudications, db_url=_store(db_url, db))
    if _json(done, json_out):
        return
    console.print(Text(f"Wrote {done.labels} labels to {done.output}"))
    if done.adjudications_output is not None:
        console.print(Text(f"Wrote {done.adjudications} final labels to {done.adjudications_output}"))


@label_app.command("attach-run")
def attach_run_command(
    args: Annotated[
        list[str],
        typer.Argument(
            metavar="[PROJECT] RUN_ID",
            help="A `juge run` id (or unambiguous prefix) over the same cases, after the project name if given.",
        ),
    ],
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
    json_out: JsonOut = None,
    db_url: DbUrl = None,  # --db here is the run's store, as on juge run
) -> None:
    """Copy a run's judge verdicts into the review, so judge-vs-people disagreements are listed.

    Verdicts are shown to adjudicators only, and only for items whose labelling is closed.
    Refused (exit 2) when no case of the run is an item of the project, and when the run judged other
    answers (its case outputs, or the outputs its system generated) than the ones people labelled for some
    items (their output hashes differ), unless --allow-changed-outputs.
    """
    from juge.label.api import label_attach_run

    project, run_id = _project_and(args, project_opt, "RUN_ID")
    done = label_attach_run(
        project,
        run_id,
        db=old_store_path or store_path,  # --store: the option's earlier name
        allow_changed_outputs=allow_changed_outputs,
        db_url=db_url,
    )
    if _json(done, json_out):
        return
    console.print(Text(f"Attached {done.attached} judge verdicts from run {done.run_id} to {done.project}"))
    if done.left_out:
        console.print(
            Text(
                f"Left out {len(done.left_out)} items whose answers changed since labelling "
                f"({_examples(done.left_out)}): no judge comparison on them",
                style="yellow",
            )
        )


@label_app.command("disagreements")
def disagreements_command(
    name: ProjectArg = None,
    project_opt: ProjectOpt = None,
    save: Annotated[str | None, typer.Option(help="Keep the current set as a named list.")] = None,
    list_name: Annotated[
        str | None, typer.Option("--list", help="Use a saved list instead of the current set.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the item ids, one a line (for `juge run --only`).")
    ] = None,
    json_out: JsonOut = None,
    db_url: DbUrl = None,
    db: DbFile = None,
) -> None:
    """List closed items where raters, or a judge and the raters, disagree; save or export the set."""
    from juge.label.api import label_disagreements

    found = label_disagreements(
        _one(name, project_opt), from_list=list_name, save=save, output=output, db_url=_store(db_url, db)
    )
    if _json(found, json_out):
        return
    for d in found.items:
        final = f" -> final {d.final.label}" if d.final else ""
        console.print(f"{d.item_id}: {'; '.join(d.reasons)}{final}", highlight=False, markup=False)
    if found.saved_as:
        console.print(Text(f"Saved {len(found.item_ids)} items as list {found.saved_as!r}"))
    if found.output:
        console.print(Text(f"Wrote {len(found.item_ids)} item ids to {found.output}"))
    if not found.output and not found.saved_as:
        console.print(f"{len(found.item_ids)} items")


def register(app: typer.Typer) -> None:
    app.add_typer(label_app, name="label")
