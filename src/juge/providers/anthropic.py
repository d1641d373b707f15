"""Anthropic Messages API.

Calls go straight to ``POST {base_url}/v1/messages`` over the same HTTP clients as the OpenAI-compatible
provider (aiohttp, or pyreqwest with ``http = "pyreqwest"`` or ``JUGE_HTTP``: see `juge.providers.transport`),
with the same time limit (`timeout`, default 120 s), proxies from the environment, `max_response_bytes` bound,
keep-alive and TLS, and an answer read as strictly (a key twice, a field of the wrong type: a clear error, not
retried). The `anthropic` SDK (``pip install 'juge[anthropic]'``) is needed only for batch mode (Message
Batches) and when an SDK `http_client` is given (calls then go through the SDK; its body is bounded by a
counting stream).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from juge.fastjson import dump_bytes
from juge.providers.base import (
    MAX_RESPONSE_BYTES,
    DuplicateKeyError,
    Provider,
    ProviderError,
    Request,
    Response,
    body_too_large,
    checked_max_response_bytes,
    error_message,
    error_text,
    json_with_unique_keys,
    retry_after_seconds,
)
from juge.providers.batch_api import BatchStatus
from juge.providers.transport import env_proxy, http_client_name, make_transport

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"  # the Messages API's version header (the only one there is when this was written)


class AnthropicProvider(Provider):
    name = "anthropic"

    def __init__(
        self,
        *,
        api_key_env: str = "ANTHROPIC_API_KEY",
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 120.0,
        http_client: Any = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        http: str | None = None,
    ):
        self.max_response_bytes = checked_max_response_bytes(max_response_bytes)
        base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        # A server of your own (ANTHROPIC_BASE_URL or base_url) may need no key.
        key = api_key or os.environ.get(api_key_env) or ("not-needed" if base_url else None)
        if key is None:
            raise ProviderError(f"no API key: set {api_key_env} (or give --base-url / ANTHROPIC_BASE_URL)")
        self.name = f"anthropic@{base_url}" if base_url else "anthropic"
        self.base_url = (base_url or ANTHROPIC_BASE_URL).rstrip("/")
        self.url = self.base_url + "/v1/messages"
        self.headers = {
            "x-api-key": key,
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "application/json",
        }
        self.timeout = timeout
        self._key, self._http_client = key, http_client
        self._client: Any = None
        self._sdk_module: Any = None
        if http_client is not None:
            self.client  # noqa: B018 - an SDK client given: calls go through the SDK, which must be there
        self.transport = make_transport(
            http_client_name(http),
            timeout=timeout,
            max_response_bytes=self.max_response_bytes,
            proxy=env_proxy(self.url),
            owner=self.name,
        )

    @property
    def _sdk(self) -> Any:
        if self._sdk_module is None:
            try:
                self._sdk_module = importlib.import_module("anthropic")
            except ImportError:
                raise ProviderError(
                    "the anthropic provider's batch mode (and an SDK http_client) needs: pip install 'juge[anthropic]'"
                ) from None
        return self._sdk_module

    @property
    def client(self) -> Any:
        """The SDK's client (batch mode, or calls through a given `http_client`), made at first use."""
        if self._client is None:
            self._client = self._sdk.AsyncAnthropic(
                api_key=self._key,
                base_url=None if self.base_url == ANTHROPIC_BASE_URL else self.base_url,
                max_retries=0,
                timeout=self.timeout,
                http_client=self._http_client,
            )
            _bound_bodies(self._client._client, self.max_response_bytes)
        return self._client

    def _error(self, exc: Exception) -> ProviderError:
        sdk = self._sdk
        if isinstance(exc.__cause__, ProviderError):  # the body bound, raised inside the SDK's client
            return exc.__cause__
        if isinstance(exc, (sdk.APITimeoutError, sdk.APIConnectionError)):
            # httpx's ConnectError under the SDK's: no connection was made (refused, no such host)
            unreachable = not isinstance(exc, sdk.APITimeoutError) and type(exc.__cause__).__name__ == "ConnectError"
            return ProviderError(f"{type(exc).__name__}: {exc}", retryable=True, unreachable=unreachable)
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            return ProviderError(
                f"HTTP {status}: {exc.message}",
                retryable=_retryable_status(status),
                status=status,
                retry_after=retry_after_seconds(exc.response.headers),
            )
        return ProviderError(f"{type(exc).__name__}: {exc}")

    async def complete(self, request: Request) -> Response:
        if self._http_client is not None:
            return await self._complete_sdk(request)
        status, headers, raw = await self.transport.post(self.url, dump_bytes(_params(request)), self.headers)
        if status >= 400:
            raise ProviderError(
                f"HTTP {status}: {error_message(raw)}",
                retryable=_retryable_status(status),
                status=status,
                retry_after=retry_after_seconds(headers),
            )
        try:
            message = json_with_unique_keys(raw)
        except DuplicateKeyError as exc:  # which of the two values counts is up to the reader: neither does
            raise _malformed(str(exc)) from None
        except ValueError as exc:  # a 200 whose body is cut or garbled: worth another try
            raise ProviderError(f"the server's answer was not valid JSON: {exc}", retryable=True) from exc
        if isinstance(message, dict) and message.get("type") == "error":  # an overload reported in a 200
            raise ProviderError(f"HTTP {status} with an error: {error_text(message.get('error'))}", retryable=True)
        return _message_response(message)

    async def _complete_sdk(self, request: Request) -> Response:
        params = _params(request)
        # Newer SDKs dropped the `temperature` argument; send it in the body for those.
        if "temperature" not in inspect.signature(self.client.messages.create).parameters:
            params["extra_body"] = {"temperature": params.pop("temperature")}
        try:
            message = await self.client.messages.create(**params)
        except self._sdk.AnthropicError as exc:
            raise self._error(exc) from exc
        return _message_response(message.model_dump(mode="json"))

    def batches(self) -> AnthropicBatches:
        """The Message Batches API (``[engine] mode = "batch"``) over this provider's SDK client."""
        return AnthropicBatches(self)

    @property
    def closed(self) -> bool:
        """No HTTP connections are open (none made yet, or closed by `aclose`)."""
        return self.transport.closed and (self._client is None or bool(self._client.is_closed()))

    async def aclose(self) -> None:
        """Close the HTTP connections; call it before the event loop that used them ends."""
        await self.transport.aclose()
        if self._client is not None:
            await self._client.close()


def _retryable_status(status: int) -> bool:
    """A rate limit (429), an overload (529) or another server error: worth another try."""
    return status == 429 or status >= 500


def _bound_bodies(http: Any, limit: int) -> None:
    """Make the SDK's HTTP client (httpx, or the httpx2 of newer SDKs) refuse a body past `limit` bytes as it
    reads it: each response's stream is wrapped, before the client reads it, in one that counts."""
    # The HTTP library is the one the client's class comes from (the SDK wraps it in classes of its own).
    library = next(
        module
        for module in (importlib.import_module(c.__module__.split(".", 1)[0]) for c in type(http).__mro__)
        if hasattr(module, "AsyncByteStream")
    )

    class Bounded(library.AsyncByteStream):  # type: ignore[name-defined]
        def __init__(self, stream: Any):
            self.stream = stream

        async def __aiter__(self) -> Any:
            read = 0
            async for chunk in self.stream:
                read += len(chunk)
                if read > limit:
                    raise body_too_large(limit)
                yield chunk

        async def aclose(self) -> None:
            await self.stream.aclose()

    async def bound(response: Any) -> None:
        length = response.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            raise body_too_large(limit, int(length))
        response.stream = Bounded(response.stream)

    hooks = http.event_hooks
    hooks["response"] = [*hooks.get("response", []), bound]
    http.event_hooks = hooks


def _params(request: Request) -> dict[str, Any]:
    """The Messages API parameters of a request: system turns go to `system`."""
    system = "\n\n".join(m["content"] for m in request.messages if m["role"] == "system")
    params: dict[str, Any] = {
        "model": request.model,
        "messages": [m for m in request.messages if m["role"] != "system"],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    if system:
        params["system"] = system
    return params


def _message_response(message: Any) -> Response:
    """The Response in a Messages API body (a dict); a body of another shape is a non-retryable ProviderError."""
    if not isinstance(message, dict):
        raise _malformed(f"the body is {_kind(message)}, not an object")
    content = message.get("content")
    if not isinstance(content, list):
        raise _malformed(f"'content' is {_kind(content)}, not a list")
    texts = []
    for i, block in enumerate(content):
        if not isinstance(block, dict):
            raise _malformed(f"content block {i} is {_kind(block)}, not an object")
        if block.get("type") == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise _malformed(f"content block {i}'s text is {_kind(text)}, not a string")
            texts.append(text)
    usage = message.get("usage") or {}
    if not isinstance(usage, dict):
        raise _malformed(f"'usage' is {_kind(usage)}, not an object")
    stop = message.get("stop_reason")
    refused = stop == "refusal"
    try:
        return Response(
            text="".join(texts),
            model=message.get("model"),  # type: ignore[arg-type]  # checked by Response
            tokens_in=usage.get("input_tokens"),
            tokens_out=usage.get("output_tokens"),
            refused=refused,
            refusal_reason="refusal" if refused else None,
            truncated=stop == "max_tokens",
            raw=message,
        )
    except TypeError as exc:  # a field of the wrong type (a model that is a number, a token count in a string)
        raise _malformed(str(exc)) from None


def _malformed(detail: str) -> ProviderError:
    return ProviderError(f"the server's answer is not a message: {detail}", retryable=False)


def _kind(value: Any) -> str:
    return f"{type(value).__name__} {value!r:.60}"


class AnthropicBatches:
    """Message Batches: ``POST /v1/messages/batches``, poll it, stream its results (JSONL)."""

    max_requests = 100_000
    max_bytes = 250_000_000  # Anthropic takes batches up to 256 MB

    def __init__(self, provider: AnthropicProvider):
        self.provider = provider
        self.batches = provider.client.messages.batches

    def line_size(self, key: str, request: Request) -> int:
        return len(json.dumps({"custom_id": key, "params": _params(request)}, ensure_ascii=False).encode())

    async def submit(self, requests: Sequence[tuple[str, Request]]) -> str:
        try:
            batch = await self.batches.create(
                requests=[{"custom_id": key, "params": _params(request)} for key, request in requests]
            )
        except self.provider._sdk.AnthropicError as exc:
            raise self.provider._error(exc) from exc
        return batch.id

    async def status(self, batch_id: str) -> BatchStatus:
        try:
            batch = await self.batches.retrieve(batch_id)
        except self.provider._sdk.AnthropicError as exc:
            raise self.provider._error(exc) from exc
        return BatchStatus(
            id=batch_id,
            state=batch.processing_status,
            ended=batch.processing_status == "ended",
            counts=batch.request_counts.model_dump(),
            detail={"expires_at": str(batch.expires_at), "ended_at": str(batch.ended_at)},
        )

    async def results(self, status: BatchStatus, models: Mapping[str, str]) -> dict[str, Response | ProviderError]:
        out: dict[str, Response | ProviderError] = {}
        try:
            async for line in await self.batches.results(status.id):
                result = line.result
                if result.type == "succeeded":
                    try:
                        out[line.custom_id] = _message_response(result.message.model_dump(mode="json"))
                    except ProviderError as exc:
                        out[line.custom_id] = exc
                elif result.type == "errored":
                    error = result.error.error
                    out[line.custom_id] = ProviderError(f"batch request failed: {error.type}: {error.message}")
                else:  # expired or canceled: never answered
                    out[line.custom_id] = ProviderError(
                        f"batch request {result.type}: the batch ended before it was answered"
                    )
        except self.provider._sdk.AnthropicError as exc:
            raise self.provider._error(exc) from exc
        return out

    async def aclose(self) -> None:
        """The provider's client is closed with the provider."""
