"""The event loop a run makes for itself: uvloop where it is installed (not on Windows), asyncio's otherwise.

uvloop runs the same coroutines with less CPU per call (bench/RESULTS.md). It is used only for a loop juge creates
(``juge run``, `juge.run` outside a running loop, or in its own thread when called from inside one), never installed
as a global policy and never swapped under a caller's running loop. ``JUGE_FAST=0`` keeps asyncio's loop (and the
garbage collector as it is, see `frozen_heap`).
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from juge.fastjson import fast

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop constructor when installed and ``JUGE_FAST`` is not 0; None for asyncio's default."""
    if not fast():
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run_loop(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` on the loop of `loop_factory` (a new loop; raises if called inside a running one)."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(coro)


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Within: the objects that existed on entry (the run's cases and tasks, modules, the caller's data) are left out
    of the garbage collector's full passes (`gc.freeze`), put back on leaving. Each full pass walks every object, so
    a run with many cases paid for walking them again and again (bench/RESULTS.md). Not when the caller has frozen
    objects itself (its freeze is its own to undo) or ``JUGE_FAST=0``; nothing is lost, a cycle among those objects
    is only collected later."""
    if not fast() or gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
