"""Batch mode (``[engine] mode = "batch"``): a run's requests go to the provider's batch API.

`BatchedProvider` stands in for a provider during a run. The engine asks it as it asks any
provider (`Engine.call`: the cache first, then the call log, the judgment and the commit), but
an answer comes when the batch holding its request ends. Requests that arrive together (every
task of the run, then the verdict calls of solve-first judges) are sent as one batch per
``max_requests``; its id and the cache keys of its requests are committed to the store at once,
so a process killed after sending collects the batch later and never sends those requests again.

Without ``wait`` the driver checks each open batch once: answers of ended batches are judged and
stored, and every request still out raises `BatchPending`, which leaves the run unfinished for a
later ``juge run`` to collect. With ``wait`` it polls every ``poll`` seconds until all have ended.
A request the batch failed (an error line, an expired or cancelled batch) raises a ProviderError
that is not retried: it becomes an ``error`` judgment naming the reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from juge.providers.base import Provider, ProviderClosed, ProviderError, Request, Response
from juge.providers.batch_api import BatchAPI, BatchStatus
from juge.store import Store

SETTLE_SECONDS = 0.02  # no new request for this long: every worker waits on a batch


class BatchPending(ProviderClosed):
    """Requests of this run are in batches that have not ended: collect them with a later run."""

    def __init__(self, statuses: Sequence[BatchStatus]):
        self.statuses = list(statuses)
        waiting = sum(s.counts.get("total", 0) for s in statuses)
        super().__init__(
            f"{len(self.statuses)} batch(es) still being answered" + (f" ({waiting} requests)" if waiting else "")
        )


def supports_batches(provider: Provider) -> bool:
    return provider.batches() is not None


class BatchedProvider(Provider):
    """`provider` answering through its batch API for run `run_id` (see the module's docstring)."""

    deferred = True  # the engine waits for its answers without a per-call timeout

    def __init__(
        self,
        provider: Provider,
        store: Store,
        run_id: str,
        *,
        wait: bool,
        poll: float = 30.0,
        max_requests: int | None = None,
    ):
        self.provider = provider
        self.name = provider.name
        self.identity = provider.cache_identity
        self.cache_identity = self.identity
        api = provider.batches()
        if api is None:
            raise ValueError(f"provider {provider.name!r} has no batch API")
        self.api: BatchAPI = api
        self.store, self.run_id = store, run_id
        self.wait, self.poll = wait, poll
        self.max_requests = min(max_requests or self.api.max_requests, self.api.max_requests)
        self.sent = store.batch_keys(run_id, self.identity)  # key -> batch id, from earlier processes too
        self.unsent: dict[str, Request] = {}
        self.futures: dict[str, asyncio.Future[Response]] = {}
        self.models: dict[str, str] = {}
        self.arrivals = 0
        self.driver: asyncio.Task[None] | None = None
        self.submitted: list[str] = []  # batch ids sent by this process

    def answering_model(self, requested: str) -> str:
        return self.provider.answering_model(requested)

    async def complete(self, request: Request) -> Response:
        raise RuntimeError("a batched provider answers only by cache key (complete_keyed)")

    async def complete_keyed(self, request: Request, key: str) -> Response:
        """The answer to `request` (custom id `key`) once its batch has ended."""
        future = self.futures.get(key)
        if future is None or future.done():
            future = asyncio.get_running_loop().create_future()
            self.futures[key] = future
            self.models[key] = request.model
            if key not in self.sent:
                self.unsent[key] = request
            self.arrivals += 1
            if self.driver is None or self.driver.done():
                self.driver = asyncio.get_running_loop().create_task(self._drive())
        return await asyncio.shield(future)  # tasks sharing a prompt share its answer

    async def _settle(self) -> None:
        """Wait until no new request arrives: every worker is waiting on a batch."""
        while True:
            seen = self.arrivals
            for _ in range(3):
                await asyncio.sleep(0)
            await asyncio.sleep(SETTLE_SECONDS)
            if self.arrivals == seen:
                return

    async def _drive(self) -> None:
        try:
            while True:
                await self._settle()
                if self.unsent:
                    await self._submit()
                waiting = {self.sent[k] for k, f in self.futures.items() if not f.done() and k in self.sent}
                if not waiting:
                    return
                statuses = [await self._status(b) for b in sorted(waiting)]
                ended = [s for s in statuses if s is not None and s.ended]
                for status in ended:
                    await self._collect(status)
                if ended:
                    continue  # the answers are judged; solve-first judges may ask again
                if not self.wait:
                    self._fail_waiting(BatchPending([s for s in statuses if s is not None]))
                    return
                await asyncio.sleep(self.poll)
        except BaseException as exc:  # the driver's own failure fails its waiters, never hangs them
            self._fail_waiting(exc if isinstance(exc, Exception) else ProviderClosed("the run is shutting down"))
            raise

    async def _submit(self) -> None:
        todo, self.unsent = list(self.unsent.items()), {}
        for chunk in self._chunks(todo):
            keys = [k for k, _ in chunk]
            try:
                batch_id = await self.api.submit(chunk)
            except ProviderError as exc:  # the engine retries these requests (retryable) or records the error
                for key in keys:
                    self._settle_one(key, exc)
                continue
            self.store.save_batch(self.run_id, self.identity, batch_id, keys)
            self.submitted.append(batch_id)
            self.sent.update(dict.fromkeys(keys, batch_id))

    def _chunks(self, todo: list[tuple[str, Request]]) -> list[list[tuple[str, Request]]]:
        chunks: list[list[tuple[str, Request]]] = [[]]
        size = 0
        for key, request in todo:
            line = self.api.line_size(key, request)
            if chunks[-1] and (len(chunks[-1]) >= self.max_requests or size + line > self.api.max_bytes):
                chunks.append([])
                size = 0
            chunks[-1].append((key, request))
            size += line
        return [c for c in chunks if c]

    async def _status(self, batch_id: str) -> BatchStatus | None:
        """The batch's status; after a failed check its waiters get the error (the engine may retry)."""
        try:
            return await self.api.status(batch_id)
        except ProviderError as exc:
            self._fail_batch(batch_id, exc)
            return None

    async def _collect(self, status: BatchStatus) -> None:
        try:
            answers = await self.api.results(status, self.models)
        except ProviderError as exc:
            self._fail_batch(status.id, exc)
            return
        self.store.end_batch(status.id, status.state, {"counts": status.counts, **status.detail})
        for key, future in self.futures.items():
            if future.done() or self.sent.get(key) != status.id:
                continue
            answer = answers.get(key)
            if answer is None:
                answer = ProviderError(f"batch {status.id} ended {status.state} without an answer to this request")
            self._settle_one(key, answer)

    def _settle_one(self, key: str, answer: Response | BaseException) -> None:
        future = self.futures[key]
        if future.done():
            return
        if isinstance(answer, Response):
            future.set_result(answer)
        else:
            future.set_exception(answer)
            future.exception()  # its waiter may have gone: do not warn "never retrieved"

    def _fail_batch(self, batch_id: str, exc: BaseException) -> None:
        for key in [k for k, f in self.futures.items() if not f.done() and self.sent.get(k) == batch_id]:
            self._settle_one(key, exc)

    def _fail_waiting(self, exc: BaseException) -> None:
        for key in [k for k, f in self.futures.items() if not f.done()]:
            self._settle_one(key, exc)

    async def aclose(self) -> None:
        if self.driver is not None and not self.driver.done():
            self.driver.cancel()
            await asyncio.gather(self.driver, return_exceptions=True)
        await self.api.aclose()


def describe(statuses: Sequence[BatchStatus]) -> list[dict[str, Any]]:
    return [{"id": s.id, "state": s.state, "counts": s.counts} for s in statuses]
