"""`juge init`: a new evaluation project that `juge run` runs offline at once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from juge.scaffold import KINDS, init_project


def init_command(
    directory: Annotated[Path, typer.Argument(help="Folder for the project (created; must be new or empty).")] = Path(
        "juge-eval"
    ),
    kind: Annotated[
        str, typer.Option("--kind", help=f"The judge's setup: {', '.join(KINDS)}.", show_default=True)
    ] = "passfail",
) -> None:
    """Start an evaluation: cases, an eval file, one judge with a rubric, a labels template, next steps."""
    result = init_project(directory, kind)
    out = Console()
    out.print(f"wrote a {result.kind} project to [bold]{escape(str(result.directory))}[/]:", highlight=False)
    for name in result.files:
        out.print(f"  {escape(name)}", highlight=False)
    d = escape(str(result.directory))
    out.print(
        f"next: [bold]cd {d} && juge run eval.toml[/] (offline), then "
        f"[bold]juge prompt {result.judge} --case orders-01[/]; README.md has the rest",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("init")(init_command)
