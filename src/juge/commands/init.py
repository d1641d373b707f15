"""`juge init`: a new evaluation project that `juge run` runs offline at once."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.text import Text

from juge.commands.console import Console
from juge.reports.fit import command_lines
from juge.scaffold import KINDS


def init_command(
    directory: Annotated[Path, typer.Argument(help="Folder for the project (created; must be new or empty).")] = Path(
        "juge-eval"
    ),
    kind: Annotated[
        str, typer.Option("--kind", help=f"The judge's setup: {', '.join(KINDS)}.", show_default=True)
    ] = "passfail",
) -> None:
    """Start an evaluation: cases, an eval file, one judge with a rubric, a labels template, next steps."""
    from juge.api import init_project

    result = init_project(directory, kind)
    out = Console()
    out.print(f"wrote a {result.kind} project to [bold]{escape(str(result.directory))}[/]:", highlight=False)
    for name in result.files:
        out.print(f"  {escape(name)}", highlight=False)
    # one command per line, so a narrow terminal breaks between commands, never inside one
    out.print("next:", highlight=False)
    for command, comment in (
        (f"cd {shlex.quote(str(result.directory))} && juge run eval.toml", "offline"),
        (f"juge prompt {result.judge} --case orders-01", "the exact messages the judge gets"),
    ):
        for line in command_lines(command, out.width, comment=comment):
            out.print(Text(line, style="" if line.lstrip().startswith("#") else "bold"), soft_wrap=True)
    out.print("  README.md has the rest", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("init")(init_command)
