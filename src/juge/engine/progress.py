"""Progress of a run that works everywhere: rich's bar on a terminal; elsewhere (CI, a log file) a
plain line every `interval` seconds with done/total, rate, ETA and errors so far, and one at the end.

The protocol is small: a :data:`ProgressFactory` is called once per stage with its description, its
total and what is already done, and returns a :class:`RunProgress` (a context manager told of each
task as it ends). The library calls it; what it shows, and where, is the caller's (the CLI passes
:func:`run_progress` on its own console). Two optional parts, used when a progress has them: an
``unparsed`` keyword of ``advance`` (the task ended with an answer that gave no verdict) and
``note(message)``, something the run noticed on the way (most of a judge's first answers unparsed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, TypeAlias

from rich.console import Console
from rich.markup import escape

from juge.visible import terminal_safe

if TYPE_CHECKING:
    from rich.progress import Progress

LINE_INTERVAL = 10.0


class RunProgress(Protocol):
    def __enter__(self) -> RunProgress: ...
    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
    def advance(self, *, error: bool = False) -> None: ...


#: Makes the progress of one stage: ``(description, total, already done) -> RunProgress``.
ProgressFactory: TypeAlias = Callable[[str, int, int], RunProgress]


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class _Counts:
    def __init__(self, total: int, completed: int):
        self.total, self.done, self.errors, self.new, self.unparsed = total, completed, 0, 0, 0
        self.started = time.monotonic()

    def add(self, error: bool, unparsed: bool) -> None:
        self.done, self.new = self.done + 1, self.new + 1
        self.errors, self.unparsed = self.errors + int(error), self.unparsed + int(unparsed)

    def rate(self, now: float) -> float:
        return self.new / max(now - self.started, 1e-9)

    def line(self, description: str, now: float, final: bool = False) -> str:
        rate = self.rate(now)
        left = self.total - self.done
        if final:
            eta = f"took {_clock(now - self.started)}"
        elif rate > 0:
            eta = f"ETA {_clock(left / rate)}"
        else:
            eta = "ETA unknown"
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        return (
            f"{description}: {self.done}/{self.total}{share}, {rate:.1f}/s, {eta}, errors {self.errors}, "
            f"unparsed {self.unparsed}"
        )


class LineProgress:
    """A line every `interval` seconds (only when something moved, or at the first tick), and a last one."""

    def __init__(self, console: Console, description: str, total: int, completed: int, interval: float):
        self.console, self.description, self.interval = console, description, interval
        self.counts = _Counts(total, completed)
        self.last = time.monotonic()

    def __enter__(self) -> LineProgress:
        if self.counts.done:
            self.console.print(
                f"{self.description}: {self.counts.done}/{self.counts.total} already stored, resuming",
                markup=False,
                highlight=False,
            )
        return self

    def advance(self, *, error: bool = False, unparsed: bool = False) -> None:
        c = self.counts
        c.add(error, unparsed)
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.last = now
            self.console.print(c.line(self.description, now), markup=False, highlight=False)

    def note(self, message: str) -> None:
        self.console.print(f"warning: {terminal_safe(message)}", markup=False, highlight=False)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.counts.new or exc_type is None:
            self.console.print(
                self.counts.line(self.description, time.monotonic(), final=exc_type is None),
                markup=False,
                highlight=False,
            )


class BarProgress:
    """rich's bar with the rate and the errors so far."""

    def __init__(self, console: Console, description: str, total: int, completed: int):
        # Loaded here, on a terminal only: a run without a bar (CI, --no-progress) does not pay for it.
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.counts = _Counts(total, completed)
        self.progress: Progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[errors]}"),
            TextColumn("{task.fields[unparsed]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task = self.progress.add_task(
            description, total=total, completed=completed, rate="", errors="", unparsed=""
        )

    def __enter__(self) -> BarProgress:
        self.progress.__enter__()
        return self

    def advance(self, *, error: bool = False, unparsed: bool = False) -> None:
        c = self.counts
        c.add(error, unparsed)
        errors = f"[red]{c.errors} errors[/]" if c.errors else ""
        shown = f"[yellow]{c.unparsed} unparsed[/]" if c.unparsed else ""
        self.progress.update(
            self.task, advance=1, rate=f"{c.rate(time.monotonic()):.1f}/s", errors=errors, unparsed=shown
        )

    def note(self, message: str) -> None:
        self.progress.console.print(f"[yellow]warning:[/] {escape(terminal_safe(message))}", highlight=False)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.progress.__exit__(None, None, None)


class NoProgress:
    def __enter__(self) -> NoProgress:
        return self

    def advance(self, *, error: bool = False, unparsed: bool = False) -> None:
        pass

    def note(self, message: str) -> None:
        pass

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        pass


def run_progress(
    console: Console, description: str, total: int, completed: int = 0, *, enabled: bool = True,
    interval: float = LINE_INTERVAL,
) -> RunProgress:  # fmt: skip
    """The bar on a terminal, a line every `interval` s elsewhere, nothing when not `enabled`."""
    if not enabled:
        return NoProgress()
    if console.is_terminal:
        return BarProgress(console, description, total, completed)
    return LineProgress(console, description, total, completed, interval)
