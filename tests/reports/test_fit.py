"""Tables below 100 columns print as blocks: every name whole, every figure on one line."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from juge.reports.fit import fitted

LONG = "a-judge-with-a-rather-long-name/pairwise-template-v12"


def _table() -> Table:
    table = Table(title="Judges")
    table.add_column("judge")
    table.add_column("vs people")
    table.add_column("kappa")
    table.add_row(LONG, "0.718 [0.655, 0.779]\nn=240", "[bold]0.41[/]")
    table.add_row("longer answer", "0.5", "")
    return table


def _print(width: int, table: Table) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    console.print(fitted(table, console))
    return buf.getvalue()


def test_narrow_terminal_gets_blocks_with_whole_names():
    out = _print(80, _table())
    lines = out.splitlines()
    assert lines[0] == "Judges"
    assert f"  judge: {LONG}" in lines
    assert "    vs people: 0.718 [0.655, 0.779] n=240" in lines  # the cell's own break joined
    assert "    kappa: 0.41" in lines  # markup rendered, not printed
    assert "    kappa: " not in out.split("longer answer")[1]  # an empty cell is left out
    assert max(len(line) for line in lines) <= 80


def test_wide_terminal_keeps_the_table():
    out = _print(160, _table())
    assert "┃ judge" in out or "judge" in out.splitlines()[1]
    assert LONG in out


def test_two_columns_read_as_name_value():
    table = Table()
    table.add_column("verdict")
    table.add_column("count")
    table.add_row("PASS", "23")
    table.add_row("unparsed", "0")
    assert _print(80, table).splitlines() == ["  PASS: 23", "  unparsed: 0"]
