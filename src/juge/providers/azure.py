"""Azure OpenAI (`provider = "azure"`): chat completions on a deployment of an Azure OpenAI resource.

A call is ``POST {endpoint}/openai/deployments/{deployment}/chat/completions?api-version={api_version}``
with the resource's key in the ``api-key`` header, or a Microsoft Entra ID token as ``Authorization:
Bearer``. The endpoint is ``https://{resource}.openai.azure.com`` (or `endpoint`, else
``AZURE_OPENAI_ENDPOINT``); the deployment is `deployment`, else the judge's model (a deployment named
after its model); the API version is `api_version` (``api-version`` in a judge file), else
``OPENAI_API_VERSION``, else :data:`API_VERSION`. The key is read from `api_key_env` (default
``AZURE_OPENAI_API_KEY``); without one, the token from `token_env` (default ``AZURE_OPENAI_AD_TOKEN``).
juge fetches no token itself: put one there (the Azure CLI's ``az account get-access-token`` for the
resource ``https://cognitiveservices.azure.com``).

Everything else (the request body, the answer, errors, retries, proxies) is the OpenAI-compatible
provider's. Batch mode goes through Azure's batch API (a Global Batch deployment: `batch_deployment`,
else the deployment), the OpenAI Batch API under ``/openai`` with the same ``api-version``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from juge.providers.base import MAX_RESPONSE_BYTES, ProviderError, Request
from juge.providers.openai_batches import OpenAIBatches
from juge.providers.openai_compat import OpenAICompatProvider, _is_loopback, _payload, _response

API_VERSION = "2024-10-21"  # the data-plane inference API's GA version when this was written


class AzureOpenAIProvider(OpenAICompatProvider):
    """Azure OpenAI chat completions (see the module's docstring)."""

    def __init__(
        self,
        *,
        resource: str | None = None,
        endpoint: str | None = None,
        deployment: str | None = None,
        batch_deployment: str | None = None,
        api_version: str | None = None,
        api_key_env: str = "AZURE_OPENAI_API_KEY",
        api_key: str | None = None,
        token_env: str = "AZURE_OPENAI_AD_TOKEN",
        timeout: float | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        http: str | None = None,
    ):
        root = _endpoint(resource, endpoint)
        key = api_key or os.environ.get(api_key_env)
        token = None if key else os.environ.get(token_env)
        if not key and not token:
            raise ProviderError(
                f"no Azure credential: set {api_key_env} (the resource's key, sent as api-key) or {token_env} "
                "(a Microsoft Entra ID token, sent as Authorization: Bearer)"
            )
        self.deployment = deployment
        self.batch_deployment = batch_deployment or deployment
        self.api_version = api_version or os.environ.get("OPENAI_API_VERSION") or API_VERSION
        # The endpoint and deployment are the provider's identity (cache key, call log); the credential is not.
        self.name = f"azure@{root}" + (f"/{deployment}" if deployment else "")
        headers = {"api-key": key} if key else {"authorization": f"Bearer {token}"}
        url = f"{root}/openai/deployments/{quote(deployment or '', safe='')}/chat/completions"
        self._connect(
            root,
            url,
            headers,
            timeout=timeout,
            http_client=http_client,
            max_response_bytes=max_response_bytes,
            http=http,
        )

    def url_for(self, request: Request) -> str:
        deployment = self.deployment or request.model
        path = f"{self.root}/openai/deployments/{quote(deployment, safe='')}/chat/completions"
        return f"{path}?api-version={quote(self.api_version, safe='')}"

    def batches(self) -> OpenAIBatches:
        """The resource's batch API (``[engine] mode = "batch"``): requests name the batch deployment."""
        batch_deployment = self.batch_deployment

        def payload(request: Request) -> dict[str, Any]:
            model = batch_deployment or request.model
            return _payload(dataclasses.replace(request, model=model))

        return OpenAIBatches(
            self.root + "/openai",
            self.headers,
            trust_env=not _is_loopback(urlsplit(self.root).hostname or ""),
            payload=payload,
            response=_response,
            query={"api-version": self.api_version},
            endpoint="/chat/completions",
        )


def _endpoint(resource: str | None, endpoint: str | None) -> str:
    """The resource's root URL: `endpoint` (or AZURE_OPENAI_ENDPOINT), else the one `resource` names."""
    if resource and endpoint:
        raise ValueError("give resource or endpoint, not both")
    if resource:
        if not resource.replace("-", "").isalnum():
            raise ValueError(f"resource {resource!r}: give the resource's name (letters, digits, '-'), or an endpoint")
        return f"https://{resource}.openai.azure.com"
    endpoint = endpoint or os.environ.get("AZURE_OPENAI_ENDPOINT")
    if not endpoint:
        raise ValueError("no Azure endpoint: give resource or endpoint (or set AZURE_OPENAI_ENDPOINT)")
    if not endpoint.startswith(("https://", "http://")):
        raise ValueError(f"endpoint {endpoint!r}: give an https:// address")
    return endpoint.rstrip("/").removesuffix("/openai")


def azure_provider(**options: Any) -> AzureOpenAIProvider:
    """The `azure` provider; a judge file may spell its options as Azure does (``api-version``)."""
    return AzureOpenAIProvider(**_underscored(options))


def _underscored(options: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in options.items():
        key = name.replace("-", "_")
        if key in out:
            raise ValueError(f"option {key!r} is given twice ({name!r})")
        out[key] = value
    return out
