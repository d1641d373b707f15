"""Run a coroutine on an event loop whose clock is virtual: whenever nothing is ready to run, the
loop's time jumps straight to its next timer instead of sleeping until then.

A test of timing logic (rate budgets, backoff, load balancing by latency) then sees exactly the
delays the code asked for, however loaded the machine is, and takes no real time for them. Only
for code without real I/O: a timer would fire before a socket's answer could arrive.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        super().__init__(selectors.DefaultSelector())
        self._virtual_now = 0.0
        poll = self._selector.select

        def select(timeout: float | None = None) -> list[Any]:
            ready = poll(0)
            if ready or timeout is None:  # no timer pending: wait for another thread's call_soon_threadsafe
                return ready or poll(None)
            self._virtual_now += timeout  # the loop asked to sleep `timeout` until its next timer
            return ready

        self._selector.select = select  # type: ignore[method-assign]

    def time(self) -> float:
        return self._virtual_now


def run_virtual(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on a `VirtualTimeLoop` (its `loop.time()` starts at 0)."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(main)
