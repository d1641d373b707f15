"""`juge runs` (list, filter) and `juge runs rm`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from juge.commands.console import Console
from juge.commands.run import DbOption
from juge.files import is_stdout, staged_output
from juge.store import DEFAULT_DB, is_database_url

runs_app = typer.Typer(
    help="List stored runs with their versions and summary (newest first); `juge runs rm RUN...` deletes runs.",
    invoke_without_command=True,
    no_args_is_help=False,
)


def _status_option(status: str | None) -> str | None:
    """--status takes a status a run can have: another one would match no run, silently."""
    from juge.errors import InputError

    if status is not None and status not in ("running", "done"):
        raise InputError(f"--status {status}: choose running or done")
    return status


@runs_app.callback()
def runs_command(
    ctx: typer.Context,
    eval_name: Annotated[
        str | None, typer.Option("--eval", help="Only runs of this eval (its name, or its file as given).")
    ] = None,
    status: Annotated[
        str | None,
        typer.Option("--status", callback=_status_option, help="Only runs with this status: running or done."),
    ] = None,
    last: Annotated[int | None, typer.Option("--last", min=1, help="Only the newest N runs.")] = None,
    all_kinds: Annotated[
        bool, typer.Option("--all", help="Also the runs tune, probes, live routing and the live demo made.")
    ] = False,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the runs as JSON to this file ('-' for standard output).")
    ] = None,
    db: DbOption = str(DEFAULT_DB),
) -> None:
    """List stored runs with their versions and summary, newest first."""
    if ctx.invoked_subcommand is not None:
        return
    from juge.api import list_runs
    from juge.store.postgres import shown_url

    with staged_output(json_out, "--json") as json_tmp:
        runs = list_runs(db=db, eval_name=eval_name, status=status, last=last, all_kinds=all_kinds)
        if json_tmp is not None:
            text = json.dumps([r.to_dict() for r in runs], indent=2, ensure_ascii=False) + "\n"
            json_tmp.write_text(text, encoding="utf-8")
    if is_stdout(json_out):
        return
    where = shown_url(db) if is_database_url(db) else db
    out = Console()
    if not runs:
        out.print(f"no runs in {where}" + (" match" if eval_name or status else ""), markup=False)
        return
    out.print(f"[bold]{len(runs)} run{'s' * (len(runs) != 1)} in {escape(where)}[/], newest first", highlight=False)
    for r in runs:
        if r.done is not None:
            result = f"{r.done}/{r.total if r.total is not None else '?'} judgments stored"
        elif r.pass_rate is not None:
            result = f"pass {r.pass_rate:.1%} ({r.cases_passed}/{r.n_cases})"
        else:
            result = f"{r.n_cases if r.n_cases is not None else '?'} cases"
        status_text = r.status if r.status == "done" else f"[yellow]{r.status}[/]"
        kind = "" if r.kind == "eval" else f"  [{escape(r.kind)}]"
        out.print(
            f"[bold]{r.run_id}[/]{kind}  {escape(r.name or '-')}  {r.started_at[:16].replace('T', ' ')}  {status_text}  "
            f"{result}",
            highlight=False,
        )
        for j in r.judges:
            out.print(
                f"    judge {escape(j.name)}: {escape(j.template or '?')}#{(j.template_hash or '?')[:8]} "
                f"{escape(j.model or '')}",
                highlight=False,
            )
        if r.system is not None:
            out.print(f"    system {escape(r.system.model)} prompt #{r.system.template_hash or '?'}", highlight=False)
        out.print(f"    data {r.dataset_hash[:12]}  juge {r.juge_version}", style="dim", highlight=False)


@runs_app.command("rm")
def rm_command(
    run_ids: Annotated[list[str], typer.Argument(help="Run ids (or unique prefixes).")],
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the runs deleted as JSON ('-' for standard output).")
    ] = None,
    db: DbOption = str(DEFAULT_DB),
) -> None:
    """Delete runs with everything stored under them (the response cache stays)."""
    from juge.api import delete_runs

    with staged_output(json_out, "--json") as json_tmp:  # a bad --json fails before anything is deleted
        deleted = delete_runs(run_ids, db=db)
        if json_tmp is not None:
            text = json.dumps([r.to_dict() for r in deleted], indent=2, ensure_ascii=False) + "\n"
            json_tmp.write_text(text, encoding="utf-8")
    err = Console(stderr=True)
    for run in deleted:
        err.print(f"deleted run {run.id} ({run.name or '-'}, {run.status})", markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")
