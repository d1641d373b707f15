"""A judge served by several endpoints (a vLLM or llama.cpp server fleet), used as one provider.

`base_url = ["http://gpu-1:8000/v1", "http://gpu-2:8000/v1"]` in an `openai` provider's options
makes one `FleetProvider` over one provider per endpoint. Each request goes to the endpoint with
the fewest requests outstanding (ties: the one used least recently), so a slower server gets
fewer. An endpoint that cannot be reached (a refused or dropped connection, a time-out) or that
answers 502/503/504 is taken out for `cooldown` seconds, doubled at each failure in a row up to
`max_cooldown`, and the request goes to another at once; after its cooldown the endpoint gets
requests again, and the first answer puts it fully back. Only when every endpoint is out does a
request fail (retryable: the engine's backoff and retries apply). Other errors (4xx, a 429, a
garbled answer) are the answer's, not the endpoint's: they are raised as they are.

All endpoints must serve the same model the same way: their answers share one cache identity.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from juge.providers.base import Provider, ProviderError, Request, Response

DOWN_STATUSES = (502, 503, 504)


@dataclass
class Endpoint:
    provider: Provider
    url: str
    outstanding: int = 0
    failures: int = 0  # in a row
    down_until: float = 0.0
    last_used: float = 0.0
    answered: int = 0
    taken_out: int = 0  # times taken out


def _endpoint_failed(exc: ProviderError) -> bool:
    """Whether an error says the endpoint is unusable (rather than the request or its answer being bad)."""
    if exc.status is not None:
        return exc.status in DOWN_STATUSES
    text = str(exc)
    return text.startswith(("connection failed", "timeout"))


class FleetProvider(Provider):
    """One provider over several endpoints (see the module's docstring)."""

    def __init__(
        self,
        members: Sequence[Provider],
        urls: Sequence[str],
        *,
        cooldown: float = 5.0,
        max_cooldown: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        if len(members) < 1 or len(members) != len(urls):
            raise ValueError("a fleet needs one provider per endpoint")
        self.endpoints = [Endpoint(p, u) for p, u in zip(members, urls, strict=True)]
        self.name = f"{members[0].name.split('@', 1)[0]}@" + ",".join(urls)
        self.cooldown, self.max_cooldown = cooldown, max_cooldown
        self._now = clock

    def _pick(self, tried: set[int]) -> int | None:
        now = self._now()
        usable = [i for i, e in enumerate(self.endpoints) if i not in tried and e.down_until <= now]
        if not usable:
            return None
        return min(usable, key=lambda i: (self.endpoints[i].outstanding, self.endpoints[i].last_used))

    async def complete(self, request: Request) -> Response:
        tried: set[int] = set()
        last: ProviderError | None = None
        while (index := self._pick(tried)) is not None:
            tried.add(index)
            endpoint = self.endpoints[index]
            endpoint.outstanding += 1
            endpoint.last_used = self._now()
            try:
                response = await endpoint.provider.complete(request)
            except ProviderError as exc:
                if not _endpoint_failed(exc):
                    raise
                self._take_out(endpoint)
                last = exc
                continue
            finally:
                endpoint.outstanding -= 1
            endpoint.failures = 0
            endpoint.answered += 1
            return response
        down = ", ".join(e.url for e in self.endpoints)
        reason = f": last {last}" if last is not None else ""
        raise ProviderError(f"every endpoint of the fleet is out ({down}){reason}", retryable=True)

    def _take_out(self, endpoint: Endpoint) -> None:
        endpoint.failures += 1
        endpoint.taken_out += 1
        wait = min(self.max_cooldown, self.cooldown * 2 ** (endpoint.failures - 1))
        endpoint.down_until = self._now() + wait

    def stats(self) -> list[dict[str, object]]:
        """Per endpoint: answers, times taken out, requests outstanding."""
        return [
            {"url": e.url, "answered": e.answered, "taken_out": e.taken_out, "outstanding": e.outstanding}
            for e in self.endpoints
        ]

    async def aclose(self) -> None:
        for e in self.endpoints:
            await e.provider.aclose()


def openai_provider(*, base_url: str | Sequence[str] | None = None, **options: Any) -> Provider:
    """The `openai` provider: one endpoint, or a fleet when `base_url` is a list of them (the fleet's
    `cooldown` and `max_cooldown` may be given; every other option goes to each endpoint)."""
    from juge.providers.openai_compat import OpenAICompatProvider

    if base_url is None or isinstance(base_url, str):
        return OpenAICompatProvider(base_url=base_url, **options)
    urls = list(base_url)
    if not urls or not all(isinstance(u, str) and u for u in urls):
        raise ValueError("base_url: give a URL, or a list of one or more URLs (a fleet)")
    if len(set(urls)) != len(urls):
        raise ValueError("base_url: the fleet lists an endpoint twice")
    fleet = {k: options.pop(k) for k in ("cooldown", "max_cooldown") if k in options}
    return FleetProvider([OpenAICompatProvider(base_url=u, **options) for u in urls], urls, **fleet)
