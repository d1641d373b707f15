"""Tables that fit the terminal, whatever its width.

A table keeps its horizontal layout only when every column can be as wide as its longest name or
figure (measured with rich: a cell is one line, a figure such as ``0.64 [0.58, 0.70] n=404`` is one
token, only prose longer than PROSE wraps between its words; a header wraps between its words but is
never narrower than the column's `min_width`) and the table, borders included, still fits the
console. Otherwise it prints as blocks, one per row (the row's first cell, then `header: value`
lines). So no cell is ever squeezed: names are never cut (rich's default overflow is an ellipsis)
and figures never split across lines.
"""

from __future__ import annotations

import copy
import re
from dataclasses import replace

from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

# a cell line longer than this wraps between words (prose); shorter cells (names, figures) stay whole
PROSE = 40
# an estimate as `juge.stats.estimate.format_estimate` writes it: never split, even inside prose
_FIGURE = re.compile(r"-?\d+(?:\.\d+)?%? \[-?\d+(?:\.\d+)?%?, -?\d+(?:\.\d+)?%?\](?: n=\d+)?")


def _text(value: object, console: Console | None = None) -> Text:
    """A cell as one line of text (a cell's own line breaks were for a narrow column)."""
    if isinstance(value, Text):
        text = value.copy()
    elif isinstance(value, str):
        text = console.render_str(value) if console is not None else Text.from_markup(value)
    else:
        text = Text(str(value))
    if "\n" in text.plain:
        text = Text(" ").join(text.split("\n"))
    return text


def _header(value: object) -> str:
    return " ".join(_text(value).plain.split())


def _tokens_width(line: str) -> int:
    """The longest piece of `line` that must stay on one line: a figure or a word."""
    figures = [len(m) for m in _FIGURE.findall(line)]
    words = [len(w) for w in _FIGURE.sub(" ", line).split()]
    return max([0, *figures, *words])


def _cell_need(console: Console, cell: RenderableType) -> tuple[int, int]:
    """(narrowest width that keeps every name and figure whole, width on one line) of a cell."""
    if isinstance(cell, str | Text):
        text = cell if isinstance(cell, Text) else console.render_str(cell)
        lines = text.plain.split("\n")
        need = max(
            (cell_len(ln) if cell_len(ln) <= PROSE else max(PROSE, _tokens_width(ln)) for ln in lines), default=0
        )
        natural = max((cell_len(ln) for ln in lines), default=0)
        return need, natural
    measured = Measurement.get(console, console.options.update_width(10**6), cell)
    return measured.maximum, measured.maximum


def _column_widths(table: Table, console: Console) -> tuple[list[int], list[int]]:
    """Per column, content widths: (the least that cuts and splits nothing, the natural width)."""
    needs, naturals = [], []
    for column in table.columns:
        header = Measurement.get(console, console.options.update_width(10**6), column.header or "")
        need, natural = max(header.minimum, column.min_width or 0), header.maximum
        for cell in column.cells:
            cell_need, cell_natural = _cell_need(console, cell)
            need, natural = max(need, cell_need), max(natural, cell_natural)
        if column.width is not None:
            need = natural = max(need, column.width)
        needs.append(need)
        naturals.append(max(need, natural))
    return needs, naturals


def horizontal_width(table: Table, console: Console) -> int:
    """The least total width at which `table` shows every name and figure whole."""
    needs, _ = _column_widths(table, console)
    return _frame_width(table) + sum(needs)


def _frame_width(table: Table) -> int:
    """Borders and cell padding: what a table adds to its columns' content."""
    return table._extra_width + sum(table._get_padding_width(i) for i in range(len(table.columns)))


def _sized(table: Table, widths: list[int]) -> Table:
    """A copy of `table` whose columns have these content widths (headers wrap inside them)."""
    sized = copy.copy(table)
    sized.columns = [replace(col, width=w) for col, w in zip(table.columns, widths, strict=True)]
    return sized


def _with_widths(table: Table, console: Console) -> Table | None:
    """`table` laid out for the console, or None when it cannot fit without cutting or splitting."""
    if not table.columns:
        return table
    needs, naturals = _column_widths(table, console)
    frame = _frame_width(table)
    width = console.width if table.width is None else min(table.width, console.width)
    if frame + sum(naturals) <= width:
        return table  # rich lays it out at its natural width
    if frame + sum(needs) > width:
        return None
    # room for every name and figure: the columns that would wrap (headers, prose) share what is left
    widths = list(needs)
    spare = width - frame - sum(widths)
    while spare > 0:
        short = [i for i in range(len(widths)) if widths[i] < naturals[i]]
        if not short:
            break
        i = max(short, key=lambda k: naturals[k] - widths[k])
        widths[i] += 1
        spare -= 1
    return _sized(table, widths)


def _field(indent: str, header: str, value: Text, width: int) -> list[Text]:
    """`header: value` on one line, or the header and below it the value when the line is too long."""
    if not header:
        return [Text.assemble(indent, value)]
    if len(indent) + len(header) + 2 + value.cell_len <= width:
        return [Text.assemble(indent, f"{header}: ", value)]
    return [Text(f"{indent}{header}:"), Text.assemble(indent + "  ", value)]


def vertical(table: Table, console: Console | None = None) -> RenderableType:
    """The table as blocks: the title, then per row its first cell in bold and each other cell as
    `header: value` (empty cells left out), then the caption."""
    width = console.width if console is not None else 80
    lines: list[RenderableType] = []
    if table.title:
        lines.append(Text.assemble(_text(table.title, console), style="bold"))
    columns = table.columns
    headers = [_header(c.header) for c in columns]
    column_cells = [list(c.cells) for c in columns]
    if len(columns) == 2:  # a two-column table (name and count) reads as `name: value` lines
        for r in range(table.row_count):
            name, value = (_text(cc[r], console) if r < len(cc) else Text("") for cc in column_cells)
            lines.extend(_field("  ", name.plain, value, width) if name.plain else [Text.assemble("  ", value)])
        if table.caption:
            lines.append(_text(table.caption, console))
        return Group(*lines)
    for r in range(table.row_count):
        cells = [cc[r] if r < len(cc) else "" for cc in column_cells]
        first = _text(cells[0], console) if cells else Text("")
        if headers and headers[0] and first.plain:
            first = Text.assemble(f"{headers[0]}: ", first)
        lines.append(Text.assemble("  ", first, style="bold"))
        for header, cell in zip(headers[1:], cells[1:], strict=False):
            value = _text(cell, console)
            if not value.plain.strip():
                continue
            lines.extend(_field("    ", header, value, width))
    if table.caption:
        lines.append(_text(table.caption, console))
    return Group(*lines)


def fitted(table: Table, console: Console) -> RenderableType:
    """`table` with every column as wide as its names and figures when that fits `console`,
    else its vertical form (blocks)."""
    laid_out = _with_widths(table, console)
    return vertical(table, console) if laid_out is None else laid_out


def fits(table: Table, console: Console) -> bool:
    """Whether `fitted` keeps `table` horizontal on `console`."""
    return _with_widths(table, console) is not None


def _breaks(line: str, width: int) -> list[int]:
    """Where to break `line` (offsets of the first character of each new line): between words, never
    inside a figure, greedily; a piece wider than `width` stays whole on a line of its own."""
    pieces = [m.span() for m in re.finditer(rf"{_FIGURE.pattern}|\S+", line)]
    breaks: list[int] = []
    start = 0
    for begin, end in pieces:
        if begin > start and cell_len(line[start:end]) > width:
            breaks.append(begin)
            start = begin
    return breaks


def wrapped(text: str | Text, console: Console) -> Text:
    """`text` (plain: never markup) wrapped for `console` between words, with every figure such as
    ``0.64 [0.58, 0.70] n=404`` whole on one line (rich's own wrapping may split one at its spaces)."""
    text = Text(text) if isinstance(text, str) else text
    lines: list[Text] = []
    for line in text.split("\n", allow_blank=True):
        offsets = _breaks(line.plain, console.width)
        parts = line.divide(offsets) if offsets else [line]
        lines.extend(part.copy() for part in parts)
    for part in lines:
        part.rstrip()
    return Text("\n").join(lines)


def joined(parts: list[str], width: int, *, sep: str = "; ", indent: str = "  ") -> list[str]:
    """`parts` joined by `sep` into lines of at most `width` columns, broken only between parts (a
    part is never split; one longer than the width gets a line of its own)."""
    lines: list[str] = []
    line = ""
    for k, part in enumerate(parts):
        piece = part + (sep.rstrip() if k < len(parts) - 1 else "")
        if not line:
            line = (indent if lines else "") + piece
        elif cell_len(line) + 1 + cell_len(piece) <= width:
            line += " " + piece
        else:
            lines.append(line)
            line = indent + piece
    if line:
        lines.append(line)
    return lines


def command_lines(command: str, width: int, *, comment: str = "", indent: str = "  ") -> list[str]:
    """A shell command to copy, fitted to `width`: `command   # comment` on one line when it fits,
    else the comment above it; a command still too long is continued with ` \\` before an option, so
    the lines pasted together are the same command (never broken inside a word or an argument)."""
    one = f"{indent}{command}" + (f"   # {comment}" if comment else "")
    if cell_len(one) <= width:
        return [one]
    lines = [f"{indent}# {comment}"] if comment else []
    pieces: list[str] = []  # an option and its value stay together
    for word in command.split(" "):
        if pieces and not word.startswith("-") and pieces[-1].split(" ")[-1].startswith("--"):
            pieces[-1] += " " + word
        else:
            pieces.append(word)
    line = indent
    for piece in pieces:
        candidate = f"{line}{piece}" if not line.strip() else f"{line} {piece}"
        if line.strip() and cell_len(candidate) + 2 > width:
            lines.append(line + " \\")
            line = indent + "    " + piece
        else:
            line = candidate
    lines.append(line)
    return lines
