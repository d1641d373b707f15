"""`juge view`: browse runs, calibrations, policies and holdout tests in the browser (read-only)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from juge.commands.console import Console
from juge.commands.db_option import DbOption
from juge.commands.inputs import reads_inputs
from juge.store import DEFAULT_DB

console = Console(highlight=False)

VIEW_HELP = (
    "Browse the store in the browser: runs (filter by eval, status, kind, date), a run's summary, gate, "
    "versions, cost and its judgments a page at a time (filter by outcome, judge, verdict, category, check), "
    "a case with the raw judge text of both orders and the prompt as sent, two runs compared, and the "
    "calibrations, policies and holdout tests you open, each figure linked to the items behind it.\n\n"
    "Read-only (no page changes the store), bound to 127.0.0.1, opened with the printed link: its token works "
    "once and signs this browser in. For the evaluation owner: it shows verdicts, model names and people's "
    "labels side by side, so never send it to raters.\n\n"
    "Example: juge view --calibration calibration.json --policy policy.json --labels labels.jsonl"
)


@reads_inputs("labels_map", "format")
def view_command(
    calibration: Annotated[
        list[Path] | None,
        typer.Option("--calibration", help="A calibration result (`juge calibrate --json`) to open; repeatable."),
    ] = None,
    policy: Annotated[
        list[Path] | None, typer.Option("--policy", help="A policy (`juge policy derive --json`) to open; repeatable.")
    ] = None,
    policy_test: Annotated[
        list[Path] | None,
        typer.Option("--policy-test", help="A holdout test (`juge policy test --json`) to open; repeatable."),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option("--labels", help="People's labels (e.g. `juge label export`) shown beside the judges' verdicts."),
    ] = None,
    label_db_url: Annotated[
        str | None,
        typer.Option(
            "--label-db-url",
            envvar="JUGE_LABEL_DB_URL",
            help="The label store whose projects a run was attached to (`juge label attach-run`): their labels "
            "are shown beside the run's verdicts. Default: the --db SQLite file, when it holds labelling projects.",
        ),
    ] = None,
    host: Annotated[
        str, typer.Option(help="Interface to bind. Keep 127.0.0.1 unless behind a TLS proxy.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: any free port, printed).", min=0, max=65535)] = 8766,
    db: DbOption = str(DEFAULT_DB),
    *,
    source: Any,
) -> None:
    from juge.api import view_server

    server = view_server(
        db,
        host=host,
        port=port,
        calibrations=calibration or [],
        policies=policy or [],
        tests=policy_test or [],
        labels=labels,
        labels_map=source.labels_map,
        labels_format=source.format,
        label_db_url=label_db_url,
    )
    for warning in server.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    console.print("juge view: open this link in your browser (it works once; Ctrl-C to stop):")
    typer.echo(server.login_url)  # never wrapped: the link is copied whole
    server.run()


def register(app: typer.Typer) -> None:
    app.command("view", help=VIEW_HELP)(view_command)
