"""Anthropic Messages API (optional extra: `pip install juge[anthropic]`).

`max_response_bytes` bounds an answer's body as the OpenAI-compatible provider's does: the SDK's HTTP
client reads it through a counting stream that stops past the bound.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from juge.providers.base import (
    MAX_RESPONSE_BYTES,
    Provider,
    ProviderError,
    Request,
    Response,
    body_too_large,
    checked_max_response_bytes,
    retry_after_seconds,
)
from juge.providers.batch_api import BatchStatus


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
    ):
        limit = checked_max_response_bytes(max_response_bytes)
        try:
            import anthropic
        except ImportError:
            raise ProviderError("the anthropic provider needs: pip install 'juge[anthropic]'") from None
        self._sdk = anthropic
        base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        # A server of your own (ANTHROPIC_BASE_URL or base_url) may need no key.
        key = api_key or os.environ.get(api_key_env) or ("not-needed" if base_url else None)
        if key is None:
            raise ProviderError(f"no API key: set {api_key_env} (or give --base-url / ANTHROPIC_BASE_URL)")
        self.name = f"anthropic@{base_url}" if base_url else "anthropic"
        self.client = anthropic.AsyncAnthropic(
            api_key=key, base_url=base_url, max_retries=0, timeout=timeout, http_client=http_client
        )
        _bound_bodies(self.client._client, limit)

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
                retryable=status in (429, 529) or status >= 500,
                status=status,
                retry_after=retry_after_seconds(exc.response.headers),
            )
        return ProviderError(f"{type(exc).__name__}: {exc}")

    async def complete(self, request: Request) -> Response:
        params = _params(request)
        # Newer SDKs dropped the `temperature` argument; send it in the body for those.
        if "temperature" not in inspect.signature(self.client.messages.create).parameters:
            params["extra_body"] = {"temperature": params.pop("temperature")}
        try:
            message = await self.client.messages.create(**params)
        except self._sdk.AnthropicError as exc:
            raise self._error(exc) from exc
        return _message_response(message)

    def batches(self) -> AnthropicBatches:
        """The Message Batches API (``[engine] mode = "batch"``) over this provider's client."""
        return AnthropicBatches(self)

    async def aclose(self) -> None:
        """Close the HTTP connections; call it before the event loop that used them ends."""
        await self.client.close()


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
    text = "".join(block.text for block in message.content if getattr(block, "type", "") == "text")
    refused = message.stop_reason == "refusal"
    return Response(
        text=text,
        model=message.model,
        tokens_in=message.usage.input_tokens,
        tokens_out=message.usage.output_tokens,
        refused=refused,
        refusal_reason="refusal" if refused else None,
        truncated=message.stop_reason == "max_tokens",
        raw=message.model_dump(mode="json"),
    )


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
                requests=[{"custom_id": key, "params": _params(request)} for key, request in requests]  # type: ignore[typeddict-item]
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
                        out[line.custom_id] = _message_response(result.message)
                    except TypeError as exc:
                        out[line.custom_id] = ProviderError(f"the batch answer is not a message: {exc}")
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
