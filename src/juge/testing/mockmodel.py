"""The mock model's behaviour, shared by its chat server (`mockserver`) and its batch APIs (`mockbatch`): the
configuration, the answer a request gets, the fault an attempt gets, and a completion's body."""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

FAULT_KINDS = (
    "rate_limit",
    "server_error",
    "unavailable",
    "reset",
    "timeout",
    "truncated",
    "malformed",
    "empty",
    "refusal",
)
# Answers a careless client would read as verdicts (issue 27): a key twice, several choices, an answer cut at
# max_tokens, a usage of 10^15 tokens, a body of `huge_bytes`. Apart from FAULT_KINDS, so a test that injects
# every transport fault is unchanged.
HOSTILE_KINDS = ("duplicate_keys", "choices", "length", "usage_bomb", "huge")
LATENCY_DISTRIBUTIONS = ("fixed", "uniform", "exponential", "lognormal")


@dataclass(frozen=True)
class MockConfig:
    """How the mock server behaves. Rates in `faults` are per attempt and must sum to at most 1."""

    latency: float = 0.0
    latency_dist: str = "fixed"
    spread: float = 0.0
    max_concurrency: int | None = None
    over_capacity: str = "queue"
    faults: dict[str, float] = field(default_factory=dict)
    answers: tuple[str, ...] = ("PASS\nThe answer does what was asked.", "FAIL\nThe answer misses the point.")
    model: str = "mock-judge-2026-01"
    # Answer every request as this model version, whatever it asked for (None: as asked): a provider that
    # moved an alias to a new version under a judge.
    answer_as: str | None = None
    retry_after: float = 0.05
    hang: float = 30.0
    seed: int = 0
    # Batch APIs (see juge.testing.mockbatch): seconds until a batch ends, the share of its requests
    # that fail, and the share left unanswered when it expires (> 0: every batch expires).
    batch_delay: float = 0.0
    batch_errors: float = 0.0
    batch_expire: float = 0.0
    # Per-minute limits (None: none) on a clock `time_scale` times real time.
    rpm: int | None = None
    tpm: int | None = None
    time_scale: float = 1.0
    # Answer nothing until this many chat requests have arrived (0: at once): a test that needs several
    # clients at work together holds the first one's answers until the others have asked too.
    hold_until: int = 0
    # The size of a `huge` answer's body, sent chunked (no content-length) as fast as the client reads.
    huge_bytes: int = 200_000_000

    def __post_init__(self) -> None:
        unknown = set(self.faults) - set(FAULT_KINDS) - set(HOSTILE_KINDS)
        if unknown:
            known = ", ".join(FAULT_KINDS + HOSTILE_KINDS)
            raise ValueError(f"unknown fault kind(s) {sorted(unknown)}; known: {known}")
        # NaN compares false with everything: `not 0 <= r <= 1` refuses it (a NaN rate injected nothing)
        if any(not 0 <= r <= 1 for r in self.faults.values()) or sum(self.faults.values()) > 1 + 1e-9:
            raise ValueError(f"fault rates must be numbers in [0, 1] that sum to at most 1, got {self.faults}")
        if self.max_concurrency is not None and self.max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1 (or unset), got {self.max_concurrency}")
        for name in ("latency", "spread", "retry_after", "hang", "batch_delay"):
            value = getattr(self, name)
            if not 0 <= value < math.inf:
                raise ValueError(f"{name} must be a finite number >= 0, got {value}")
        for name in ("batch_errors", "batch_expire"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.latency_dist not in LATENCY_DISTRIBUTIONS:
            raise ValueError(f"latency_dist must be one of {LATENCY_DISTRIBUTIONS}, got {self.latency_dist!r}")
        if self.over_capacity not in ("queue", "reject"):
            raise ValueError(f"over_capacity must be 'queue' or 'reject', got {self.over_capacity!r}")
        if not self.answers:
            raise ValueError("answers must not be empty")
        object.__setattr__(self, "answers", tuple(self.answers))


def request_digest(model: str, messages: list[dict[str, Any]]) -> bytes:
    """The identity of a request: its model and messages (what the answer depends on)."""
    return hashlib.sha256(json.dumps([model, messages], sort_keys=True, ensure_ascii=False).encode()).digest()


def expected_answer(config: MockConfig, model: str, messages: list[dict[str, Any]]) -> str:
    """The text the server answers to this request when it does not inject a fault."""
    h = int.from_bytes(request_digest(model, messages)[:8], "big")
    return config.answers[h % len(config.answers)]


def _unit(*parts: Any) -> float:
    """A deterministic number in [0, 1) from `parts`."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def fault_for_attempt(config: MockConfig, digest: bytes, attempt: int) -> str | None:
    """The fault injected on the `attempt`-th (from 0) sight of a request, or None for a plain answer.

    With u = _unit(seed, digest, attempt) uniform on [0, 1), the kind is the first in
    FAULT_KINDS whose cumulative rate exceeds u: each kind has probability equal to its rate.
    """
    u = _unit(config.seed, digest, attempt)
    cumulative = 0.0
    for kind in FAULT_KINDS + HOSTILE_KINDS:
        cumulative += config.faults.get(kind, 0.0)
        if u < cumulative:
            return kind
    return None


def injected_fault(config: MockConfig, model: str, messages: list[dict[str, Any]], attempt: int) -> str | None:
    """What a server with `config` does to the `attempt`-th sight of this request (None: answers it)."""
    return fault_for_attempt(config, request_digest(model, messages), attempt)


def _prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """The mock's token count of a prompt: its words."""
    return sum(len(str(m.get("content", "")).split()) for m in messages)


def _completion(
    digest: bytes, model: str, messages: list[dict[str, Any]], text: str, *, refused: bool
) -> dict[str, Any]:
    prompt_tokens = _prompt_tokens(messages)
    message: dict[str, Any] = {"role": "assistant", "content": None if refused else text}
    if refused:
        message["refusal"] = "I can't help with that request."
    return {
        "id": "chatcmpl-" + digest[:12].hex(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": "content_filter" if refused else "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(text.split()),
            "total_tokens": prompt_tokens + len(text.split()),
        },
    }
