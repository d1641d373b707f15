"""The `juge` command line. Each command is a thin shell over a module in `juge.commands`."""

from __future__ import annotations

import atexit
import copy
import functools
import gc
import importlib
import importlib.util
import signal
import sys

import typer
from rich.markup import escape
from typer.main import get_command_name
from typer.models import CommandInfo

from juge.commands.console import Console
from juge.commands.help_layout import fit_help
from juge.errors import JugeError

fit_help()  # option names in help are never cut at 80 columns; flags show no type


def _new_app() -> typer.Typer:
    """The root of the command line, holding no command yet."""
    root = typer.Typer(
        name="juge",
        help="Run LLM judges over real cases, measure them against people, and decide what they may judge alone.",
        no_args_is_help=True,
        rich_markup_mode="markdown",
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    root.callback()(_root)
    return root


# Each module defines `register(app: typer.Typer) -> None`.
COMMAND_MODULES = (
    "juge.commands.init",
    "juge.commands.run",
    "juge.commands.runs",
    "juge.commands.prompt",
    "juge.commands.data",
    "juge.commands.imports",
    "juge.commands.calibrate",
    "juge.commands.policy",
    "juge.commands.drift",
    "juge.commands.label",
    "juge.commands.report",
    "juge.commands.probe",
    "juge.commands.tune",
    "juge.commands.view",
)

# The module that registers each command (not group): `juge COMMAND` imports that one module, not all of them
# (~15 ms of each start). A command missing here still runs, from the whole app; tests/test_cli_one_command.py
# checks the map against what the modules register.
COMMAND_MODULE = {
    "init": "juge.commands.init",
    **dict.fromkeys(("run", "show", "export"), "juge.commands.run"),
    "prompt": "juge.commands.prompt",
    "split": "juge.commands.data",
    **dict.fromkeys(("calibrate", "demo"), "juge.commands.calibrate"),
    **dict.fromkeys(("route", "audit-sample", "compare", "estimate", "plan"), "juge.commands.policy"),
    "drift": "juge.commands.drift",
    "report": "juge.commands.report",
    "tune": "juge.commands.tune",
    "view": "juge.commands.view",
}


def _print_version(value: bool) -> None:
    if value:
        from juge import __version__

        typer.echo(f"juge {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the juge version and exit."
    ),
) -> None:
    """juge: trustworthy LLM-as-a-judge evaluation."""


def version_command() -> None:
    """Print the juge version (the same line as juge --version)."""
    _print_version(True)


@functools.cache
def _whole_app() -> typer.Typer:
    whole = _new_app()
    for name in COMMAND_MODULES:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name).register(whole)
    whole.command("version")(version_command)
    return whole


def __getattr__(name: str) -> typer.Typer:
    if name == "app":  # every command: built when asked for (help, groups, tests), not at import
        return _whole_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


OUT_OF_MEMORY = (
    "out of memory: give fewer items or cases at once, or fewer bootstrap resamples (--resamples) where the "
    "command takes them"
)


def _json_to_stdout(args: list[str]) -> bool:
    return "--json=-" in args or any(a == "--json" and b == "-" for a, b in zip(args, args[1:], strict=False))


def app_for(args: list[str]) -> typer.Typer:
    """The app that runs `args`: the command they name first, alone, when it is a command (not a group); else the
    whole app. Typer builds the options of every command it holds before it parses anything, tens of ms of each
    start for commands that will not run; one command alone parses, helps and fails as it does in the whole app.
    A command in `COMMAND_MODULE` comes from its module alone: the other command modules are not imported."""
    if args and not args[0].startswith("-"):
        module = "juge.cli" if args[0] == "version" else COMMAND_MODULE.get(args[0])
        if module is not None:
            alone = _new_app()
            if module == "juge.cli":
                alone.command("version")(version_command)
            else:
                importlib.import_module(module).register(alone)
            alone.registered_commands = [c for c in alone.registered_commands if _command_name(c) == args[0]]
            alone.registered_groups = []
            if alone.registered_commands:
                return alone
        app = _whole_app()
        named = [c for c in app.registered_commands if _command_name(c) == args[0]]
        if named:
            alone = copy.copy(app)
            alone.registered_commands, alone.registered_groups = named, []
            return alone
    return _whole_app()


def _command_name(info: CommandInfo) -> str | None:
    """The name a registered command is called by, as typer names it."""
    return info.name or (get_command_name(info.callback.__name__) if info.callback is not None else None)


def main(args: list[str] | None = None) -> None:
    """`juge ARGS` (default: the command line's), exiting with the code of a JugeError that reaches it."""
    from contextlib import nullcontext

    from juge.files import data_on_stdout

    err = Console(stderr=True)
    args = sys.argv[1:] if args is None else args
    try:
        with data_on_stdout() if _json_to_stdout(args) else nullcontext():
            app_for(args)(args=args, prog_name="juge")
    except JugeError as exc:  # the one handler: 2 for an InputError, 3 for a Fault (juge.errors)
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True, soft_wrap=True)
        sys.exit(exc.exit_code)
    except MemoryError:  # one line, not a traceback as long as what ran out
        err.print(f"[bold red]error:[/] {OUT_OF_MEMORY}", highlight=False, markup=True, soft_wrap=True)
        sys.exit(3)
    except SystemExit as exc:
        if exc.code == INTERRUPTED:
            # Interrupted (Ctrl-C): what is left is the interpreter waiting for worker threads. A second Ctrl-C
            # ends the process at once, as the signal's default does, not with a traceback from threading.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        raise


INTERRUPTED = 130  # the exit code of a command stopped by Ctrl-C (128 + SIGINT)


def as_process() -> None:
    """For a process that runs one command and ends (the console script, ``python -m juge.cli``): at exit, every
    object is left out of the interpreter's last garbage collection (`gc.freeze`), which walks every object of
    every module, a twentieth of a second or more of each `juge run`, to free memory the process gives back
    anyway. Files, the store and the HTTP sessions are closed by the command itself; exit handlers still run."""
    atexit.register(gc.freeze)  # stops no other exit handler, before or after it


if __name__ == "__main__":
    as_process()
    main()
