"""A table too wide for its names and figures prints as blocks: every name whole, every figure on one line."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from juge.reports.fit import fitted, wrapped

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
    assert _print(15, table).splitlines() == ["  PASS: 23", "  unparsed: 0"]
    assert "┃ verdict  ┃ count ┃" in _print(80, table)  # it fits: a small table stays a table


def test_long_headers_wrap_between_words_but_cells_stay_whole():
    """Headers are not names: the table stays horizontal when only its headers would need the room."""
    table = Table()
    table.add_column("judge")
    for header in ("agreement with each person on every item", "kappa with the human majority vote"):
        table.add_column(header)
    table.add_row(LONG, "0.718 [0.655, 0.779] n=240", "0.41 [0.30, 0.52] n=240")
    out = _print(120, table)
    assert "┃" in out and LONG in out and "0.718 [0.655, 0.779] n=240" in out
    assert max(len(line) for line in out.splitlines()) <= 120
    assert "judge: " not in out


def test_prose_wraps_between_words_never_inside_a_figure():
    buf = io.StringIO()
    console = Console(file=buf, width=40, force_terminal=False, color_system=None)
    console.print(wrapped("the judge agrees with people: 0.718 [0.655, 0.779] n=240 on every item it saw", console))
    lines = buf.getvalue().splitlines()
    assert "0.718 [0.655, 0.779] n=240" in "\n".join(lines)
    assert all(len(line) <= 40 for line in lines) and len(lines) == 3
