"""Help screens that fit the terminal: option names and command names are never cut, flags read as flags.

typer's rich help lays options out in a table whose columns rich shrinks with an ellipsis when the
terminal is narrow, so `--allow-different-judges` read `--allow-different-judg…` at 80 columns and
long values in the help text (URLs, `--map` examples) were cut too. Here the name columns keep their
full width, the type column wraps between words, and the help text takes the rest, folding a word
longer than its column instead of cutting it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, get_args

from rich.columns import Columns
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.table import Table


class HelpTable(Table):
    """A table of typer's help. In an options table (six or more columns: required mark, long and
    short names, negative names, type, help) every column before the type holds names."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if len(self.columns) >= 6:  # an options table (the commands table sets its own widths)
            wide = options.update_width(10**4)
            *names, kind, text = self.columns
            for column in names:
                column.no_wrap = True
                column.min_width = _widest(console, wide, column.cells, maximum=True)
            kind.min_width = _widest(console, wide, kind.cells, maximum=False)
            kind.overflow = text.overflow = "fold"
            # typer flows a help cell's parts (text, env var, default) with rich Columns, whose own
            # grid cuts a long word with an ellipsis: one part a line, in this column, folds instead
            text._cells = [Group(*c.renderables) if isinstance(c, Columns) else c for c in text._cells]
        yield from super().__rich_console__(console, options)


def _widest(console: Console, options: ConsoleOptions, cells: Iterable[object], *, maximum: bool) -> int:
    widths = [Measurement.get(console, options, cell) for cell in cells]  # type: ignore[arg-type]
    return max((m.maximum if maximum else m.minimum for m in widths), default=0)


def fit_help() -> None:
    """Make typer's rich help lay out its option and command tables with `HelpTable`, and show flags
    without a type. typer's rich help (and the Markdown parser it brings) is imported when a help screen
    is shown, not before: `juge --version` and a command that runs never load it."""
    from typer.core import TyperCommand, TyperGroup

    for cls in (TyperCommand, TyperGroup):
        shown_help = cls.format_help
        if getattr(shown_help, "_juge_fitted", False):
            continue

        def format_help(self: Any, ctx: Any, formatter: Any, shown_help: Any = shown_help) -> None:
            import typer.rich_utils

            typer.rich_utils.Table = HelpTable  # type: ignore[misc]
            shown_help(self, ctx, formatter)

        format_help._juge_fitted = True  # type: ignore[attr-defined]
        cls.format_help = format_help  # type: ignore[method-assign]
    _show_flags_as_flags()


def _show_flags_as_flags() -> None:
    """typer 0.29's rich help prints the type of every option, so each flag (`--json`, even `--help`)
    reads `--json <bool>` as if it took a value, and a repeatable option or argument reads
    `--judge <list[str]>` as if it took a list. Its plain help and its docs show a flag without one and
    a repeatable value with the type of one value; make the rich help agree."""
    from typer.core import TyperArgument, TyperOption

    for cls in (TyperOption, TyperArgument):
        shown_type = cls.display_type_rich
        if getattr(shown_type, "_juge_flags", False):
            continue

        def display_type_rich(self: Any, ctx: Any, shown_type: Any = shown_type) -> str | None:
            if getattr(self, "is_flag", False) or getattr(self, "count", False):
                return None
            desc = self.type_descriptor
            named = isinstance(self, TyperOption) and self.metavar is not None  # an option's metavar is its type
            if desc.is_list and not desc.is_choice and not named:
                args = get_args(desc.annotation)
                if len(args) == 1:  # given once per value (an option) or as several values (an argument)
                    return f"<{self._bare_type(args[0])}>"
            return shown_type(self, ctx)

        display_type_rich._juge_flags = True  # type: ignore[attr-defined]
        cls.display_type_rich = display_type_rich  # type: ignore[method-assign]
