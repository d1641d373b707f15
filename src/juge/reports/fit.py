"""Tables that fit the terminal: a table as it is from VERTICAL_BELOW columns up; below that, one
block per row (the row's first cell, then `header: value` lines), so no cell is squeezed into a
column narrower than its words: names are never cut and intervals never split mid-figure."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

VERTICAL_BELOW = 100


def _text(value: object) -> Text:
    """A cell as one line of text (a cell's own line breaks were for a narrow column)."""
    if isinstance(value, Text):
        text = value.copy()
    elif isinstance(value, str):
        text = Text.from_markup(value)
    else:
        text = Text(str(value))
    text.plain = " ".join(text.plain.split("\n")) if "\n" in text.plain else text.plain
    return text


def _header(value: object) -> str:
    return " ".join(_text(value).plain.split())


def vertical(table: Table) -> RenderableType:
    """The table as blocks: the title, then per row its first cell in bold and each other cell as
    `header: value` (empty cells left out), then the caption."""
    lines: list[RenderableType] = []
    if table.title:
        lines.append(Text.assemble(_text(table.title), style="bold"))
    columns = table.columns
    headers = [_header(c.header) for c in columns]
    column_cells = [list(c.cells) for c in columns]
    if len(columns) == 2:  # a two-column table (name and count) reads as `name: value` lines
        for r in range(table.row_count):
            name, value = (_text(cc[r]) if r < len(cc) else Text("") for cc in column_cells)
            lines.append(Text.assemble("  ", name, ": ", value))
        if table.caption:
            lines.append(_text(table.caption))
        return Group(*lines)
    for r in range(table.row_count):
        cells = [cc[r] if r < len(cc) else "" for cc in column_cells]
        first = _text(cells[0]) if cells else Text("")
        if headers and headers[0] and first.plain:
            first = Text.assemble(f"{headers[0]}: ", first)
        lines.append(Text.assemble("  ", first, style="bold"))
        for header, cell in zip(headers[1:], cells[1:], strict=False):
            value = _text(cell)
            if not value.plain.strip():
                continue
            lines.append(Text.assemble("    ", (f"{header}: " if header else ""), value))
    if table.caption:
        lines.append(_text(table.caption))
    return Group(*lines)


def fitted(table: Table, console: Console) -> RenderableType:
    """`table`, or its vertical form on a console narrower than VERTICAL_BELOW columns."""
    return table if console.width >= VERTICAL_BELOW else vertical(table)
