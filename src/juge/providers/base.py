"""The one interface every model provider implements.

A provider turns a `Request` (chat messages and sampling parameters) into a
`Response` (raw text plus usage and the exact model version). It never parses
verdicts: parsing belongs to the judge, so every provider is held to the same
strict parser.
"""

from __future__ import annotations

import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from juge.errors import Fault
from juge.fastjson import loads_unique

if TYPE_CHECKING:
    from juge.providers.batch_api import BatchAPI

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

# The longest answer body a provider reads (its `max_response_bytes` option): a judge's answer is a few kB,
# so a few MB leaves room for log-probabilities and keeps a runaway server from taking the machine's memory.
MAX_RESPONSE_BYTES = 8_000_000
# More tokens than any model reads or writes in one call (context windows are a few million): a usage above
# it is a broken or hostile server's, refused before it is costed (10^15 tokens costed three billion dollars).
MAX_CALL_TOKENS = 100_000_000


def checked_max_response_bytes(value: object) -> int:
    """`value` as a body bound: a whole number of bytes >= 1,000 (a ValueError names the option otherwise)."""
    if type(value) is not int or value < 1000:
        raise ValueError(f"max_response_bytes must be a whole number of bytes >= 1000, got {value!r:.60}")
    return value


def body_too_large(limit: int, announced: int | None = None) -> ProviderError:
    """The error of an answer whose body is longer than `limit` bytes (not retried: it would be again)."""
    size = f" ({announced:,} bytes)" if announced is not None else ""
    return ProviderError(
        f"the server's answer{size} is over max_response_bytes ({limit:,}): refused, not read further"
        " (raise the provider option max_response_bytes if such answers are expected)",
        retryable=False,
    )


def json_with_unique_keys(raw: bytes | str) -> Any:
    """`raw` parsed as JSON; a DuplicateKeyError if an object has a key twice (readers disagree on which
    one counts, so a server's answer with one is refused, not read one way)."""
    return loads_unique(raw, DuplicateKeyError)


def error_message(raw: bytes) -> str:
    """The message of an error body (``{"error": {"message": ...}}``, OpenAI's and Anthropic's shape), else the
    body's start."""
    try:
        return error_text(json.loads(raw)["error"])
    except (ValueError, KeyError, TypeError):
        return raw[:300].decode("utf-8", "replace") or "(empty body)"


def error_text(error: Any) -> str:
    """The message of an error object (its "message"), or the error itself when it is not an object."""
    return str(error["message"] if isinstance(error, dict) and "message" in error else error)[:500]


def escape_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate (not a character; not UTF-8) written as its escape ``\\udXXX``."""
    if not _LONE_SURROGATE.search(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class Request:
    """What to ask a model.

    `meta` carries the keys a recorded provider needs to find an answer
    (item_id, judge, template, order, repeat); live providers ignore it.
    `allowed` lists the verdict strings for constrained (log-probability)
    verdicts; providers that cannot score them ignore it.
    """

    messages: tuple[dict[str, str], ...]
    model: str
    temperature: float = 0.0
    max_tokens: int = 1024
    json_schema: dict[str, Any] | None = None
    allowed: tuple[str, ...] | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def cache_params(self) -> dict[str, Any]:
        """The parameters that change the answer (the cache key uses these)."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_schema": self.json_schema,
            "allowed": list(self.allowed) if self.allowed else None,
        }


@dataclass
class Response:
    text: str
    model: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    refused: bool = False
    refusal_reason: str | None = None
    distribution: dict[str, float] | None = None
    raw: dict[str, Any] | None = None
    truncated: bool = False  # the model stopped at max_tokens: the text is what it wrote until then

    def __post_init__(self) -> None:
        _check_answer_fields(self)
        # A model can send "\\ud800" escapes (half a UTF-16 pair) in its JSON; such text cannot be
        # stored or written as UTF-8. Each lone surrogate is kept visibly as its escape, "\\ud800".
        self.text = escape_lone_surrogates(self.text)
        if self.refusal_reason is not None:
            self.refusal_reason = escape_lone_surrogates(self.refusal_reason)


def _check_answer_fields(r: Response) -> None:
    """A TypeError naming the first field of the wrong type: a provider's answer is untrusted, and one
    that cannot become a judgment must fail its call (and stay out of the cache), not the run."""
    if not isinstance(r.text, str):
        raise TypeError(f"the answer's text is {type(r.text).__name__} {r.text!r:.60}, not a string")
    if not isinstance(r.model, str):
        raise TypeError(f"the answer's model is {type(r.model).__name__} {r.model!r:.60}, not a string")
    for name in ("tokens_in", "tokens_out"):
        count = getattr(r, name)
        if count is not None and (type(count) is not int or count < 0):
            raise TypeError(f"the answer's {name} is {type(count).__name__} {count!r:.60}, not a whole number >= 0")
        if count is not None and count > MAX_CALL_TOKENS:
            raise TypeError(
                f"the answer's {name} is {count:,}, more than any model uses in one call ({MAX_CALL_TOKENS:,}):"
                " refused before it is costed"
            )
    if r.refusal_reason is not None and not isinstance(r.refusal_reason, str):
        raise TypeError(
            f"the answer's refusal is {type(r.refusal_reason).__name__} {r.refusal_reason!r:.60}, not a string"
        )
    if r.distribution is not None and not isinstance(r.distribution, dict):
        raise TypeError(f"the answer's distribution is {type(r.distribution).__name__}, not an object")


class ProviderError(Fault):
    """A call that did not return an answer.

    `retryable` is true for rate limits (429), server errors (5xx) and time-outs;
    the engine retries those with backoff and records each attempt. `retry_after` is
    how many seconds the server asked the client to wait (its Retry-After), if it said.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        unreachable: bool = False,
    ):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        # No connection could be made (refused, no such host): the server was never reached, so the engine
        # stops a run that has reached it by no call at all after a few (see Engine.call).
        self.unreachable = unreachable
        self.attempts: int | None = None  # set by the engine: how many calls were made before giving up


class Unreachable(Fault):
    """A run's first calls to a server all failed to connect (refused, no such host): the run stops at once,
    naming the address, instead of retrying every call for minutes. Not a ProviderError: it ends the run, not
    one call; what was stored stays, and the same command resumes."""


class DuplicateKeyError(ProviderError, ValueError):
    """A server's JSON with a key twice in one object: readers disagree on which value counts, so none is read
    (not retried: the server would answer the same)."""


class ProviderClosed(Fault, RuntimeError):
    """A call on a provider whose connections were closed in this event loop: the run is shutting
    down. Not a failed call: the engine lets it through and stores nothing for it."""


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The wait a response asks for: ``retry-after-ms`` (milliseconds), else ``retry-after``
    (seconds, or an HTTP date: the seconds from now until then, at least 0). None if neither
    is there or readable. `headers` must look names up case-insensitively (httpx.Headers does).
    """
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        seconds: float | None
        try:
            seconds = float(value) / scale
        except ValueError:
            seconds = _seconds_until(value) if scale == 1.0 else None
        if seconds is not None and math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def _seconds_until(http_date: str) -> float | None:
    try:
        when = parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class Provider(ABC):
    """An async model provider: subclass it and implement `complete`.

    - `name` identifies it in the store and, by default, in the cache key.
    - `cache_identity` is what the cache key uses: the name unless set. The runner sets it to the
      name and a hash of the provider's options, so two configurations never share answers.
    - `cacheable` is False for a provider whose answers must not come from or go into the cache
      (replay: a recording is its own cache, and a request it lacks must stay an error).
    - `aclose()` closes the connections it holds; they belong to the event loop that used them, so
      it is awaited inside that loop before the loop ends. By default there is nothing to close.
    """

    name: str = ""
    cacheable: bool = True
    _cache_identity: str | None = None

    @property
    def cache_identity(self) -> str:
        return self._cache_identity or self.name

    @cache_identity.setter
    def cache_identity(self, value: str) -> None:
        self._cache_identity = value

    @classmethod
    def answers_as(cls, options: Mapping[str, Any], requested: str) -> str:
        """The model this provider, built with `options`, answers as when a judge asks for `requested`
        (what runs and previews show): the requested one, unless the provider answers as its own."""
        return requested

    def answering_model(self, requested: str) -> str:
        """The model this provider answers as when a judge asks for `requested` (what a run and its
        judgments record, failed calls too): :meth:`answers_as` for a provider already built."""
        return requested

    @abstractmethod
    async def complete(self, request: Request) -> Response: ...

    async def aclose(self) -> None:  # noqa: B027 - a default that does nothing, not an abstract method
        return None

    def batches(self) -> BatchAPI | None:
        """Its batch API (``[engine] mode = "batch"``), or None: by default a provider has none."""
        return None


class PluginProvider(Provider):
    """A plugin's provider that does not subclass `Provider` (the interface was a protocol of `name`
    and `complete` before): the members it lacks take Provider's defaults."""

    def __init__(self, plugin: Any):
        name = getattr(plugin, "name", None)
        if not isinstance(name, str) or not callable(getattr(plugin, "complete", None)):
            raise ValueError(
                f"{type(plugin).__name__} is not a provider: it needs a `name` (str) and an async `complete(request)`"
            )
        self.plugin = plugin
        self.name = name
        self.cacheable = bool(getattr(plugin, "cacheable", True))
        identity = getattr(plugin, "cache_identity", None)
        if isinstance(identity, str):
            self.cache_identity = identity

    async def complete(self, request: Request) -> Response:
        response: Response = await self.plugin.complete(request)
        return response

    async def aclose(self) -> None:
        close = getattr(self.plugin, "aclose", None)
        if close is not None:
            await close()

    def batches(self) -> BatchAPI | None:
        batches = getattr(self.plugin, "batches", None)
        return batches() if batches is not None else None


def as_provider(made: Any) -> Provider:
    """`made` as a Provider: itself if it subclasses Provider, else wrapped as a PluginProvider."""
    return made if isinstance(made, Provider) else PluginProvider(made)
