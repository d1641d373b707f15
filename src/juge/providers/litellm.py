"""LiteLLM (`provider = "litellm"`, optional extra: `pip install 'juge[litellm]'`): the long tail of model APIs.

The judge's `model` is LiteLLM's model string, which names the API: ``bedrock/anthropic.claude-3-5-haiku-...``,
``vertex_ai/gemini-2.5-flash``, ``mistral/mistral-large-latest``, ``cohere/command-r``, ``openai/NAME`` with
`api_base` for any OpenAI-compatible server. Credentials are LiteLLM's own (``AWS_*`` for Bedrock, Google's
application default credentials for Vertex, ``MISTRAL_API_KEY``, ...); `api_key_env` names a variable to send as
the key instead, `options` any further keyword LiteLLM's ``acompletion`` takes (``aws_region_name``,
``vertex_project``, ...). LiteLLM's own retries are off (juge's engine retries), and it reads its price map from
its package, not the network.

LiteLLM costs more CPU per call than the built-in providers (bench/litellm_overhead.py, figure in
bench/RESULTS.md): use `openai`, `azure` or `anthropic` where they reach the model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from juge.providers.base import Provider, ProviderError, Request, Response, retry_after_seconds
from juge.providers.openai_compat import _payload, _response

_RETRYABLE = {408, 409, 429, 500, 502, 503, 504, 529}


class LiteLLMProvider(Provider):
    """Chat completions through ``litellm.acompletion`` (see the module's docstring)."""

    def __init__(
        self,
        *,
        api_base: str | None = None,
        api_key_env: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        options: Mapping[str, Any] | None = None,
    ):
        # Before the import: LiteLLM otherwise fetches its model price map from GitHub when imported.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import litellm
        except ImportError:
            raise ProviderError("the litellm provider needs: pip install 'juge[litellm]'") from None
        litellm.suppress_debug_info = True  # it prints hints on errors otherwise; juge's library never prints
        self._litellm = litellm
        key = api_key or (os.environ.get(api_key_env) if api_key_env else None)
        if api_key_env and not key:
            raise ProviderError(f"no API key: set {api_key_env} (or leave api_key_env out to use LiteLLM's own)")
        self.api_base = api_base
        self.options = dict(options or {})
        for reserved in ("model", "messages", "api_key", "num_retries"):
            if reserved in self.options:
                raise ProviderError(f"options.{reserved}: juge sets it (give the judge's model, or api_key_env)")
        self._key = key
        self.timeout = timeout
        self.name = "litellm" + (f"@{api_base}" if api_base else "")

    async def complete(self, request: Request) -> Response:
        params = {**_payload(request), **self.options, "num_retries": 0, "timeout": self.timeout}
        if self.api_base:
            params["api_base"] = self.api_base
        if self._key:
            params["api_key"] = self._key
        try:
            answer = await self._litellm.acompletion(**params)
        except Exception as exc:  # LiteLLM maps every API's errors onto OpenAI's classes, with a status
            raise _error(exc) from exc
        return _response(answer.model_dump(mode="json"), request.model)


def _error(exc: Exception) -> ProviderError:
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    name = type(exc).__name__
    timeout_or_connection = name in ("Timeout", "APIConnectionError", "ServiceUnavailableError")
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return ProviderError(
        f"{name}: {exc}" if status is None else f"HTTP {status}: {exc}",
        retryable=timeout_or_connection or status in _RETRYABLE,
        status=status,
        retry_after=retry_after_seconds(headers) if headers is not None else None,
    )
