"""Client-side rate budgets and adaptive concurrency for the calls of a run.

A judge API limits requests and tokens per minute (RPM, TPM). Rather than meet those limits as
429 storms, the engine asks a `Budget` before each request: it admits a request when, over the
last 60 seconds, the requests sent stay within `rpm` and their tokens within `tpm`, and otherwise
waits until enough of the window has passed. A request's tokens are estimated before it is sent
(its prompt's characters / 4, scaled by what the server reported for earlier prompts, plus
`max_tokens`) and corrected to the usage the server returns, so the window holds what was spent.

`Adaptive` bounds the requests in flight to one endpoint and adapts the bound: additive increase
(about one more slot per round of answers) and multiplicative decrease (halved on a 429, at most
once per round), the TCP rule. A server's Retry-After pauses every request to that endpoint.

Both read a clock that may run faster than real time (`scale` simulated seconds per real second):
tests and benchmarks simulate minutes of a rate-limited API in seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from juge.providers.base import Request

WINDOW = 60.0  # seconds: the limits are per minute
# A spend leaves the client's window this much later than the server's: a request admitted the
# instant an older one leaves may reach the server sooner after being sent than that one did
# (which waited for a connection, say). 1 % of the window, and at least a quarter of a real
# second, which only a fast simulated clock makes the larger.
MARGIN = 0.01 * WINDOW
MARGIN_REAL = 0.25
CHARS_PER_TOKEN = 4.0  # the usual rule of thumb for English with BPE tokenizers, before correction


def prompt_chars(request: Request) -> int:
    return sum(len(str(m.get("content", ""))) for m in request.messages)


class Clock:
    """Seconds, possibly simulated: `scale` simulated seconds per real one."""

    def __init__(self, scale: float = 1.0, now: Callable[[], float] = time.monotonic):
        if scale <= 0:
            raise ValueError("time scale must be > 0")
        self.scale = scale
        self._now = now
        self._start = now()

    def now(self) -> float:
        return (self._now() - self._start) * self.scale

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.scale)


@dataclass(eq=False)
class Spend:
    """One admitted request in the window: when it was sent and its tokens (estimated, then actual)."""

    at: float
    tokens: float
    counted: bool = True  # still in the window


class Budget:
    """At most `rpm` requests and `tpm` tokens in any 60 seconds (either may be None: no limit).

    Waiters are admitted first come, first served.
    """

    def __init__(self, rpm: int | None, tpm: int | None, clock: Clock, *, margin: float | None = None):
        if rpm is not None and rpm < 1 or tpm is not None and tpm < 1:
            raise ValueError("rpm and tpm must be >= 1")
        self.rpm, self.tpm, self.clock = rpm, tpm, clock
        self.margin = max(MARGIN, MARGIN_REAL * clock.scale) if margin is None else margin
        self.window: deque[Spend] = deque()
        self.tokens = 0.0  # sum of the window's tokens
        self.prompt_factor = 1.0  # server's prompt tokens / chars-based estimate, learnt from usage
        self.completion_mean: float | None = None  # for requests without max_tokens
        self.lock = asyncio.Lock()
        self.freed = asyncio.Event()  # a spend was corrected down: the waiter looks again
        self.waited = 0.0  # simulated seconds requests spent waiting for the budget

    def estimate(self, request: Request) -> float:
        """Tokens `request` may spend: its prompt (estimated) and at most `max_tokens` of answer."""
        prompt = prompt_chars(request) / CHARS_PER_TOKEN * self.prompt_factor
        completion = request.max_tokens if request.max_tokens is not None else (self.completion_mean or 0.0)
        return prompt + completion

    def _expire(self, now: float) -> None:
        while self.window and self.window[0].at <= now - WINDOW - self.margin:
            spend = self.window.popleft()
            spend.counted = False
            self.tokens -= spend.tokens

    def _wait_for(self, tokens: float, now: float) -> float:
        """Seconds until a request of `tokens` fits (0: it fits now)."""
        wait = 0.0
        if self.rpm is not None and len(self.window) >= self.rpm:
            wait = max(wait, self.window[len(self.window) - self.rpm].at + WINDOW + self.margin - now)
        if self.tpm is not None and self.tokens + tokens > self.tpm and self.window:
            # the oldest spends must leave the window until the rest and this request fit
            excess, freed = self.tokens + tokens - self.tpm, 0.0
            for spend in self.window:
                freed += spend.tokens
                if freed >= excess:
                    wait = max(wait, spend.at + WINDOW + self.margin - now)
                    break
            else:  # larger than the whole budget: it waits for an empty window, then goes alone
                wait = max(wait, self.window[-1].at + WINDOW + self.margin - now)
        return wait

    async def admit(self, request: Request) -> Spend:
        """Wait until `request` fits the budget, then count it; settle the returned spend with `settle`."""
        tokens = self.estimate(request)
        async with self.lock:
            started = self.clock.now()
            while True:
                now = self.clock.now()
                self._expire(now)
                wait = self._wait_for(tokens, now)
                if wait <= 0:
                    break
                self.freed.clear()
                try:
                    await asyncio.wait_for(self.freed.wait(), (wait + 1e-6) / self.clock.scale)
                except TimeoutError:
                    pass
            spend = Spend(now, tokens)
            self.window.append(spend)
            self.tokens += tokens
            self.waited += now - started
            return spend

    def settle(self, spend: Spend, request: Request, tokens_in: int | None, tokens_out: int | None) -> None:
        """Correct a spend to the usage the server reported, and learn from it for the next estimates."""
        if tokens_in is None and tokens_out is None:
            return
        chars = prompt_chars(request)
        if tokens_in is not None and chars:
            self.prompt_factor += 0.2 * (tokens_in / (chars / CHARS_PER_TOKEN) - self.prompt_factor)
        if tokens_out is not None:
            m = self.completion_mean
            self.completion_mean = tokens_out if m is None else m + 0.2 * (tokens_out - m)
        actual = (tokens_in or 0) + (tokens_out or 0)
        if spend.counted:
            self.tokens += actual - spend.tokens
            if actual < spend.tokens:
                self.freed.set()
        spend.tokens = actual

    def refund(self, spend: Spend) -> None:
        """A request the server refused (a 429) spent no tokens (it still counts as a request)."""
        if spend.counted:
            self.tokens -= spend.tokens
            self.freed.set()
        spend.tokens = 0.0


class Adaptive:
    """Requests in flight to one endpoint, bounded by a limit that adapts (AIMD) between 1 and `ceiling`,
    and paused while the server's Retry-After runs. Waiters get a freed slot first come, first served."""

    def __init__(self, ceiling: int, clock: Clock):
        self.ceiling = ceiling
        self.limit = float(ceiling)
        self.inflight = 0
        self.clock = clock
        self.waiters: deque[asyncio.Future[None]] = deque()
        self.paused_until = -float("inf")
        self.last_decrease = -float("inf")
        self.round = 0.0  # a recent answer's latency: the limit halves at most once per round
        self.decreases = 0

    async def acquire(self, *, retry: bool = False) -> None:
        """A slot; first the server's Retry-After pause, unless this is a `retry` (which waited its
        own backoff, at least the Retry-After it was answered)."""
        if not retry and (wait := self.paused_until - self.clock.now()) > 0:
            await self.clock.sleep(wait)
        if self.inflight < int(self.limit) and not self.waiters:
            self.inflight += 1
            return
        slot = asyncio.get_running_loop().create_future()
        self.waiters.append(slot)
        try:
            await slot  # `_hand_on` counted this request in flight when it resolved `slot`
        except BaseException:
            if slot.done() and not slot.cancelled():
                self.inflight -= 1  # handed a slot, then cancelled: give it on
                self._hand_on()
            raise

    def release(self, *, throttled: bool, latency: float | None = None, retry_after: float | None = None) -> None:
        """End a request. `throttled`: the server answered 429; `retry_after`: it said how long to wait
        (every request to it waits that long); `latency`: the request's, in the clock's seconds."""
        now = self.clock.now()
        if latency is not None:
            self.round = latency
        if retry_after is not None:
            self.paused_until = max(self.paused_until, now + retry_after)
        if throttled:
            if now - self.last_decrease >= self.round:
                self.limit = max(1.0, self.limit / 2)
                self.last_decrease = now
                self.decreases += 1
        else:
            self.limit = min(float(self.ceiling), self.limit + 1.0 / self.limit)
        self.inflight -= 1
        self._hand_on()

    def _hand_on(self) -> None:
        while self.waiters and self.inflight < int(self.limit):
            slot = self.waiters.popleft()
            if not slot.done():
                self.inflight += 1
                slot.set_result(None)
