"""Anthropic Messages API (optional extra: `pip install juge[anthropic]`)."""

from __future__ import annotations

import inspect
import os
from typing import Any

from juge.providers.base import ProviderError, Request, Response, retry_after_seconds


class AnthropicProvider:
    name = "anthropic"

    def __init__(
        self,
        *,
        api_key_env: str = "ANTHROPIC_API_KEY",
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 120.0,
        http_client: Any = None,
    ):
        try:
            import anthropic
        except ImportError:
            raise ProviderError("the anthropic provider needs: pip install 'juge[anthropic]'") from None
        self._sdk = anthropic
        key = api_key or os.environ.get(api_key_env)
        if key is None:
            raise ProviderError(f"no API key: set {api_key_env}")
        self.name = f"anthropic@{base_url}" if base_url else "anthropic"
        self.client = anthropic.AsyncAnthropic(
            api_key=key, base_url=base_url, max_retries=0, timeout=timeout, http_client=http_client
        )

    def _error(self, exc: Exception) -> ProviderError:
        sdk = self._sdk
        if isinstance(exc, (sdk.APITimeoutError, sdk.APIConnectionError)):
            return ProviderError(f"{type(exc).__name__}: {exc}", retryable=True)
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
        system = "\n\n".join(m["content"] for m in request.messages if m["role"] == "system")
        messages = [m for m in request.messages if m["role"] != "system"]
        params: dict[str, Any] = {
            "model": request.model,
            "messages": messages,
            "max_tokens": request.max_tokens,
        }
        # Newer SDKs dropped the `temperature` argument; send it in the body for those.
        if "temperature" in inspect.signature(self.client.messages.create).parameters:
            params["temperature"] = request.temperature
        else:
            params["extra_body"] = {"temperature": request.temperature}
        if system:
            params["system"] = system
        try:
            message = await self.client.messages.create(**params)
        except self._sdk.AnthropicError as exc:
            raise self._error(exc) from exc
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

    async def aclose(self) -> None:
        """Close the HTTP connections; call it before the event loop that used them ends."""
        await self.client.close()
