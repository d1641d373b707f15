"""`juge split`: add a dev/holdout split by group to a file of items or cases."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from juge.commands.console import Console
from juge.files import staged_output


def split_command(
    items: Annotated[Path, typer.Option("--items", help="Items or cases (JSONL or CSV).")],
    output: Annotated[
        Path,
        typer.Option("-o", "--output", help="Where to write the rows with a `split` field (same format as the input)."),
    ],
    by: Annotated[
        str,
        typer.Option(
            help="The field that must stay on one side: the question, the customer, "
            "the conversation. Every row needs it."
        ),
    ] = "group",
    holdout: Annotated[
        float, typer.Option(help="Share of groups (not rows) that go to holdout, between 0 and 1.")
    ] = 0.5,
    seed: Annotated[
        int, typer.Option(help="A different seed gives a different split; the same seed the same one.")
    ] = 0,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing `split` field.")] = False,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the counts per side as JSON ('-' for standard output).")
    ] = None,
) -> None:
    """Add a dev/holdout split by group, so no group is on both sides.

    Policy choices are made on dev; the holdout is tested once (`juge policy test`). The split
    depends on each group's value and the seed alone, so it is stable: new rows never move an
    existing group.
    """
    from juge.api import split

    with staged_output(json_out, "--json") as json_tmp:  # staged first: a bad --json fails before -o is written
        result = split(items, output, by=by, holdout=holdout, seed=seed, force=force)
        if json_tmp is not None:  # '-': standard output, and the line below goes to stderr
            json_tmp.write_text(result.to_json(indent=2) + "\n", encoding="utf-8")
    Console().print(
        f"wrote {result.path}: dev {result.dev.rows} rows ({result.dev.groups} groups), holdout "
        f"{result.holdout.rows} rows ({result.holdout.groups} groups), by '{result.by}', seed {result.seed}",
        markup=False,
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("split")(split_command)
