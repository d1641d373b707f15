"""OpenAI-compatible chat completions (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp server, TGI).

Point `base_url` at the server; the key is read from the environment variable
named by `api_key_env` (default OPENAI_API_KEY). The SDK's own retries are off:
the engine retries with backoff and records every attempt.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
import openai

from juge.providers.base import ProviderError, Request, Response, retry_after_seconds


def _error(exc: Exception) -> ProviderError:
    if isinstance(exc, openai.APITimeoutError):
        return ProviderError(f"timeout: {exc}", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return ProviderError(f"connection failed: {_root_cause(exc)}", retryable=True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        return ProviderError(f"HTTP {status}: {exc.message}", retryable=status == 429 or status >= 500, status=status,
                             retry_after=retry_after_seconds(exc.response.headers))
    return ProviderError(f"{type(exc).__name__}: {exc}")


def _root_cause(exc: BaseException) -> str:
    """The innermost cause that says something ("Connection reset by peer", "peer closed connection
    without sending complete message body"), not the SDK's generic "Connection error."."""
    text, seen = str(exc), {id(exc)}
    cause = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        text = str(cause) or text
        cause = cause.__cause__ or cause.__context__
    return text


class OpenAICompatProvider:
    name = "openai"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        api_key: str | None = None,
        timeout: float = 120.0,
        http_client: httpx.AsyncClient | None = None,
    ):
        key = api_key or os.environ.get(api_key_env) or ("not-needed" if base_url else None)
        if key is None:
            raise ProviderError(f"no API key: set {api_key_env} (or give base_url for a local server)")
        # The endpoint is part of the provider's identity: it goes into the cache key and the call log.
        self.name = f"openai@{base_url}" if base_url else "openai"
        self.client = openai.AsyncOpenAI(
            base_url=base_url, api_key=key, max_retries=0, timeout=timeout, http_client=http_client
        )

    async def complete(self, request: Request) -> Response:
        params: dict[str, Any] = {
            "model": request.model,
            "messages": list(request.messages),
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.json_schema is not None:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "schema": request.json_schema, "strict": True},
            }
        try:
            completion = await self.client.chat.completions.create(**params)
        except openai.OpenAIError as exc:
            raise _error(exc) from exc
        except json.JSONDecodeError as exc:  # a 200 whose body is cut or garbled: worth another try
            raise ProviderError(f"the server's answer was not valid JSON: {exc}", retryable=True) from exc
        if not completion.choices:
            raise ProviderError(f"the server returned no choices (model {completion.model or request.model})")
        choice = completion.choices[0]
        message = choice.message
        refusal = getattr(message, "refusal", None)
        refused = bool(refusal) or choice.finish_reason == "content_filter"
        usage = completion.usage
        return Response(
            text=message.content or "",
            model=completion.model or request.model,
            tokens_in=usage.prompt_tokens if usage else None,
            tokens_out=usage.completion_tokens if usage else None,
            refused=refused,
            refusal_reason=refusal or ("content filter" if choice.finish_reason == "content_filter" else None),
            raw=completion.model_dump(mode="json"),
        )

    async def aclose(self) -> None:
        """Close the HTTP connections; call it before the event loop that used them ends."""
        await self.client.close()
