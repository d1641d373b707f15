"""`juge runs` (list, filter) and `juge runs rm`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from juge.commands.run import DbOption, _open
from juge.errors import InputError
from juge.files import is_stdout, write_atomic
from juge.store import DEFAULT_DB, RunNotFound, is_database_url

runs_app = typer.Typer(
    help="List stored runs with their versions and summary (newest first); `juge runs rm RUN...` deletes runs.",
    invoke_without_command=True,
    no_args_is_help=False,
)


@runs_app.callback()
def runs_command(
    ctx: typer.Context,
    eval_name: Annotated[
        str | None, typer.Option("--eval", help="Only runs of this eval (its name, or its file as given).")
    ] = None,
    status: Annotated[str | None, typer.Option("--status", help="Only runs with this status: running or done.")] = None,
    last: Annotated[int | None, typer.Option("--last", min=1, help="Only the newest N runs.")] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the runs as JSON to this file ('-' for standard output).")
    ] = None,
    db: DbOption = str(DEFAULT_DB),
) -> None:
    """List stored runs with their versions and summary, newest first."""
    if ctx.invoked_subcommand is not None:
        return
    from juge.runs.listing import list_runs, run_row

    with _open(db) as store:
        runs = list_runs(store, eval_name=eval_name, status=status, last=last)
        where = str(store.path)  # a database URL without its password
    if json_out is not None:
        text = json.dumps([run_row(r) for r in runs], indent=2, ensure_ascii=False) + "\n"
        write_atomic(json_out, text)
        if is_stdout(json_out):
            return
    out = Console()
    if not runs:
        out.print(f"no runs in {where}" + (" match" if eval_name or status else ""), markup=False)
        return
    out.print(f"[bold]{len(runs)} runs in {escape(where)}[/], newest first", highlight=False)
    for r in runs:
        s = r["summary"] or {}
        rate = s.get("pass_rate")
        if "done" in r:
            result = f"{r['done']}/{r['total'] if r['total'] is not None else '?'} judgments stored"
        elif rate is not None:
            result = f"pass {rate:.1%} ({s.get('cases_passed')}/{s.get('n_cases')})"
        else:
            result = f"{s.get('n_cases', '?')} cases"
        status_text = r["status"] if r["status"] == "done" else f"[yellow]{r['status']}[/]"
        out.print(
            f"[bold]{r['id']}[/]  {escape(r['name'] or '-')}  {r['started_at'][:16].replace('T', ' ')}  "
            f"{status_text}  {result}",
            highlight=False,
        )
        for j in r["config"].get("judges", []):
            out.print(
                f"    judge {escape(j['name'])}: {escape(j['template'])}#{j['template_hash'][:8]} "
                f"{escape(j['model'] or '')}",
                highlight=False,
            )
        system = r["config"].get("system")
        if system:
            out.print(
                f"    system {escape(system['model'])} prompt #{system.get('template_hash', '?')}", highlight=False
            )
        out.print(f"    data {r['dataset_hash'][:12]}  juge {r['juge_version']}", style="dim", highlight=False)


@runs_app.command("rm")
def rm_command(
    run_ids: Annotated[list[str], typer.Argument(help="Run ids (or unique prefixes).")],
    db: DbOption = str(DEFAULT_DB),
) -> None:
    """Delete runs with everything stored under them (the response cache stays)."""
    import fcntl

    err = Console(stderr=True)
    with _open(db) as store:
        runs = []
        for given in run_ids:  # every id resolved before anything is deleted
            try:
                runs.append(store.get_run(given))
            except RunNotFound as exc:
                raise InputError(f"{exc}; nothing was deleted") from None
        for run in runs:
            # A run being judged holds its eval's file lock (beside a SQLite store; a PostgreSQL store
            # has no such file and is not checked here).
            if run["status"] != "running" or not run.get("eval_hash") or is_database_url(db):
                continue
            lock = Path(db).parent / f".run-{hashlib.sha256(run['eval_hash'].encode()).hexdigest()[:16]}.lock"
            if lock.exists():
                with open(lock, "a+") as handle:
                    try:
                        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        fcntl.flock(handle, fcntl.LOCK_UN)
                    except BlockingIOError:
                        raise InputError(
                            f"run {run['id']} is being judged by another juge process right now; nothing was deleted"
                        ) from None
        for run in {r["id"]: r for r in runs}.values():
            store.delete_run(run["id"])
            err.print(f"deleted run {run['id']} ({run['name'] or '-'}, {run['status']})", markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")
