"""The `--db` option, one for every command that reads or writes the run store."""

from __future__ import annotations

from typing import Annotated

import typer

DB_HELP = "juge database: a SQLite file, or a PostgreSQL URL (postgresql://user@host/db) shared by a team."

# a str, not a Path: Path("postgresql://user@host/db") would fold the URL's // into /
DbOption = Annotated[str, typer.Option("--db", help=DB_HELP, envvar="JUGE_DB")]
