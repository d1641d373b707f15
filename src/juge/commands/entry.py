"""The `juge` console script. `juge --version` answers before the command line is built: typer, rich and every
command's options are most of what a start costs. Everything else goes to :func:`juge.cli.main`."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from juge import __version__

        sys.stdout.write(f"juge {__version__}\n")  # the line `juge version` prints
        return
    from juge.cli import as_process
    from juge.cli import main as cli_main

    as_process()
    cli_main()
