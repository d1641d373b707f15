"""The terminal every command prints to: rich's Console, with control and bidi characters in printed text shown as
escapes (``\\x1b``, ``\\u202e``).

Names, categories, ids and answers come from data files and model output; printed as they are, an escape could
clear the screen or set the title, and a bidi override reorder what the reader sees. Escaping them where each
command formats its text left gaps (a category in a calibrate table, a judge name read from --judgments), so the
rule sits where text becomes terminal output: every segment rich writes that is text (not one of rich's own control
sequences) goes through :func:`juge.visible.terminal_safe`. Styles are rendered from the segments' styles, not
from their text, so colours and bold are untouched.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console as _RichConsole
from rich.segment import Segment

from juge.visible import has_terminal_control, terminal_safe


class Console(_RichConsole):
    """rich's Console whose printed text cannot carry terminal control or bidi characters."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            Segment(terminal_safe(text), style, control)
            if control is None and has_terminal_control(text)
            else Segment(text, style, control)
            for text, style, control in buffer
        )
