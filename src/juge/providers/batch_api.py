"""The interface a provider's batch API implements (OpenAI Batch, Anthropic Message Batches).

A batch takes many requests at once, answers them within a window (24 h) at a lower price and
gives the answers back as a file. A provider that has one returns it from ``batches()``; the
batch runner (`juge.engine.batching`) sends a run's requests through it, each named by its cache key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from juge.providers.base import ProviderError, Request, Response


@dataclass(frozen=True)
class BatchStatus:
    """Where a batch is: `state` as the provider names it, `ended` once no more answers will come."""

    id: str
    state: str
    ended: bool
    counts: dict[str, int] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)


class BatchAPI(Protocol):
    max_requests: int  # the most requests one batch may hold
    max_bytes: int  # the largest batch body the provider accepts

    def line_size(self, key: str, request: Request) -> int:
        """The bytes one request adds to a batch."""
        ...

    async def submit(self, requests: Sequence[tuple[str, Request]]) -> str:
        """Send (custom id, request) pairs as one batch; returns the batch id."""
        ...

    async def status(self, batch_id: str) -> BatchStatus: ...

    async def results(self, status: BatchStatus, models: Mapping[str, str]) -> dict[str, Response | ProviderError]:
        """The answer (or the error) for each custom id the ended batch reports; `models` gives each
        custom id's requested model, for an answer that does not name its own."""
        ...

    async def aclose(self) -> None: ...
